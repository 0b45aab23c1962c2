"""The guest kernel's own page tables, read from a gem5 checkpoint's memory,
for the mappings that no fixed offset gives: above all vmemmap, where the
struct pages live.

gem5's packets carry physical addresses; hotline's attribution names data by
kernel virtual address (struct page fields by their offset from vmemmap).
The kernel image and the direct map are fixed offsets (physical_map.py), but
vmemmap's backing pages are allocated at boot, wherever the allocator put
them.  The kernel's top-level table (init_top_pgt, at a known physical
address in a non-relocatable kernel) maps them, and the checkpoint holds the
whole physical memory, so walking that table at the checkpoint gives each
backing frame's virtual address.  vmemmap does not change after boot (no
memory hotplug here); mappings made after the checkpoint (vmalloc'd stacks
of new processes) are not seen, and their data keeps its direct-map name.

x86-64 4-level paging (the kernel boots with no5lvl): 512 eight-byte entries
a table, bit 0 present, bit 7 (PS) a 1 GiB (PUD) or 2 MiB (PMD) page, bits
51:12 the next table's or the page's physical address.
"""

from collections.abc import Callable
from dataclasses import dataclass

PRESENT = 1 << 0
PAGE_SIZE_BIT = 1 << 7
ADDRESS_MASK = 0x000F_FFFF_FFFF_F000
# Level shifts, top (PGD, 512 GiB an entry) to bottom (PTE, 4 KiB).
SHIFTS = (39, 30, 21, 12)
CANONICAL_HIGH = 0xFFFF_0000_0000_0000


@dataclass(frozen=True)
class Mapping:
    vaddr: int
    paddr: int
    size: int


def _canonical(vaddr: int) -> int:
    return vaddr | CANONICAL_HIGH if vaddr & (1 << 47) else vaddr


def walk(read_u64: Callable[[int], int], top_table: int, start: int, end: int) -> list[Mapping]:
    """The present mappings of virtual [start, end) under the 4-level table at
    physical address top_table, merged where both sides are contiguous.
    read_u64(paddr) reads one little-endian 64-bit word of guest memory."""
    found: list[Mapping] = []

    def visit(table: int, level: int, base: int) -> None:
        shift = SHIFTS[level]
        span = 1 << shift
        first = max(0, (start - base) >> shift) if start > base else 0
        for index in range(first, 512):
            vaddr = base + index * span
            if vaddr >= end:
                break
            if vaddr + span <= start:
                continue
            entry = read_u64(table + 8 * index)
            if not entry & PRESENT:
                continue
            if level == len(SHIFTS) - 1 or (level > 0 and entry & PAGE_SIZE_BIT):
                paddr = entry & ADDRESS_MASK & ~(span - 1)
                found.append(Mapping(_canonical(vaddr), paddr, span))
            else:
                visit(entry & ADDRESS_MASK, level + 1, vaddr)

    # Index arithmetic on the 48-bit address; results are made canonical.
    start &= (1 << 48) - 1
    end = min(end & ((1 << 48) - 1) or (1 << 48), 1 << 48)
    visit(top_table, 0, 0)
    return merge(found)


def merge(mappings: list[Mapping]) -> list[Mapping]:
    merged: list[Mapping] = []
    for m in sorted(mappings, key=lambda m: m.vaddr):
        last = merged[-1] if merged else None
        if last and last.vaddr + last.size == m.vaddr and last.paddr + last.size == m.paddr:
            merged[-1] = Mapping(last.vaddr, last.paddr, last.size + m.size)
        else:
            merged.append(m)
    return merged
