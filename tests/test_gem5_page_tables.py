"""The page-table walk that names vmemmap's backing frames on gem5, on page
tables built here by hand: the expected mappings are written down from the
entries placed, not computed by the walker's arithmetic."""

import struct

from hotline.simulate.gem5.page_tables import Mapping, walk

P, PS, NX = 1, 1 << 7, 1 << 63
VMEMMAP = 0xFFFF_EA00_0000_0000       # PGD index 468, PUD 0, PMD 0
MiB, GiB = 1 << 20, 1 << 30


def memory(tables: dict[int, dict[int, int]]):
    """read_u64 over tables {physical address: {index: entry}}; all else 0."""
    words = {base + 8 * i: entry for base, entries in tables.items()
             for i, entry in entries.items()}
    return lambda paddr: words.get(paddr, 0)


TABLES = {
    0x1000: {468: 0x2000 | P, 469: 0x9000 | P | NX},       # PGD
    0x2000: {0: 0x3000 | P, 1: 0x8000_0000 | P | PS},      # PUD: a PMD table; a 1 GiB page
    0x3000: {0: 0x4000_0000 | P | PS,                      # PMD: 2 MiB pages ...
             1: 0x4020_0000 | P | PS | NX,                 # ... physically contiguous
             2: 0x5000_0000 | PS,                          # not present
             3: 0x1000_0000 | P | PS,
             4: 0x4000 | P},                               # a page table
    0x4000: {0: 0x5000 | P, 1: 0x7000 | P, 2: 0x8000 | P}, # PTEs: 4 KiB pages
    0x9000: {},                                            # PGD 469: an empty PUD table
}


def test_walk_finds_every_page_size_and_merges_contiguous_runs():
    found = walk(memory(TABLES), 0x1000, VMEMMAP, VMEMMAP + 1024 * GiB)
    assert found == [
        Mapping(VMEMMAP, 0x4000_0000, 4 * MiB),                 # PMD 0 and 1, merged
        Mapping(VMEMMAP + 6 * MiB, 0x1000_0000, 2 * MiB),       # PMD 3
        Mapping(VMEMMAP + 8 * MiB, 0x5000, 4096),               # PTE 0
        Mapping(VMEMMAP + 8 * MiB + 4096, 0x7000, 8192),        # PTE 1 and 2, merged
        Mapping(VMEMMAP + GiB, 0x8000_0000, GiB),               # PUD 1
    ]


def test_walk_keeps_to_the_range_asked_for():
    found = walk(memory(TABLES), 0x1000, VMEMMAP + 6 * MiB, VMEMMAP + 8 * MiB + 4096)
    assert found == [Mapping(VMEMMAP + 6 * MiB, 0x1000_0000, 2 * MiB),
                     Mapping(VMEMMAP + 8 * MiB, 0x5000, 4096)]


def test_walk_reads_little_endian_words_of_a_memory_image():
    image = bytearray(0x5000)
    for base, entries in TABLES.items():
        for i, entry in entries.items():
            if base + 8 * i + 8 <= len(image):
                struct.pack_into("<Q", image, base + 8 * i, entry)
    read = lambda paddr: struct.unpack_from("<Q", image, paddr)[0]  # noqa: E731
    assert walk(read, 0x1000, VMEMMAP, VMEMMAP + 2 * MiB) == [
        Mapping(VMEMMAP, 0x4000_0000, 2 * MiB)]


def test_vmemmap_mappings_from_a_checkpoint_directory(tmp_path):
    """A checkpoint laid out as gem5 v24 writes one (m5.cpt, the gzip'd
    store beside it), holding TABLES in its memory."""
    import gzip

    from hotline.simulate.gem5.checkpoint import vmemmap_mappings
    image = bytearray(64 * 1024)
    for base, entries in TABLES.items():
        for i, entry in entries.items():
            struct.pack_into("<Q", image, base + 8 * i, entry)
    (tmp_path / "board.physmem.store0.pmem").write_bytes(gzip.compress(bytes(image)))
    (tmp_path / "m5.cpt").write_text(
        "## checkpoint generated: Mon Nov 23 12:00:00 2026\n\n[Globals]\ncurTick=123\n\n"
        "[board.physmem]\nlal_addr=\nlal_cid=\nnbr_of_stores=1\n\n"
        "[board.physmem.store0]\nstore_id=0\nfilename=board.physmem.store0.pmem\n"
        f"range_size={len(image)}\n")
    found = vmemmap_mappings(tmp_path, 0x1000, VMEMMAP)
    assert found[0] == Mapping(VMEMMAP, 0x4000_0000, 4 * MiB)
    assert found[-1] == Mapping(VMEMMAP + GiB, 0x8000_0000, GiB)
