"""The C3 table: a run's chain-lock counters beside the seed's."""

import json

import pytest

from hotline.errors import HotlineError
from hotline.kernel import counters


def test_seed_column_reproduces_the_seed_ratios():
    table = counters.c3_table([])
    assert "| contended, % of locks | 0.28 |" in table
    assert "| spins per contended lock | 86.8 |" in table
    assert "| chain locks (nr_chain_locks) | 8,152,300 |" in table


def test_run_column_from_a_manifest(tmp_path):
    c = {"chain_lock": 1000, "chain_lock_contended": 10, "chain_lock_spins": 500,
         "rmap_add_fork": 300, "rmap_add_fault": 150, "rmap_add_cow": 50, "rmap_add_other": 0,
         "rmap_remove_zap": 450, "rmap_remove_cow": 50, "rmap_remove_other": 0}
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"inputs": {"kernel": {"variant": "pte-chain"}, "backend": {"mode": "parallel"}},
         "guest": {"counters": {"counters": c}, "summary": {"loops_completed": 4}}}))
    table = counters.c3_table([counters.load_run(tmp_path)])
    assert table.splitlines()[0] == "| | pte-chain (parallel) | seed 000 (2.5.27) |"
    assert "| chain locks per loop | 250 | 3,261 |" in table
    assert "| spins per contended lock | 50.0 | 86.8 |" in table
    assert "| rmap adds (page_add_rmap) | 500 | 4,106,673 |" in table
    assert "| chain locks per rmap add or remove | 1.000 | 0.991 |" in table


def test_not_a_run_directory(tmp_path):
    with pytest.raises(HotlineError, match="no manifest.json"):
        counters.load_run(tmp_path)
