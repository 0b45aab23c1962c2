"""./hotline diff: instructions paired across two kernels by their code,
functions matched by name, and the figures of each side and their
difference checked against the tables (hand-written ones, and the
committed smoke-scale results of baseline and pte-chain)."""

import pandas as pd
import pytest

from hotline import paths
from hotline.report import diff as d

SMOKE = paths.REPO / "analysis" / "smoke-results"
K = 0xffffffff81000000


def test_code_a_patch_inserts_shifts_no_pairing_after_it():
    a = [(0x0, "push %rbp"), (0x1, "mov 0x10(%rdi),%rax"), (0x5, "call 0xffffffff81001234"),
         (0xa, "ret")]
    b = [(0x0, "push %rbp"), (0x1, "mov 0x10(%rdi),%rax"), (0x5, "lock btsl $0x5,(%rdi)"),
         (0x9, "jb 0xffffffff81002000"), (0xb, "call 0xffffffff81009999"), (0x10, "ret")]
    assert d.aligned(a, b) == {0x0: 0x0, 0x1: 0x1, 0x5: 0xb, 0xa: 0x10}


def test_same_code_with_other_registers_pairs_one_for_one():
    a = [(0x0, "mov (%rdi),%rax"), (0x3, "add $0x1,%rax"), (0x7, "ret")]
    b = [(0x0, "mov (%rsi),%rdx"), (0x3, "add $0x1,%rdx"), (0x7, "ret")]
    assert d.aligned(a, b) == {0x0: 0x0, 0x3: 0x3, 0x7: 0x7}


def misses(rows) -> pd.DataFrame:
    return pd.DataFrame([{"run": "r", "cpu": 0, "pc": pc,
                          "space": "kernel" if pc >= K else "user",
                          "kind": "read", "symbol": symbol, "offset": offset,
                          "source_line": "", "object": "kernel-other", "field": "",
                          "level": level, "cause": "capacity", "count": count, "cycles": cycles}
                         for pc, symbol, offset, level, count, cycles in rows])


def side(name, rows, instructions=100):
    m = misses(rows)
    code = pd.DataFrame({"pc": m["pc"].unique(), "kind": "read", "bytes": "488b07"})
    return d.Side(name, name, m, code, pd.DataFrame({"cpu": [0], "instructions": [instructions]}))


# A: f has two missing instructions; B (a patched kernel, f 0x10 bytes further
# on) misses more at f's first and also in g, which A's kernel lacks.
A = side("a", [(K + 0x10, "f", 0x10, "L1D", 10, 100), (K + 0x10, "f", 0x10, "L2", 4, 200),
               (K + 0x20, "f", 0x20, "L1D", 3, 30), (0x401000, "", 0, "L1D", 5, 50)])
B = side("b", [(K + 0x20, "f", 0x10, "L1D", 12, 120), (K + 0x20, "f", 0x10, "L2", 6, 300),
               (K + 0x100, "g", 0x0, "L1I", 7, 70), (0x401000, "", 0, "L1D", 5, 50),
               # kernel code outside any symbol: two pcs, both offset 0 in the table
               (K + 0x900, "", 0, "L1D", 1, 4), (K + 0x940, "", 0, "L1D", 2, 5)], 130)


def test_functions_by_name_with_each_side_and_the_difference():
    result = d.diff(A, B)
    f = result.functions.set_index("function")
    # f: L1 misses 13 -> 12, stall cycles 130 -> 120, L2 4 -> 6
    assert f.loc["f", ["L1 misses a", "L1 misses b", "L1 misses diff"]].tolist() == [13, 12, -1]
    assert f.loc["f", ["stall cycles a", "stall cycles b", "stall cycles diff"]].tolist() == \
        [130, 120, -10]
    assert f.loc["f", ["L2 misses a", "L2 misses b", "only in"]].tolist() == [4, 6, ""]
    assert f.loc["g", ["stall cycles a", "stall cycles b", "only in"]].tolist() == [0, 70, "b"]
    assert f.loc[d.USER, "stall cycles diff"] == 0
    # sorted by |difference of stall cycles|: g (70), f (10), no symbol (9), [user] (0)
    assert list(result.functions["function"]) == ["g", "f", d.NO_SYMBOL, d.USER]
    assert f.loc[d.NO_SYMBOL, ["stall cycles a", "stall cycles b", "only in"]].tolist() == \
        [0, 9, "b"]
    # modelled cycles = instructions + L1 stall cycles: 100 + 180, 130 + 249
    totals = result.totals.set_index("measure")
    assert totals.loc["modelled cycles", ["a", "b", "diff"]].tolist() == [280, 379, 99]


def test_instructions_pair_within_their_function():
    rows = d.diff(A, B).instructions
    got = {(r["function"], r["offset a"], r["offset b"]): (r["stall cycles a"],
                                                           r["stall cycles b"], r["only in"])
           for _, r in rows.iterrows()}
    # Without the kernels' code the missing instructions pair by their text:
    # f+0x10 is the first "mov (%rdi),%rax" in both; f+0x20 has no partner.
    assert got[("f", "0x10", "0x10")] == (100, 120, "")
    assert got[("f", "0x20", "")] == (30, 0, "a")
    assert got[("g", "", "0x0")] == (0, 70, "b")
    # outside any symbol, by address
    assert got[(d.NO_SYMBOL, "", f"{K + 0x940:#x}")] == (0, 5, "b")


@pytest.fixture(scope="module")
def smoke():
    a, b = d.sides_of_experiment(SMOKE, ("baseline", "pte-chain"), "forkstorm", "pentium3-4way")
    return a, b, d.diff(a, b)


def test_an_experiment_side_must_name_one_run():
    from hotline.errors import HotlineError
    runs = pd.read_parquet(SMOKE / "runs.parquet")
    baseline = ((runs["variant"] == "baseline") & (runs["status"] == "ok")).sum()
    with pytest.raises(HotlineError, match=f"'baseline' names {baseline} runs"):
        d.sides_of_experiment(SMOKE, ("baseline", "pte-chain"))
    with pytest.raises(HotlineError, match="'nonesuch' names no successful run"):
        d.sides_of_experiment(SMOKE, ("nonesuch", "pte-chain"), "forkstorm")


def test_pte_chain_costs_fall_in_the_chain_functions(smoke):
    a, b, result = smoke
    gathered = pd.read_parquet(SMOKE / "misses.parquet")
    l1 = gathered[gathered["level"].isin(["L1D", "L1I"])]
    per_run = {run: l1[l1["run"] == run].groupby("symbol")["cycles"].sum()
               for run in (a.run_id, b.run_id)}
    f = result.functions.set_index("function")
    for function in ("pte_chain_add", "pte_chain_remove", "kmem_cache_alloc", "page_remove_rmap"):
        before = int(per_run[a.run_id].get(function, 0))
        after = int(per_run[b.run_id].get(function, 0))
        assert f.loc[function, ["stall cycles baseline", "stall cycles pte-chain",
                                "stall cycles diff"]].tolist() == [before, after, after - before]
    assert f.loc["pte_chain_add", "only in"] == "pte-chain"
    assert f.loc["pte_chain_remove", "only in"] == "pte-chain"
    # The chain's own functions are where most of the difference is.
    assert set(result.functions["function"].head(3)) >= {"pte_chain_add", "pte_chain_remove"}
    # Every function's difference adds up to the runs' difference in stall cycles.
    total = {run: int(l1[l1["run"] == run]["cycles"].sum()) for run in per_run}
    stalls = result.totals.set_index("measure").loc["stall cycles"]
    assert [stalls["baseline"], stalls["pte-chain"]] == [total[a.run_id], total[b.run_id]]
    every = d.per_function(d.per_instruction(a), d.per_instruction(b), result.names)
    assert every["stall cycles diff"].sum() == total[b.run_id] - total[a.run_id]


def test_written_as_text_html_and_picture(smoke, tmp_path):
    _, _, result = smoke
    text, text_path, html_path = d.write_diff(result, tmp_path)
    assert "pte_chain_remove" in text and text_path.read_text() == text
    page = html_path.read_text()
    assert page.count("<table") >= 4 and 'src="data:image/png;base64,' in page
    assert (tmp_path / "pictures" / "diff-functions.svg").is_file()


def slim(side: d.Side, listed: set[str]) -> d.Side:
    """A side as slimmed results hold it (hotline.analysis.slim): misses
    without their address, an instructions table with each instruction's
    function and offset, listing only some functions."""
    m = side.misses
    code = m[m["symbol"].isin(listed)].drop_duplicates("pc")
    instructions = pd.DataFrame({"pc": code["pc"], "kind": "read", "symbol": code["symbol"],
                                 "offset": code["offset"],
                                 "bytes": ["488b07" if o == 0x10 else "4889c3"
                                           for o in code["offset"]]})
    return d.Side(side.run_id, side.label, m.drop(columns="pc"), instructions, side.roi)


def test_slim_results_pair_by_the_code_their_instructions_table_holds():
    """Without pc in the misses, the instructions table's function and
    offset give each miss its code: f+0x10 in both is `mov (%rdi),%rax`
    (f+0x20 in A is another instruction), as with the addresses."""
    result = d.diff(slim(A, {"f"}), slim(B, {"f"}))
    f = result.instructions[result.instructions["function"] == "f"]
    got = {(r["offset a"], r["offset b"]): (r["instruction"], r["stall cycles a"],
                                            r["stall cycles b"]) for _, r in f.iterrows()}
    assert got == {("0x10", "0x10"): ("mov (%rdi),%rax", 100, 120),
                   ("0x20", ""): ("mov %rax,%rbx", 30, 0)}
    assert result.unpaired == []


def test_instructions_of_unknown_code_are_not_paired_and_the_kernel_to_build_is_named():
    """Code in neither the tables nor a kernel built here: two instructions
    of unknown text are not the same instruction (before, every unknown
    instruction was equal to every other, and the pairing was by order)."""
    a = side("a", [(K + 0x10, "f", 0x10, "L1D", 10, 100), (K + 0x20, "f", 0x20, "L1D", 3, 30)])
    b = side("b", [(K + 0x30, "f", 0x30, "L1D", 12, 120)])
    result = d.diff(slim(a, set()), slim(b, set()))
    f = result.instructions
    assert sorted(zip(f["offset a"], f["offset b"], f["only in"])) == \
        [("", "0x30", "b"), ("0x10", "", "a"), ("0x20", "", "a")]
    assert len(result.unpaired) == 2
    assert "./hotline build-kernel a" in result.unpaired[0] and "2 instruction(s)" in \
        result.unpaired[0] and "(in f)" in result.unpaired[0]
    assert result.unpaired[1].endswith("./hotline build-kernel b")
    text = d.render.as_text_sections([], d.sections(result))
    assert "Unpaired: a: the code of 2 instruction(s)" in text


def test_smoke_instructions_pair_by_their_code_without_the_kernels(smoke):
    """Without the committed results' kernels built here the instructions
    table still gives the code of the functions that matter (with them, the
    kernels give the rest, that slimming left without rows), so
    unmap_page_range+0x696 (zap_pte_range's first touch of struct page,
    77,222 L1 misses) pairs with itself, not with +0x660."""
    _, _, result = smoke
    rows = result.instructions
    unmap = rows[(rows["function"] == "unmap_page_range") &
                 (rows["offset baseline"] == "0x696")].iloc[0]
    assert unmap["offset pte-chain"] == "0x696" and unmap["instruction"] != ""
    assert unmap["L1 misses baseline"] == 77222
    # Every paired kernel instruction has its text.
    paired = rows[(rows["only in"] == "") & ~rows["function"].isin([d.USER, d.NO_SYMBOL])]
    assert (paired["instruction"] != "").all()
