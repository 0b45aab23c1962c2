"""Guest physical addresses (what gem5's packet traces hold) back to the
kernel virtual addresses that hotline's attribution understands.

Two mappings are known without the guest's page tables:
- the kernel image: gem5 loads vmlinux's PT_LOAD segments at their physical
  addresses (p_paddr), and a non-relocatable kernel runs where it was
  linked, so a physical address inside a segment maps to the same offset in
  its p_vaddr (read from the ELF, not assumed).  The zero-based per-CPU
  segment is skipped: the per-CPU areas the kernel uses are copies elsewhere.
- the direct map: every other RAM address p is also mapped at
  page_offset_base + p (page_offset_base from the kernel's layout.json).

A third comes from the guest's own page tables, read from the run's
checkpoint (checkpoint.py, page_tables.py): vmemmap, where the struct pages
live, in frames the kernel allocated at boot.

What cannot be mapped: an address is given its kernel-image alias if it has
one, its vmemmap alias if it has one, and its direct-map alias otherwise, so
data the kernel reaches through other mappings shows up under the direct
map: vmalloc'd memory and stacks, per-CPU areas, and user memory (given as
0 when the instruction is in user space).
"""

import json
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile

from hotline.errors import HotlineError
from hotline.inputs import read_text

KERNEL_SPACE = 0xFFFF800000000000
USER_SPACE_END = 0x0000800000000000
KERNEL_IMAGE = 0xFFFFFFFF80000000


@dataclass(frozen=True)
class Segment:
    paddr: int
    vaddr: int
    size: int


@dataclass(frozen=True)
class PhysicalMap:
    segments: tuple[Segment, ...]        # the kernel image
    page_offset_base: int
    vmemmap: tuple[Segment, ...] = ()    # from the guest's page tables
    vmemmap_base: int | None = None
    struct_page_size: int = 64

    def virtual(self, paddr: int) -> int:
        for s in self.segments + self.vmemmap:
            if s.paddr <= paddr < s.paddr + s.size:
                return s.vaddr + (paddr - s.paddr)
        return self.page_offset_base + paddr

    def in_vmemmap(self, vaddr: int) -> bool:
        return self.vmemmap_base is not None and 0 <= vaddr - self.vmemmap_base < 1 << 40


def kernel_segments(vmlinux: Path) -> tuple[Segment, ...]:
    with open(vmlinux, "rb") as f:
        elf = ELFFile(f)
        return tuple(Segment(seg["p_paddr"], seg["p_vaddr"], seg["p_memsz"])
                     for seg in elf.iter_segments()
                     if seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] >= KERNEL_SPACE)


def load(kernel_dir: Path, vmemmap: tuple[Segment, ...] = ()) -> PhysicalMap:
    """The map for a kernel, with vmemmap's frames if they are known."""
    layout_path = kernel_dir / "layout.json"
    try:
        layout = json.loads(read_text(layout_path))
        page_offset_base = int(layout["symbols"]["page_offset_base"], 16)
        vmemmap_base = int(layout["symbols"]["vmemmap_base"], 16)
        struct_page_size = int(layout["sizeof"])
    except (OSError, KeyError, ValueError) as e:
        raise HotlineError(f"{layout_path}: no page_offset_base, vmemmap_base or sizeof "
                           f"({e}); rebuild the kernel") from None
    return PhysicalMap(kernel_segments(kernel_dir / "vmlinux"), page_offset_base,
                       tuple(vmemmap), vmemmap_base, struct_page_size)


def data_key(kind: str, pc: int, vaddr: int, physical: PhysicalMap, line_bytes: int = 64) -> int:
    """The data key of a miss on kernel virtual address vaddr, as the QEMU
    plugin forms it: 0 for fetches and user space; a struct page's byte as
    the same byte of pfn 0's struct page; a kernel image address exactly;
    any other kernel address as its line."""
    if kind == "fetch" or pc < USER_SPACE_END:
        return 0
    if physical.in_vmemmap(vaddr):
        return physical.vmemmap_base + (vaddr - physical.vmemmap_base) % \
            physical.struct_page_size
    if vaddr >= KERNEL_IMAGE:
        return vaddr
    return vaddr - vaddr % line_bytes
