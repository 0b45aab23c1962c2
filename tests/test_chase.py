"""cachebench's pointer chase (chase_steps > 0) through the cache model, on
the Pentium III machine (pentium3-4way: 16 KiB 4-way L1D, 512 KiB 8-way L2,
no L3), against outcomes derived from the benchmark and the caches.

The chase visits the 16,384 lines of a 1 MiB array in one cycle.  The
L1D's 64 sets x 64-byte lines span one 4 KiB page, so its set index is
the page offset, the same in virtual and physical addresses: each set gets
exactly 256 lines of the cycle, and an LRU set of 4 ways that sees 256
lines in a fixed cycle misses on every one.  So every chase load misses the
L1D.  The L2's sets span 64 KiB, indexed by physical page bits that the
guest's page allocator chose: a set may get few enough of the cycle's lines
to keep them, so the L2 misses on every line of the first lap (nothing of
the array is in it when the region begins) and on at most every load of
the rest."""

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.disk_image import guest_program_symbols
from tests.conftest import run_twice

pytestmark = pytest.mark.boot
STEPS = 20_000          # a lap and a part
LINES = 1024 * 1024 // 64     # the smoke scale's large_kib, in 64-byte lines
SPEC = f"""description = "the pointer chase on the cache model"
variants = ["baseline"]
systems = ["pentium3-4way"]
workloads = [{{ name = "cachebench", scale = "smoke", params = {{ chase_steps = {STEPS} }} }}]

[qemu]
plugin = "hotline-cache"
"""


@pytest.fixture(scope="module")
def chase(tmp_path_factory):
    (run,), _ = run_twice(SPEC, tmp_path_factory.mktemp("chase"))
    start, size = guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c",
        tmp_path_factory.mktemp("symbols"))["chase"]
    misses = pd.read_parquet(run / "misses.parquet")
    return misses[(misses["pc"] >= start) & (misses["pc"] < start + size)
                  & (misses["kind"] == "read")]


def test_the_derivation_holds_for_the_machine():
    caches = specs.load_system("pentium3-4way").caches
    assert LINES > caches.l2.size_kib * 1024 // caches.line_bytes
    l1d_sets = caches.l1d.size_kib * 1024 // caches.line_bytes // caches.l1d.assoc
    assert l1d_sets * caches.line_bytes == 4096           # the set index is the page offset
    assert LINES // l1d_sets > caches.l1d.assoc
    assert LINES < STEPS


def test_every_chase_load_misses_the_l1d_and_the_first_lap_misses_the_l2(chase):
    # The only other read of chase() in the region is of the flag `m5` as
    # the region ends: its first touch, one miss at each level.
    per_pc = chase.groupby(["pc", "level"])["count"].sum().unstack("level")
    load = per_pc["L1D"].idxmax()
    assert per_pc.loc[load, "L1D"] == STEPS
    assert LINES <= per_pc.loc[load, "L2"] <= STEPS
    others = per_pc.drop(index=load)
    assert len(others) == 1 and (others[["L1D", "L2"]] == 1).all(axis=None)
