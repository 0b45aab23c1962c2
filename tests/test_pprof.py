"""./hotline export --pprof: the profile pprof itself reads (go tool pprof
-raw, when Go is installed) holds per sample type the totals a plain
groupby of the misses table gives, and the same when decoded with
hotline's own pprof.proto."""

import re
import shutil
import subprocess

import pandas as pd
import pytest

from hotline.report import pprof
from tests.conftest import expected_totals, go_pprof_raw

K = 0xffffffff81000000


def misses_table() -> pd.DataFrame:
    rows = [
        # cpu, pc, kind, symbol, offset, source_line, object, field, level, cause, count, cycles
        (0, K + 0x10, "read", "f", 0x10, "mm/f.c:10", "struct page", "flags", "L1D", "coherence", 7, 700),
        (1, K + 0x10, "read", "f", 0x10, "mm/f.c:10", "struct page", "flags", "L1D", "coherence", 2, 200),
        (1, K + 0x10, "read", "f", 0x10, "mm/f.c:10", "struct page", "flags", "L2", "coherence", 2, 300),
        (0, K + 0x14, "rmw", "f", 0x14, "include/linux/bitops.h:3", "struct page", "flags", "L1D", "upgrade", 5, 250),
        (2, K + 0x80, "write", "g", 0x0, "mm/g.c:1", "jiffies", "+0x0", "L1D", "capacity", 11, 330),
        (2, K + 0x80, "write", "g", 0x0, "mm/g.c:1", "jiffies", "+0x0", "L2", "conflict", 3, 90),
        (2, K + 0x80, "write", "g", 0x0, "mm/g.c:1", "jiffies", "+0x0", "L3", "compulsory", 1, 200),
        (3, K + 0x90, "fetch", "g", 0x10, "mm/g.c:4", "text", "", "L1I", "compulsory", 4, 40),
        (0, 0x401000, "read", "", 0, "", "user", "", "L1D", "capacity", 6, 60),
    ]
    return pd.DataFrame(rows, columns=["cpu", "pc", "kind", "symbol", "offset", "source_line",
                                       "object", "field", "level", "cause", "count", "cycles"]
                        ).assign(run="r", space=lambda m: ["kernel" if s else "user"
                                                           for s in m["symbol"]])


@pytest.fixture
def written(tmp_path):
    m = misses_table()
    return m, pprof.write(pprof.profile(m, None, ["a test"]), tmp_path / "misses.pb.gz")


def test_the_profile_decodes_to_the_tables_totals(written):
    m, path = written
    p = pprof.read(path)
    assert pprof.totals(p) == expected_totals(m)
    assert p.string_table[0] == "" and p.string_table[p.default_sample_type] == "L1D-misses"
    # one sample per (instruction, cpu, kind, data), one location per instruction
    assert len(p.sample) == len(m.drop_duplicates(["pc", "cpu", "kind", "object", "field"]))
    assert len(p.location) == m["pc"].nunique()


def test_pprof_reads_it_and_its_totals_are_the_tables(written):
    if shutil.which("go") is None:
        pytest.skip("needs Go (go tool pprof); the profile was checked by decoding it with "
                    "hotline's own pprof.proto in test_the_profile_decodes_to_the_tables_totals")
    m, path = written
    types, sums = go_pprof_raw(path)
    assert dict(zip(types, sums)) == expected_totals(m)
    top = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=L1D-coherence",
                          str(path)], capture_output=True, text=True, check=True,
                         timeout=600).stdout
    assert "of 9 total" in top and re.search(r"\bf\b", top)


def test_locations_carry_function_file_and_line(written):
    _, path = written
    p = pprof.read(path)
    s = p.string_table
    functions = {f.id: (s[f.name], s[f.filename]) for f in p.function}
    frames = {loc.address: [(functions[line.function_id], line.line) for line in loc.line]
              for loc in p.location}
    # Without a vmlinux: one frame, the table's symbol and source line.
    assert frames[K + 0x14] == [(("f", "include/linux/bitops.h"), 3)]
    assert frames[0x401000] == [((pprof.USER, ""), 0)]
    labels = {(s[label.key], s[label.str]) for sample in p.sample for label in sample.label}
    assert {("cpu", "0"), ("kind", "rmw"), ("data", "struct page.flags"),
            ("data", "jiffies+0x0")} <= labels
