"""The sampled run's three checks (hotline.analysis.sampling) on tables
made by hand, each outcome worked out below."""

import pandas as pd
import pytest

from hotline.analysis import sampling
from made_runs import write_run

# The exact run: three instructions over two cores.  Cycles per pc: 0x10
# 60, 0x20 30, 0x30 10 (shares 0.6, 0.3, 0.1); micro-ops 30, 10, 10 (cycles
# per micro-op 2.0, 3.0, 1.0).
EXACT = pd.DataFrame({"region": 0, "cpu": [0, 1, 0, 1], "pc": [0x10, 0x10, 0x20, 0x30],
                      "cycles": [40, 20, 30, 10], "micro_ops": [20, 10, 10, 10]})

# The sampled run's estimates: 0x30 was never seen in a window.  Its own
# micro-ops: 0x10 500, 0x20 300 of 1,000 counted (shares 0.5, 0.3; 0x40's
# 200 are the rest, 0.2).
SAMPLED = pd.DataFrame({
    "pc": [0x10, 0x20, 0x40], "windows": 120, "symbol": ["f", "f", "g"], "offset": [0, 16, 0],
    "share_low": [0.55, 0.35, 0.0], "share_high": [0.65, 0.40, 0.1],
    "micro_op_share_low": [0.45, 0.20, 0.25], "micro_op_share_high": [0.55, 0.25, 0.3],
    "cycles_per_micro_op_low": [1.9, 1.0, 1.0], "cycles_per_micro_op_high": [2.1, 2.5, 1.2],
    "counted_micro_ops": [500.0, 300.0, 200.0]}).set_index("pc")


def test_the_exact_shares_outside_their_intervals():
    # 0.6 in [0.55, 0.65]; 0.3 under 0.35; 0.1 of an instruction never seen
    # lies outside [0, 0].
    missed = sampling.shares_outside(SAMPLED, EXACT)
    assert sorted(missed.index) == [0x20, 0x30]
    assert missed.loc[0x30].tolist() == pytest.approx([0.1, 0.0, 0.0])


def test_the_exact_cycles_per_micro_op_outside_their_intervals():
    # 2.0 in [1.9, 2.1]; 3.0 over 2.5; 1.0 outside [0, 0].  With top=1 only
    # 0x10, the most cycles, is checked.
    assert sorted(sampling.time_outside(SAMPLED, EXACT).index) == [0x20, 0x30]
    assert sampling.time_outside(SAMPLED, EXACT, top=1).empty


def test_the_sampled_runs_own_micro_ops_outside_their_intervals():
    # 0.5 in [0.45, 0.55]; 0.3 over 0.25; 0.2 under 0.25.
    missed = sampling.micro_ops_outside(SAMPLED, 1000)
    assert missed["value"].to_dict() == pytest.approx({0x20: 0.3, 0x40: 0.2})


def test_the_report_names_what_missed_and_a_run_without_the_table(tmp_path, capsys):
    """On runs as hotline leaves them: a swapped pair, or a table changed
    since its run sealed it, is refused in one line."""
    exact = write_run(tmp_path / "exact", {}, {"cycles": EXACT})
    sampled = write_run(tmp_path / "sampled", {"account": {"counted_micro_ops": 1000}},
                        {"sampled_cycles": SAMPLED.reset_index()})
    text = sampling.report(exact, sampled, top=3)
    assert text.splitlines()[0] == "3 instructions seen in 120 windows"
    assert "micro-ops (same execution): 2 of the top 3 outside their 95% intervals (within " \
           "the 3 that chance leaves out)" in text
    assert "  f+16: 0.3 outside [0.35, 0.4]" in text
    assert "  0x30: 0.1 outside [0, 0]" in text
    assert sampling.main([str(sampled), str(exact)]) == 1
    assert "has no cycles.parquet" in capsys.readouterr().err
    EXACT.head(1).to_parquet(exact / "cycles.parquet")
    assert sampling.main([str(exact), str(sampled)]) == 1
    assert "cycles.parquet: " in capsys.readouterr().err
