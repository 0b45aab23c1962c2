"""TIP's error of a sampled view against the exact cycle profile
(analysis/sample_views.py), on profiles worked out by hand."""

import math

import pandas as pd
import pytest

from hotline.analysis.sample_views import errors_by_function, view_error


def test_samples_where_the_time_is_have_no_error():
    cycles = pd.Series({1: 30.0, 2: 70.0})
    assert view_error(cycles, pd.Series({1: 3, 2: 7})) == 0.0


def test_a_stalled_load_whose_samples_skid_to_the_next_instruction():
    # A load (pc 1) stalls 90 of 100 cycles, the add after it (pc 2) takes
    # 10.  Ten samples: the next-committing view gives the load its 9, the
    # skid view gives them to the add.  Skid: shares 0 and 1 against 0.9
    # and 0.1, |0 - 0.9| + |1 - 0.1| = 1.8, half is 0.9 of the samples on
    # the wrong instruction.
    cycles = pd.Series({1: 90.0, 2: 10.0})
    assert view_error(cycles, pd.Series({1: 9, 2: 1})) == pytest.approx(0.0)
    assert view_error(cycles, pd.Series({1: 0, 2: 10})) == pytest.approx(0.9)


def test_an_instruction_only_one_side_names_counts_as_zero_there():
    # Samples on pc 3, which has no cycles: all of them are wrong.
    assert view_error(pd.Series({1: 5.0}), pd.Series({3: 2})) == pytest.approx(1.0)


def test_nothing_to_share_is_no_number():
    assert math.isnan(view_error(pd.Series({1: 0.0}), pd.Series({1: 4})))
    assert math.isnan(view_error(pd.Series({1: 4.0}), pd.Series({1: 0})))


def test_errors_by_function_over_cores_and_views():
    # f: pcs 10 and 11 on two cores, 60 + 20 and 10 + 10 cycles (80 and 20
    # in all: 0.8, 0.2); samples next 6 + 2, 1 + 1 (0.8, 0.2: error 0);
    # skid 0 + 0, 7 + 3 (0, 1: error 0.8).  g: pc 20, 100 cycles, one
    # sample either way (error 0).  f has 100 of 200 cycles.
    cycles = pd.DataFrame({
        "symbol": ["f", "f", "f", "f", "g"], "pc": [10, 10, 11, 11, 20],
        "cycles": [60.0, 20.0, 10.0, 10.0, 100.0], "samples": [6, 2, 1, 1, 1],
        "skid_samples": pd.array([0, 0, 7, 3, 1], dtype="Int64")})
    table = errors_by_function(cycles).set_index("symbol")
    assert table.loc["f", "share"] == 0.5
    assert table.loc["f", "next-committing error"] == pytest.approx(0.0)
    assert table.loc["f", "skid error"] == pytest.approx(0.8)
    assert table.loc["g", "skid error"] == pytest.approx(0.0)
    # A profile made before the skid view: its error is no number.
    old = errors_by_function(cycles.drop(columns="skid_samples")).set_index("symbol")
    assert math.isnan(old.loc["f", "skid error"])
