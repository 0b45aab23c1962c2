"""What hotline reads from a gem5 checkpoint: the guest's physical memory at
the region of interest's start, and from it where vmemmap lives (the frames
that back the struct pages; page_tables.py).

Format (gem5 v24.0: src/sim/serialize.cc, src/mem/physical.cc): m5.cpt is
an INI file, one section per serialized object; the system's physical memory
is section board.physmem (nbr_of_stores) with one subsection per backing
store, board.physmem.storeN (filename, range_size), whose bytes are the
gzip'd file of that name beside m5.cpt.  X86Board with at most 3 GiB of
memory (hotline's limit) has one store, from physical address 0.
"""

import configparser
import gzip
import struct
from pathlib import Path

from hotline.errors import HotlineError
from hotline.simulate.gem5.page_tables import Mapping, walk
from hotline.simulate.gem5.physical_map import kernel_segments

CPT = "m5.cpt"
PHYSMEM = "board.physmem"
# Struct pages of a 4-level x86-64 kernel: vmemmap_base plus at most 1 TiB.
VMEMMAP_SPAN = 1 << 40


def read_cpt(directory: Path) -> configparser.ConfigParser:
    cpt = configparser.ConfigParser(interpolation=None, strict=False)
    cpt.optionxform = str
    path = directory / CPT
    try:
        with open(path) as f:
            cpt.read_file(f)
    except (OSError, configparser.Error) as e:
        raise HotlineError(f"{path}: not a readable gem5 checkpoint ({e}); delete "
                           f"{directory} and the run will boot again") from None
    return cpt


def memory_image(directory: Path) -> bytes:
    """The guest's physical memory from address 0."""
    cpt = read_cpt(directory)
    try:
        stores = int(cpt[PHYSMEM]["nbr_of_stores"])
        store = cpt[f"{PHYSMEM}.store0"]
        path, size = directory / store["filename"], int(store["range_size"])
    except (KeyError, ValueError) as e:
        raise HotlineError(f"{directory / CPT}: no physical memory store ({e})") from None
    if stores != 1:
        raise HotlineError(f"{directory / CPT}: {stores} memory stores; hotline reads "
                           "checkpoints of one (X86Board with at most 3 GiB)")
    with gzip.open(path) as f:
        image = f.read()
    if len(image) != size:
        raise HotlineError(f"{path}: {len(image)} bytes, the checkpoint says {size}")
    return image


def symbol_paddr(vmlinux: Path, vaddr: int) -> int:
    """A kernel image address's physical address, by the ELF's segments."""
    for s in kernel_segments(vmlinux):
        if s.vaddr <= vaddr < s.vaddr + s.size:
            return s.paddr + (vaddr - s.vaddr)
    raise HotlineError(f"{vmlinux}: {vaddr:#x} is in no loaded segment")


def vmemmap_mappings(directory: Path, top_table: int, vmemmap_base: int) -> list[Mapping]:
    """Where vmemmap's pages are in physical memory, read from the kernel's
    top-level page table (physical address top_table) in the checkpoint."""
    image = memory_image(directory)

    def read_u64(paddr: int) -> int:
        if paddr + 8 > len(image):
            return 0     # a table outside memory: nothing present there
        return struct.unpack_from("<Q", image, paddr)[0]

    return walk(read_u64, top_table, vmemmap_base, vmemmap_base + VMEMMAP_SPAN)
