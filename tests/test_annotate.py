"""annotate's pieces on hand-written tables: misses per instruction, level
and cause; the reads after partial writes an instruction took part in; the
files a patch touches (whose source is shown patched)."""

import pandas as pd

from hotline.report.annotate import miss_split, partial_writes
from hotline.report.source import touched_files

K = 0xffffffff81000000


def test_misses_per_instruction_level_and_cause():
    misses = pd.DataFrame({
        "pc": [K, K, K, K + 8, K + 99],
        "level": ["L1D", "L1D", "L2", "L1D", "L1D"],
        "cause": ["coherence", "coherence", "capacity", "upgrade", "capacity"],
        "count": [3, 4, 2, 5, 100]})
    assert miss_split(misses, [K, K + 8]) == {
        K: {"L1D": {"coherence": 7}, "L2": {"capacity": 2}},
        K + 8: {"L1D": {"upgrade": 5}}}


def test_partial_writes_as_store_and_as_load():
    rapw = pd.DataFrame({
        "store_pc": [K + 8, K + 8, K + 8, K + 8, K + 0x40],
        "store_symbol": ["folio_unlock"] * 4 + ["other"],
        "store_offset": [8, 8, 8, 8, 0],
        "load_pc": [K + 0x100, K + 0x200, K + 0x100, K + 0x300, K + 0x10],
        "load_symbol": ["page_zone", "folio_mark_accessed", "page_zone", "x", "folio_unlock"],
        "load_offset": [4, 0x1f, 4, 0, 0x10],
        "count": [10, 6, 5, 1, 2]})
    notes = partial_writes(rapw, {K + 8, K + 0x10}, "folio_unlock", partners=2)
    # As the store: 10 + 6 + 5 + 1 = 22 events, page_zone+0x4 15 of them.
    assert notes[K + 8] == ("22 as the store, loaded by page_zone+0x4 15; "
                            "folio_mark_accessed+0x1f 6; 1 more")
    # As the load, of the store in `other`.
    assert notes[K + 0x10] == "2 as the load, of stores by other+0x0 2"


def test_the_files_a_patch_touches(tmp_path):
    patch = tmp_path / "0001.patch"
    patch.write_text("""From: x
Subject: [PATCH] y
---
diff --git a/mm/filemap.c b/mm/filemap.c
--- a/mm/filemap.c
+++ b/mm/filemap.c
@@ -1 +1 @@
-a
+b
diff --git a/include/linux/new.h b/include/linux/new.h
--- /dev/null
+++ b/include/linux/new.h\t2024-01-01
@@ -0,0 +1 @@
+c
diff --git a/mm/gone.c b/mm/gone.c
--- a/mm/gone.c
+++ /dev/null
""")
    assert touched_files(patch) == {"mm/filemap.c", "include/linux/new.h"}
