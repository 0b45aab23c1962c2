"""bench/gem5_crosscheck.py's comparison, on misses tables written by hand
and figures worked out by hand."""

import importlib.util

import pandas as pd
import pytest

from hotline import paths

spec = importlib.util.spec_from_file_location("gem5_crosscheck",
                                              paths.REPO / "bench" / "gem5_crosscheck.py")
crosscheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(crosscheck)


def misses(rows):
    return pd.DataFrame(rows, columns=["level", "kind", "space", "symbol", "count"])


QEMU = misses([("L1D", "read", "kernel", "f1", 60), ("L1D", "write", "kernel", "f2", 40),
               ("L1I", "fetch", "kernel", "f1", 1000), ("L2", "fetch", "kernel", "f1", 7),
               ("L1D", "read", "user", "", 10), ("L2", "read", "kernel", "f1", 20)])
GEM5 = misses([("L1D", "read", "kernel", "f1", 30), ("L1D", "rmw", "kernel", "f1", 20),
               ("L1D", "read", "kernel", "f2", 50), ("L1D", "read", "user", "", 5),
               ("L2", "read", "kernel", "f2", 30)])


def test_totals_leave_out_fetches_and_keep_user_data():
    totals = crosscheck.compare(QEMU, GEM5)["totals"]
    assert (totals["L1D"]["qemu"], totals["L1D"]["gem5"]) == (110, 105)
    assert totals["L1D"]["relative"] == pytest.approx(-5 / 110) and totals["L1D"]["met"]
    assert (totals["L2"]["qemu"], totals["L2"]["gem5"]) == (20, 30)
    assert totals["L2"]["relative"] == pytest.approx(0.5) and not totals["L2"]["met"]


def test_shares_of_the_kernels_l1d_data_misses():
    result = crosscheck.compare(QEMU, GEM5)
    f1, f2 = result["top_functions"]
    assert (f1["function"], f1["qemu_share"], f1["gem5_share"]) == ("f1", 0.6, 0.5)
    assert f1["relative"] == pytest.approx(-1 / 6) and f1["met"]          # within 20%
    assert (f2["function"], f2["qemu_share"], f2["gem5_share"]) == ("f2", 0.4, 0.5)
    assert f2["relative"] == pytest.approx(0.25) and not f2["met"]
    assert not result["met"]
