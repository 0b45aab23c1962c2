"""The notebooks' shared measures on small tables written by hand: modelled
cost, function shares, the seed-style listing, lock and unlock offsets, and
reading a gathered results directory with its labels and counters."""

import json

import pandas as pd
import pytest

from hotline.analysis.cost import function_shares, instruction_listing, run_cost
from hotline import paths
from hotline.analysis.listing import lock_and_unlock, lock_and_unlock_in_code
from hotline.analysis.results import Results
from hotline.errors import HotlineError
from hotline.results import schema
from tests.made_runs import write_gathered


def miss(variant, symbol, offset, level, cause, count, cycles, obj="kernel-other", field=""):
    return {"variant": variant, "symbol": symbol, "offset": offset, "level": level,
            "cause": cause, "count": count, "cycles": cycles, "object": obj, "field": field}


MISSES = pd.DataFrame([
    miss("a", "f", 0, "L1D", "capacity", 10, 100, "struct page", "flags"),
    miss("a", "f", 0, "L2", "capacity", 10, 100),       # the same misses one level down
    miss("a", "f", 8, "L1D", "coherence", 2, 120, "struct page", "flags"),
    miss("a", "g", 4, "L1I", "compulsory", 1, 30),
    miss("b", "f", 0, "L1D", "capacity", 5, 50),
])
ROI = pd.DataFrame({"variant": ["a", "a", "b"], "instructions": [500, 500, 700]})


def test_cost_is_instructions_plus_l1_stalls_counted_once():
    cost = run_cost(MISSES, ROI, ["variant"]).set_index("variant")
    # a: 1000 instructions + 100 + 120 + 30 stall cycles (the L2 row not again)
    assert cost.loc["a", "modelled_cycles"] == 1250
    assert cost.loc["b", "modelled_cycles"] == 750


def test_function_shares_of_stall_cycles():
    shares = function_shares(MISSES, ["variant"])
    a = shares[shares["variant"] == "a"].set_index("symbol")["share"]
    assert a["f"] == pytest.approx(220 / 250) and a["g"] == pytest.approx(30 / 250)


def test_listing_gives_each_instruction_its_share_cause_and_data():
    listing = instruction_listing(MISSES[MISSES["variant"] == "a"], "f").set_index("offset")
    assert listing.loc[0, "share"] == pytest.approx(100 / 220)
    assert listing.loc[8, "main cause"] == "coherence"
    assert listing.loc[0, "data"] == "struct page.flags"


def test_lock_and_unlock_are_the_first_and_last_locked_instructions_of_the_main_path():
    # 40 is a locked instruction on a rarely taken path (a retry): not the unlock.
    insns = pd.DataFrame({"symbol": ["f"] * 5, "kind": ["rmw", "read", "rmw", "rmw", "rmw"],
                          "offset": [3, 5, 40, 12, 12], "accesses": [100, 100, 2, 60, 40]})
    assert lock_and_unlock(insns, "f") == {"lock": 3, "unlock": 12}
    assert lock_and_unlock(insns, "g") == {}


def test_lock_and_unlock_from_the_kernels_disassembly():
    """For runs that recorded no instructions (gem5): the first lock bts, and
    the first locked clear after it; the contended path's second lock bts,
    out of line, is neither.  The listing is pte_chain_add's on the
    pte-chain kernel, whose offsets QEMU's instructions give too (0x43, 0x71)."""
    start = 0xffffffff81200000
    code = {start + 0x3e: ("4889fb", "mov %rdi,%rbx"),
            start + 0x43: ("f0480fba2b18", "lock btsq $0x18,(%rbx)"),
            start + 0x4c: ("f0ff4734", "lock incl 0x34(%rdi)"),      # not a clear
            start + 0x71: ("f0480fba3318", "lock btrq $0x18,(%rbx)"),
            start + 0xfd: ("f0480fba2b18", "lock btsq $0x18,(%rbx)")}
    assert lock_and_unlock_in_code(code, start) == {"lock": 0x43, "unlock": 0x71}
    # clear_bit_unlock of a constant bit is a lock andb
    code[start + 0x71] = ("f080237f", "lock andb $0x7f,(%rbx)")
    assert lock_and_unlock_in_code(code, start) == {"lock": 0x43, "unlock": 0x71}
    del code[start + 0x71]
    assert lock_and_unlock_in_code(code, start) == {"lock": 0x43}
    assert lock_and_unlock_in_code({start: ("90", "nop")}, start) == {}


def test_gathered_results_are_labelled_by_run(tmp_path):
    manifest = {"inputs": {"system": {"spec": {"cpus": 4}}},
                "guest": {"counters": {"counters": {"chain_lock": 7}}}}
    write_gathered(tmp_path, pd.DataFrame([
        {"run_id": "r1", "variant": "a", "workload": "w", "system": "s", "repeat": 0,
         "params": json.dumps({"measure": 1}), "status": "ok",
         "summary": json.dumps({"x": 1}), "manifest": json.dumps(manifest)},
        {"run_id": "r2", "variant": "b", "workload": "w", "system": "s", "repeat": 0,
         "params": json.dumps({"measure": 2}), "status": "failed", "summary": None,
         "manifest": None},
    ]), {"misses": pd.DataFrame({"run": ["r1", "r2"], "count": [3, 4]})})
    results = Results(tmp_path)
    table = results.table("misses")
    assert table[["variant", "cpus", "count"]].values.tolist() == [["a", 4, 3]]
    assert len(results.select(table, params={"measure": 1})) == 1
    assert len(results.select(table, params={"measure": 2})) == 0
    counters = results.counters()
    assert counters[["run", "counter", "value"]].values.tolist() == [["r1", "chain_lock", 7]]
    assert results.table("absent").empty


def test_each_repeat_holds_its_own_runs_rows_from_one_read_of_the_table(tmp_path,
                                                                        monkeypatch):
    """Repeat views (what the claims decide each repeat on) hold the rows
    of their repeat's successful runs, labelled, and share one read of each
    table: a failed run's rows are in none of them."""
    from hotline.analysis import results as results_module
    runs = [{"run_id": f"r{n}", "variant": "a", "workload": "w", "system": "s",
             "repeat": n % 2, "params": "{}", "status": "failed" if n == 3 else "ok",
             "summary": None, "manifest": json.dumps({"inputs": {}}) if n != 3 else None}
            for n in range(4)]
    write_gathered(tmp_path, pd.DataFrame(runs),
                   {"roi": pd.DataFrame({"run": ["r0", "r1", "r2", "r3", "r2"],
                                         "instructions": [10, 11, 12, 13, 14]})})
    reads = []
    real_read = results_module._read
    monkeypatch.setattr(results_module, "_read",
                        lambda path, columns: reads.append(path.name) or real_read(path, columns))
    views = Results(tmp_path).repeats()
    assert [v.table("roi")["instructions"].tolist() for v in views] == [[10, 12, 14], [11]]
    assert [sorted(set(v.table("roi")["repeat"])) for v in views] == [[0], [1]]
    assert reads.count("roi.parquet") == 1


def test_a_table_no_run_made_reads_empty_with_its_columns(tmp_path):
    """A gem5 run makes misses and roi only: the other tables read as empty
    frames with their schema's columns and the labels, so that a measure on
    them gives nothing rather than a KeyError."""
    manifest = {"inputs": {"system": {"spec": {"cpus": 4}}, "backend": {"name": "gem5"}}}
    write_gathered(tmp_path, pd.DataFrame([
        {"run_id": "r1", "variant": "a", "workload": "w", "system": "s", "repeat": 0,
         "params": "{}", "status": "ok", "backend": "gem5", "summary": None,
         "manifest": json.dumps(manifest)}]),
        {"roi": pd.DataFrame({"run": ["r1"], "cpu": [0], "instructions": [10]})})
    results = Results(tmp_path)
    assert results.has("roi") and not results.has("rapw")
    assert results.backends == ["gem5"]
    for name, columns in schema.TABLES.items():
        if name != "roi":
            table = results.table(name)
            assert table.empty and list(table.columns) == [*columns, *LABELS_AFTER_RUN]
    rapw = results.table("rapw")
    assert rapw[rapw["store_symbol"].isin(["unlock_page"])].groupby("variant")["count"].sum() \
        .empty
    assert results.table("roi")["instructions"].tolist() == [10]
    # A copy each time: changing one does not change the next.
    roi = results.table("roi")
    roi.loc[0, "instructions"] = 99
    assert results.table("roi")["instructions"].tolist() == [10]


LABELS_AFTER_RUN = ["variant", "workload", "system", "cpus", "repeat", "params"]


# Tables the committed smoke results cannot have, and why.
NOT_IN_SMOKE_RESULTS = {
    "turns": "hotline-cache writes it since 2026-11-25, after the results were made",
    "cycles": "gem5 O3 runs only", "region_cycles": "gem5 O3 runs only",
    "sampled_cycles": "gem5 O3 sampled runs only", "drains": "gem5 O3 runs only",
    "code": "slimmed results without an instructions table (gem5's) only",
    "inlined": "slimmed results with a cycle profile (gem5's O3) only",
}


def test_the_schemas_are_those_of_the_committed_results():
    """The committed smoke results were written by hotline-cache: the tables
    kept whole have exactly their schema's columns, the slimmed ones a part;
    every other table of the schema is one they cannot have."""
    smoke = paths.REPO / "analysis" / "smoke-results"
    for name, columns in schema.TABLES.items():
        if not (smoke / f"{name}.parquet").exists():
            assert name in NOT_IN_SMOKE_RESULTS, f"{name}.parquet missing from {smoke}"
            continue
        written = list(pd.read_parquet(smoke / f"{name}.parquet").columns)
        if name in ("misses", "instructions", "coherence"):
            assert set(written) <= set(columns), name
        else:
            assert written == list(columns), name


def test_a_directory_without_an_index_is_refused(tmp_path):
    with pytest.raises(HotlineError, match="no runs.parquet"):
        Results(tmp_path)
