"""Every notebook of analysis/ executes, headless, against the smoke-scale
results the project produced itself (analysis/smoke-results/, made by
configs/experiments/claims-smoke.toml and slimmed to what the notebooks read:
see PROVENANCE.md there).  A notebook that raises fails its test.  The
slimming keeps every measure the notebooks take, and the committed results
are its output."""

import dataclasses
import html
import re
import shlex
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import pyarrow.parquet as pq

from hotline import cli, paths, sealed
from hotline.analysis import claims, claims_page
from hotline.analysis.claims import INCONCLUSIVE, best
from hotline.analysis.cost import function_shares, instruction_listing, run_cost
from hotline.analysis.listing import lock_and_unlock
from hotline.analysis.notebooks import EXPECTED, NOTEBOOKS, ResultSets, analyse, notebooks
from hotline.analysis.results import Results
from hotline.analysis.slim import (claims_misses, slim_coherence, slim_instructions,
                                   slim_misses)
from hotline.errors import HotlineError
from tests.claim_tables import (GEM5_LRU_VERDICTS, GEM5_SMOKE_VERDICTS, LINES32_VERDICTS,
                                O3_TINY_32B_VERDICTS, O3_TINY_VERDICTS, SEED_SCALE_VERDICTS,
                                c6_experiment, gem5_shaped)
from tests.conftest import SMOKE, command_lines, copy_gathered
from tests.made_runs import write_gathered

MORE, O3_MORE, SEED_MORE, LINES32_MORE, GEM5_MORE, O3_32B_MORE, LRU_MORE, GEM5_LRU_MORE = \
    EXPECTED



@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Every notebook on the smoke results, and the claims page with the
    smoke results shaped as gem5's (tests/claim_tables.py) as its gem5 side
    and the committed expected results (the same smoke results, the O3
    results of analysis/o3-tiny-results, the seed-scale ones of
    analysis/seed-forkstorm-results, the 32-byte lines' of
    analysis/32b-smoke-results, gem5's LRU writers of
    analysis/gem5-smoke-results, the 32-byte O3 results of
    analysis/o3-tiny-32b-results and the LRU writers under page replacement
    of analysis/lru-replacement-results and gem5-lru-replacement-results)
    as further columns, as the demo shows them."""
    results = tmp_path_factory.mktemp("smoke") / "claims-smoke"
    copy_gathered(results)
    gem5 = gem5_shaped(SMOKE, tmp_path_factory.mktemp("gem5") / "claims-smoke-gem5")
    return analyse(results, gem5, EXPECTED), results


def test_every_notebook_renders(pages):
    rendered, _ = pages
    assert sorted(rendered) == sorted(p.stem for p in notebooks())
    for page in rendered.values():
        assert "<html" in page.read_text()[:2000].lower()


# What each evidence notebook compares, which a page showing it names: the
# kernel variants, and for the dump copy (one kernel) the ways of copying.
COMPARED = {"rmap": ["pte-chain", "pte-chain-inpage", "pte-chain-hashlock"],
            "unlock_page": ["unlock-page-legacy", "unlock-page-global"],
            "lru_batching": ["pagevec-1", "pagevec-31"], "dumpcopy": ["read", "mmap"],
            "microbench": ["pgd-cache"]}


def test_the_demos_notebooks_show_the_variants_of_the_committed_results(tmp_path, monkeypatch):
    """./hotline demo's case: one run, the baseline kernel's fork storm on 4
    CPUs (the committed smoke results' own), analysed with the committed
    results as more (EXPECTED).  Each evidence notebook shows what it
    compares from the committed smoke results, its sections' first lines
    naming them, and rmap the run's own baseline beside them under the
    run's label.  The claims page, which the pages fixture checks with
    these more results, is left out (it takes a minute)."""
    runs = pq.read_table(SMOKE / "runs.parquet").to_pandas()
    own = runs[(runs["variant"] == "baseline") & (runs["workload"] == "forkstorm")
               & (runs["system"] == "pentium3-4way")]
    assert len(own) == 1
    tables = {}
    for table in SMOKE.glob("*.parquet"):
        if table.stem != "runs":
            frame = pd.read_parquet(table)
            tables[table.stem] = frame[frame["run"].isin(own["run_id"])]
    demo = write_gathered(tmp_path / "demo", own, tables)
    evidence = [p for p in notebooks() if p.stem != "claims"]
    monkeypatch.setattr("hotline.analysis.notebooks.notebooks", lambda: evidence)
    pages = analyse(demo, more=EXPECTED)
    assert sorted(pages) == sorted(COMPARED)
    for name, compared in COMPARED.items():
        page, shown = pages[name].read_text(), output_text(demo / "analysis" / f"{name}.ipynb")
        assert f"from {MORE}</strong> (analysis/smoke-results, on pentium3-" in page, name
        assert f"from {MORE}** (analysis/smoke-results" in shown, name
        for what in compared:
            assert re.search(rf"\b{what}\b", shown), (name, what)
    rmap = output_text(demo / "analysis" / "rmap.ipynb")
    assert "demo has baseline only" in rmap
    # The cost table: the run's baseline on 4 CPUs, then the committed results'.
    assert re.search(r"^0\s+demo\s+baseline\s+4\s", rmap, re.M)
    assert re.search(rf"^1\s+{re.escape(MORE)}\s+baseline\s+1\s", rmap, re.M)


def test_a_section_shows_the_first_results_alone_where_they_have_its_variants():
    """As a notebook given no more results: no first line, no column
    `results`, the first results' own tables; where they lack a variant,
    the first further results that have them all (the O3 profile of the
    LRU writers: only gem5's page replacement results made one)."""
    smoke = Results(SMOKE)
    sets = ResultSets(smoke, EXPECTED)
    alone = sets.section("forkstorm", ["baseline", "pte-chain"], tables=("misses", "roi"))
    assert (alone.keys, alone.heading, list(alone.sets.values())) == ([], "", [smoke])
    pd.testing.assert_frame_equal(alone.table("roi"), smoke.table("roi"))
    profiled = sets.section("lruwriters", ["pagevec-1", "baseline"], tables=("sampled_cycles",))
    assert (list(profiled.sets), profiled.keys) == ([GEM5_LRU_MORE], [])
    assert profiled.heading.endswith(": smoke-results has no lruwriters runs of pagevec-1, "
                                     "baseline that made sampled_cycles.")


def output_text(executed: Path) -> str:
    """Every output of an executed notebook as text: printed, plain and
    Markdown."""
    import nbformat
    return "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") +
                     o.get("data", {}).get("text/markdown", "")
                     for c in nbformat.read(executed, as_version=4).cells
                     if c.cell_type == "code" for o in c.outputs)


def test_the_claims_page_opens_with_the_verdict_table_and_shows_no_code(pages):
    rendered, _ = pages
    page = rendered["claims"].read_text()
    body = page[page.index("<body"):]
    # The table is the page's first, before the first claim's section.
    table = outer_table(body)
    assert body.index('<table class="claims"') < body.index('<h2 id="c1">')
    assert body.find("<table") == body.index('<table class="claims"')
    rows = claim_rows(table)
    assert [name for name, _, _ in rows] == [f"C{n}" for n in range(1, 12)]
    labels = ["QEMU", "gem5", MORE, O3_MORE, SEED_MORE, LINES32_MORE, GEM5_MORE, O3_32B_MORE,
              LRU_MORE, GEM5_LRU_MORE]
    committed = {MORE: {}, O3_MORE: O3_TINY_VERDICTS, SEED_MORE: SEED_SCALE_VERDICTS,
                 LINES32_MORE: LINES32_VERDICTS, GEM5_MORE: GEM5_SMOKE_VERDICTS,
                 O3_32B_MORE: O3_TINY_32B_VERDICTS, LRU_MORE: {},
                 GEM5_LRU_MORE: GEM5_LRU_VERDICTS}
    readme = readme_verdicts()
    for name, cells, detail in rows:
        # At most six columns; the verdict is README's, which the same rule
        # chose from the committed results (the demo's own columns add no
        # better evidence).
        assert len(cells) == 6 and claims.CLAIMS[name].title in cells[0]
        assert cells[3].startswith(readme[name]), (name, cells[3], readme[name])
        # Every column under the row, the deciding one first; each committed
        # column's verdict as tests/test_claims_committed.py checks it on its tables.
        assert sorted(detail) == sorted(labels) and len(detail) == len(labels)
        assert detail["QEMU"] == detail[MORE]
        for label, verdicts in committed.items():
            if label == MORE:
                continue
            # C6 on page replacement's QEMU runs: the contention is undecided.
            assert detail[label] == verdicts.get(name, "inconclusive"), (name, label)
    # C9 on gem5's O3 cores: decided on time, and no committed O3 results
    # hold unlock-page-legacy's script storm yet.
    assert "no unlock-page-legacy scriptstorm run with a cycle profile and unlock_page " \
        "counters" in table
    # No code: no input cells, no highlighted source, no prompts.
    assert 'class="highlight' not in body and "In&nbsp;[" not in body
    for code in ("import ", "def ", "claims_page."):
        assert code not in re.sub(r'src="data:[^"]*"', "", body)
    # The evidence pages keep their code.
    assert 'class="highlight' in rendered["rmap"].read_text()


def outer_table(page: str) -> str:
    """The claims table of a page, whole: its rows' details hold tables of
    their own."""
    start = page.index('<table class="claims"')
    depth = 0
    for tag in re.finditer(r"<(/?)table\b", page[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return page[start:start + tag.end()]
    raise AssertionError("the claims table does not end")


def text(cell: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())


def claim_rows(table: str) -> list[tuple[str, list[str], dict[str, str]]]:
    """Each claim's row of the claims table: its id, its cells as text, and
    the verdict of every column folded under it, by the column's label."""
    out = []
    body = table[table.index("<tbody>") + len("<tbody>"):]
    for top, detail in re.findall(r"<tr>(.*?)</tr>\s*<tr class=\"detail\">(.*?</table>.*?)</tr>",
                                  body, re.S):
        cells = [text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", top, re.S)]
        inner = detail[detail.index("<tbody>"):]
        verdicts = {}
        for inner_row in re.findall(r"<tr>(.*?)</tr>", inner, re.S):
            label, _, verdict, *_ = [text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>",
                                                                 inner_row, re.S)]
            assert label.endswith(" (decides)") == (not verdicts)     # the first decides
            verdicts[label.removesuffix(" (decides)")] = next(
                v for v in ("not supported", "supported", "inconclusive", "not run")
                if verdict.startswith(v))
        out.append((cells[0].split()[0], cells, verdicts))
    return out


def readme_verdicts() -> dict[str, str]:
    """The verdict of each claim in README's table."""
    rows = [line.split(" | ") for line in (paths.REPO / "README.md").read_text().splitlines()
            if re.match(r"\| C\d+ ", line)]
    return {row[0].split()[1]: row[3].split(":")[0] for row in rows}


def test_the_lru_notebook_shows_the_time_lost_to_lock_spinning(tmp_path):
    """lru_batching's spin table on hand-made O3 profiles (tests/claim_tables.py's
    spun()): pagevec-1 spent 25 of the kernel's 1,000 cycles in qspinlock's
    slow path, 2.5%, baseline 8.5, 0.85%; user code and the idle loop are
    not system time."""
    import nbformat
    import papermill
    results = c6_experiment(tmp_path, 10, 1, 8.5).results().directory
    executed = tmp_path / "lru_batching.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / "lru_batching.ipynb"), str(executed),
                               cwd=str(NOTEBOOKS), parameters={"results_dir": str(results)},
                               progress_bar=False, kernel_name="python3")
    [spin] = [o["data"]["text/plain"] for c in nbformat.read(executed, 4).cells
              if c.cell_type == "code" and "SPIN_FUNCTIONS" in c.source
              for o in c.outputs if "spin share" in o.get("data", {}).get("text/plain", "")]
    rows = {line.split()[0]: line.split() for line in spin.splitlines()[2:]}
    assert rows["pagevec-1"][1:] == ["0", "425", "1000.0", "25.0", "0.0250"]
    assert rows["baseline"][1:] == ["0", "425", "1000.0", "8.5", "0.0085"]


def test_the_claims_page_without_gem5_says_not_run():
    results = Results(SMOKE)
    columns = [best.column("QEMU", results, claims.check_all(results), claims.claims()),
               best.not_run("gem5")]
    found = best.verdicts(claims.claims(), columns)
    table = claims_page.verdict_table(found)
    # gem5 under every claim's row, "not run"; QEMU decides every claim.
    assert table.count(">not run</td>") == 11
    assert all(f.column.label == "QEMU" for f in found)
    c1 = found[0].check
    assert table.count(f">{html.escape(c1.measured)}</td>") == 2   # the row and its detail
    assert table.count(">QEMU: modelled cycles, 1 run, smoke scale</td>") == 2    # C1, C11
    # C4's negative control, beside its figure and in its detail.
    assert table.count(">pte-chain-hashlock: not supported</td>") == 2


def test_each_claims_best_evidence_is_chosen_by_the_rule_stated():
    """claims/best.py's rule, step by step, on the committed smoke checks
    of C1 (a claim about time) and C5 (decided), changed one field at a time."""
    results = Results(SMOKE)
    checks = {c.claim: c for c in claims.check_all(results)}
    c1, c5 = checks["C1"], checks["C5"]
    smoke, seed = best.Size(40, "smoke scale"), best.Size(5000, "seed scale")

    def pick(*given):
        columns = [best.Column(label, {check.claim: check}, {check.claim: at})
                   for label, check, at in given]
        [verdict] = best.verdicts([claims.CLAIMS[given[0][1].claim]], columns)
        return verdict.column.label

    o3 = dataclasses.replace(c1, measure=best.O3_CYCLES, verdict=INCONCLUSIVE, repeats=1)
    nothing = dataclasses.replace(c1, measured="-", repeats=5)
    # 1. something measured, by a backend that can measure it (C3's and
    # C6's QEMU figures, contention on vCPU turns, are shown as no evidence);
    # 2. time itself over a stand-in, decided or not.
    assert pick(("none", nothing, seed), ("QEMU", c1, smoke)) == "QEMU"
    turns = dataclasses.replace(c1, verdict=INCONCLUSIVE, repeats=5, cannot_measure=True)
    assert pick(("QEMU", turns, seed),
                ("gem5", dataclasses.replace(turns, cannot_measure=False), smoke)) == "gem5"
    assert checks["C3"].cannot_measure and checks["C6"].cannot_measure
    assert not c1.cannot_measure
    assert pick(("QEMU", c1, seed), ("O3", o3, smoke)) == "O3"
    # 3. decided; 4. more runs, up to five; 5. larger scale; 6. more runs; 7. first.
    five = dataclasses.replace(c5, repeats=5)
    undecided = dataclasses.replace(five, verdict=INCONCLUSIVE)
    assert pick(("undecided", undecided, seed), ("one run", c5, smoke)) == "one run"
    assert pick(("one run", c5, seed), ("five", five, smoke)) == "five"
    assert pick(("smoke", dataclasses.replace(c5, repeats=9), smoke),
                ("seed", five, seed)) == "seed"
    assert pick(("five", five, smoke), ("nine", dataclasses.replace(c5, repeats=9), smoke)) \
        == "nine"
    assert pick(("a", five, smoke), ("b", five, smoke)) == "a"


def test_analyse_refuses_a_gem5_side_that_is_not_gem5_results(tmp_path, capsys):
    """One line, before any notebook runs, and the pages of the last
    analysis (here the committed ones) left as they were."""
    pages = {p: p.read_bytes() for p in (SMOKE / "analysis").glob("*.html")}
    assert len(pages) == len(notebooks())
    assert cli.main(["analyse", str(SMOKE), "--gem5", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == (f"hotline: error: {tmp_path} has no runs.parquet: give the directory of a "
                   "gathered experiment (./hotline run SPEC writes it)\n")
    assert cli.main(["analyse", str(SMOKE), "--gem5", str(SMOKE)]) == 1
    err = capsys.readouterr().err
    assert err == (f"hotline: error: {SMOKE}: its runs were made by qemu; the gem5 column "
                   "takes the results of an experiment run with backend = \"gem5\"\n")
    assert {p: p.read_bytes() for p in (SMOKE / "analysis").glob("*.html")} == pages


@pytest.mark.parametrize("more, says", [
    ("nolabel", "--more 'nolabel': give LABEL=RESULTS"),
    ("=results/x", "--more '=results/x': give LABEL=RESULTS"),
    ("gem5=results/x", "the label 'gem5' is taken"),
    ("QEMU=" + str(SMOKE), "the label 'QEMU' names the first results' column"),
])
def test_analyse_refuses_a_column_it_cannot_label(more, says, capsys):
    """One line, before any notebook runs; the committed pages untouched."""
    pages = {p: p.read_bytes() for p in (SMOKE / "analysis").glob("*.html")}
    extra = ["--gem5", str(SMOKE)] if more.startswith("gem5") else []
    assert cli.main(["analyse", str(SMOKE), *extra, "--more", more]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hotline: error: ") and says in err and err.count("\n") == 1
    assert {p: p.read_bytes() for p in (SMOKE / "analysis").glob("*.html")} == pages


def test_a_failed_analysis_leaves_no_pages(tmp_path):
    """Pages from an earlier analysis go before anything runs, so a notebook
    that raises leaves none that could be taken for its result."""
    results = tmp_path / "claims-smoke"
    copy_gathered(results)
    (results / "analysis").mkdir(exist_ok=True)
    for notebook in notebooks():
        (results / "analysis" / f"{notebook.stem}.html").write_text("<html>earlier</html>")
    # Tables that are gathered (sealed) but not what the notebooks need.
    pd.DataFrame({"run": pd.Series(dtype="string")}).to_parquet(results / "misses.parquet")
    sealed.write_index(results, "runs.parquet", pq.read_table(results / "runs.parquet"))
    with pytest.raises(HotlineError, match=r"notebook claims\.ipynb failed at cell"):
        analyse(results)
    assert not list((results / "analysis").glob("*.html"))


def miss(run, cpu, pc, kind, symbol, offset, level, cause, count, cycles, obj="kernel-other"):
    return {"run": run, "cpu": cpu, "pc": pc, "space": "kernel" if symbol else "user",
            "kind": kind, "symbol": symbol, "offset": offset, "source_line": f"x.c:{offset}",
            "object": obj, "field": "flags" if obj == "struct page" else "", "level": level,
            "cause": cause, "count": count, "cycles": cycles}


MISSES = pd.DataFrame([
    miss("r", 0, 0x100, "rmw", "f", 0, "L1D", "coherence", 3, 300, "struct page"),
    miss("r", 1, 0x100, "rmw", "f", 0, "L1D", "coherence", 2, 200, "struct page"),  # other CPU
    miss("r", 0, 0x100, "rmw", "f", 0, "L2", "coherence", 5, 50, "struct page"),
    miss("r", 0, 0x108, "read", "f", 8, "L1D", "capacity", 9, 90),
    miss("r", 0, 0x300, "fetch", "g", 0, "L1I", "compulsory", 1, 1),  # 1 cycle in 1,000
    miss("r", 0, 0x4000, "read", "", 0, "L1D", "capacity", 4, 400, "user"),
    miss("r", 1, 0x4010, "write", "", 0, "L1D", "capacity", 1, 9, "user"),  # user code: pc differs
])
INSTRUCTIONS = pd.DataFrame({
    "run": "r", "pc": [0x100, 0x104, 0x108, 0x10c, 0x300, 0x4000],
    "kind": ["rmw", "read", "read", "rmw", "fetch", "read"],
    "bytes": ["f00fab07", "8b07", "8b4708", "f00fb307", "90", "8b00"],
    "accesses": [50, 50, 50, 50, 1, 9], "cycles": 0, "l1_misses": 0, "l2_misses": 0,
    "l3_misses": 0, "symbol": ["f", "f", "f", "f", "g", ""], "offset": [0, 4, 8, 12, 0, 0],
    "source_line": ""})


def test_slimming_keeps_every_measure_the_notebooks_take():
    slim = slim_misses(MISSES)
    assert len(slim) == 5 and not {"cpu", "pc", "kind", "source_line"} & set(slim.columns)
    roi = pd.DataFrame({"run": ["r"], "instructions": [1000]})
    for measure in (lambda m: run_cost(m, roi, ["run"]), lambda m: function_shares(m, ["run"]),
                    lambda m: instruction_listing(m, "f")):
        pd.testing.assert_frame_equal(measure(slim), measure(MISSES))
    # g has 1 of 1,000 L1 stall cycles (0.1%): its instructions stay; user code goes.
    kept = slim_instructions(INSTRUCTIONS, MISSES)
    assert kept["pc"].tolist() == [0x100, 0x104, 0x108, 0x10c, 0x300]
    assert lock_and_unlock(kept, "f") == lock_and_unlock(INSTRUCTIONS, "f") == \
        {"lock": 0, "unlock": 12}
    assert slim_instructions(INSTRUCTIONS, MISSES[MISSES["symbol"] != "g"])["symbol"].tolist() \
        == ["f"] * 4


def test_slimming_coherence_sums_over_the_addresses_and_keeps_who_stole_from_whom():
    """Two rows of pte_chain_add+0x10 stolen by pte_chain_remove on cpu 1
    that differ only by their addresses (pc, thief_pc) become one row of
    3; another thief's cpu or function stays a row of its own."""
    row = {"run": "r", "cpu": 0, "pc": 0x10, "thief_cpu": 1, "thief_pc": 0x20,
           "object": "struct page", "field": "flags", "symbol": "pte_chain_add", "offset": 16,
           "source_line": "mm/rmap.c:1", "thief_symbol": "pte_chain_remove",
           "thief_offset": 8, "thief_source_line": "mm/rmap.c:2", "count": 1}
    coherence = pd.DataFrame([row, {**row, "pc": 0x11, "thief_pc": 0x21, "count": 2},
                              {**row, "thief_cpu": 2, "count": 5},
                              {**row, "thief_symbol": "page_remove_rmap", "count": 7}])
    slim = slim_coherence(coherence)
    assert not {"pc", "thief_pc"} & set(slim.columns)
    assert sorted(zip(slim["thief_symbol"], slim["thief_cpu"], slim["count"])) == \
        [("page_remove_rmap", 1, 7), ("pte_chain_remove", 1, 3), ("pte_chain_remove", 2, 5)]


def test_slimming_the_cycle_profile_keeps_what_the_claims_take():
    """Summed over region, cpu and source line: each instruction's cycles,
    causes and micro-ops stay, and so do C1's system cycles and shares.  A
    function under 0.1% of the run's cycles, and user code, are each one
    row at their first instruction, their sums kept."""
    from hotline.analysis.claims.common import busy_rows, kernel_rows, system_cycles
    from hotline.analysis.slim import slim_cycles
    pc, small, user = 0xffffffff81000010, 0xffffffff81100000, 0x401000

    def row(region, cpu, at, symbol, i, cycles):
        return {"run": "r", "region": region, "cpu": cpu, "pc": at + 4 * i, "instructions": 1,
                "micro_ops": 2, "samples": 0, "cycles": cycles, "cycles_commit": 1.0,
                "symbol": symbol, "offset": 4 * i, "source_line": f"{symbol}.c:{region}"}

    rows = [row(region, cpu, pc, "f", i, 10.0 * (i + 1))
            for region in (0, 1) for cpu in range(4) for i in range(3)]
    # g: 2 x 0.05 cycles against f's 480 (0.02%); user code: 2 x 100 cycles.
    rows += [row(0, 0, small, "g", i, 0.05) for i in range(2)]
    rows += [row(0, 1, user, "", i, 100.0) for i in range(2)]
    cycles = pd.DataFrame(rows)
    slim = slim_cycles(cycles)
    assert not {"region", "cpu", "source_line"} & set(slim.columns)
    assert slim[["pc", "symbol", "offset", "cycles"]].values.tolist() == [
        [user, "", 0, 200.0], [pc, "f", 0, 80.0], [pc + 4, "f", 4, 160.0],
        [pc + 8, "f", 8, 240.0], [small, "g", 0, 0.1]]          # f: 8 rows of each
    assert slim["micro_ops"].tolist() == [4, 16, 16, 16, 4]
    labelled = lambda f: f.assign(variant="v")                      # noqa: E731
    assert system_cycles(labelled(slim)).to_dict() == system_cycles(labelled(cycles)).to_dict()
    assert busy_rows(slim)["cycles"].sum() == busy_rows(cycles)["cycles"].sum()
    assert len(kernel_rows(labelled(slim))) == 4
    # An instruction of g that the inlined table names (an inlined copy C9
    # counts) keeps its own row; g's other instruction is summed alone.
    kept = slim_cycles(cycles, pd.DataFrame({"run": ["r"], "pc": [small + 4],
                                             "function": ["folio_unlock"]}))
    g = kept[kept["symbol"] == "g"]
    assert g["pc"].tolist() == [small, small + 4] and g["cycles"].tolist() == [0.05, 0.05]
    assert kept["cycles"].sum() == pytest.approx(slim["cycles"].sum())


def test_slimming_the_sampled_cycle_profile_keeps_each_function_whole():
    """Each function's instructions as one row at its first, their cycles,
    micro-ops and shares summed (by hand below), user code apart from the
    kernel's; the intervals, which do not sum, NaN; C6's spin time the same."""
    from hotline.analysis.claims.c06 import spin_time
    from hotline.analysis.slim import slim_sampled_cycles
    from hotline.results.schema import SAMPLED_CYCLES
    spin, other, user = 0xffffffff81000000, 0xffffffff81100000, 0x401000

    def row(at, symbol, i, cycles, counted=float("nan")):
        return {"run": "r", "pc": at + 4 * i, "windows": 9, "cycles": cycles,
                "share": cycles / 100, "share_low": 0.0, "share_high": 1.0, "micro_ops": 2,
                "micro_op_share": 0.1, "micro_op_share_low": 0.0, "micro_op_share_high": 1.0,
                "cycles_per_micro_op": cycles / 2, "cycles_per_micro_op_low": 0.0,
                "cycles_per_micro_op_high": 9.0, "counted_micro_ops": counted,
                "symbol": symbol, "offset": 4 * i, "source_line": f"{symbol}.c:{i}"}

    rows = [row(other, "shrink_folio_list", i, 20.0) for i in (2, 0, 1)]     # unsorted
    rows += [row(spin, "native_queued_spin_lock_slowpath", i, 5.0) for i in range(2)]
    rows += [row(user, "", i, 15.0) for i in range(2)]
    sampled = pd.DataFrame(rows).astype(SAMPLED_CYCLES)
    slim = slim_sampled_cycles(sampled)
    assert list(slim.columns) == list(SAMPLED_CYCLES)
    assert slim[["pc", "symbol", "offset", "windows", "cycles", "micro_ops"]].values.tolist() \
        == [[user, "", 0, 9, 30.0, 4], [spin, "native_queued_spin_lock_slowpath", 0, 9, 10.0, 4],
            [other, "shrink_folio_list", 0, 9, 60.0, 6]]
    assert slim["share"].tolist() == pytest.approx([0.3, 0.1, 0.6])
    assert slim["micro_op_share"].tolist() == pytest.approx([0.2, 0.2, 0.3])
    assert slim["cycles_per_micro_op"].tolist() == [7.5, 2.5, 10.0]
    assert slim[["share_low", "micro_op_share_high", "counted_micro_ops"]].isna().all().all()
    assert (slim["source_line"] == "").all()

    def spun(table):
        return spin_time(table.assign(variant="v"), ["variant"])["spin share"]["v"]
    assert spun(slim) == spun(sampled) == 10 / 70


def test_the_claims_that_read_no_misses_decide_the_same_without_them(tmp_path):
    """Only the LRU writers' claim (C6) and C9's positive control (the
    guest's own timing of groundtruth's patterns) say they read no misses,
    and C6 gives the same verdict, figures and reason with its workload's
    misses as without them (C9 reads groundtruth's report only)."""
    from hotline.analysis.slim import workloads_without_misses
    from tests.claim_tables import experiment, miss
    assert workloads_without_misses() == {"lruwriters", "groundtruth"}
    checked = []
    for misses in ([miss("folio_lruvec_lock_irqsave", 100)], []):
        e = experiment(tmp_path / str(len(misses)))
        for variant, locks in (("pagevec-1", 100), ("baseline", 10)):
            e.run(variant, "lruwriters", counters={"lru_lock": locks,
                                                   "lru_lock_contended": locks // 10},
                  misses=misses)
        c = claims.check(claims.CLAIMS["C6"], e.results())
        checked.append((c.verdict, c.measured, c.reason))
    assert checked[0] == checked[1]


def test_slimming_for_the_claims_keeps_the_l1_rows_of_workloads_whose_claims_read_misses():
    misses = pd.DataFrame({"run": ["fork", "fork", "fork", "lru", "lru"],
                           "level": ["L1D", "L1I", "L2", "L1D", "L2"],
                           "cycles": [1, 2, 3, 4, 5]})
    runs = pd.DataFrame({"run_id": ["fork", "lru"], "workload": ["forkstorm", "lruwriters"]})
    kept = claims_misses(misses, runs)
    assert kept["cycles"].tolist() == [1, 2]
    roi = pd.DataFrame({"run": ["fork"], "instructions": [10]})
    pd.testing.assert_frame_equal(run_cost(kept, roi, ["run"]),
                                  run_cost(misses[misses["run"] == "fork"], roi, ["run"]))


def test_merging_gathered_results_gives_one_gathering_of_all_their_runs(tmp_path):
    """analysis/o3-tiny-results split by run into two gatherings, the one
    slimmed again and the other not: merged, every table has the rows it
    had (a committed directory can take new runs); a run in both is
    refused, or with replace taken from the last source."""
    import pyarrow.parquet as pq

    from hotline import sealed
    from hotline.analysis.slim import merge, slim
    whole = paths.REPO / "analysis" / "o3-tiny-results"
    run_ids = pd.read_parquet(whole / "runs.parquet")["run_id"]
    parts = []
    for half, keep in enumerate((run_ids[:2], run_ids[2:])):
        part = tmp_path / f"part{half}"
        part.mkdir()
        for table in whole.glob("*.parquet"):
            if table.stem != "runs":
                frame = pd.read_parquet(table)
                frame[frame["run"].isin(keep)].to_parquet(part / table.name, index=False)
        runs = pq.read_table(whole / "runs.parquet").to_pandas()
        sealed.write_index(part, "runs.parquet", pa.Table.from_pandas(
            runs[runs["run_id"].isin(keep)], preserve_index=False))
        parts.append(part)
    slim(parts[0], parts[0])
    merge(parts, tmp_path / "merged")
    Results(tmp_path / "merged")            # its seal holds
    for table in whole.glob("*.parquet"):
        before, after = pd.read_parquet(table), pd.read_parquet(tmp_path / "merged" / table.name)
        by = list(before.columns)
        pd.testing.assert_frame_equal(
            before.sort_values(by).reset_index(drop=True),
            after[by].sort_values(by).reset_index(drop=True), check_dtype=False), table.name
    with pytest.raises(HotlineError, match="is in more than one of"):
        merge([parts[0], tmp_path / "merged"], tmp_path / "twice")
    # With replace, a run in two comes from the last source: part 0's runs
    # from the merged directory, whose tables are marked to tell them apart.
    marked = tmp_path / "marked"
    marked.mkdir()
    for table in (tmp_path / "merged").glob("*.parquet"):
        if table.stem != "runs":
            frame = pd.read_parquet(table)
            frame["mark"] = 1
            frame.to_parquet(marked / table.name, index=False)
    sealed.write_index(marked, "runs.parquet",
                       pq.read_table(tmp_path / "merged" / "runs.parquet"))
    merge([parts[0], marked], tmp_path / "replaced", replace=True)
    Results(tmp_path / "replaced")
    assert sorted(pd.read_parquet(tmp_path / "replaced" / "runs.parquet")["run_id"]) == \
        sorted(run_ids)
    for table in whole.glob("*.parquet"):
        if table.stem != "runs":
            after = pd.read_parquet(tmp_path / "replaced" / table.name)
            assert len(after) == len(pd.read_parquet(table)), table.name
            assert (after["mark"] == 1).all(), table.name


def o3_tiny_without_code(tmp_path: Path) -> Path:
    """analysis/o3-tiny-results as gathered results would have it: its
    code and inlined tables left out."""
    part = tmp_path / "gathered"
    part.mkdir()
    whole = paths.REPO / "analysis" / "o3-tiny-results"
    for table in whole.glob("*.parquet"):
        if table.stem not in ("runs", "code", "inlined"):
            pq.write_table(pq.read_table(table), part / table.name)
    sealed.write_index(part, "runs.parquet", pq.read_table(whole / "runs.parquet"))
    return part


def test_a_merge_makes_the_code_of_gathered_runs_and_keeps_the_slim_ones(tmp_path,
                                                                         monkeypatch):
    """Merged with slim results, gathered results' code and inlined tables
    are made for their own runs alone (from their kernels' builds, here a
    stand-in that marks what it made); the slim source's rows stay."""
    from hotline.analysis import slim as slimming
    whole = paths.REPO / "analysis" / "o3-tiny-results"
    run_ids = sorted(pd.read_parquet(whole / "runs.parquet")["run_id"])
    gathered, committed = o3_tiny_without_code(tmp_path), tmp_path / "committed"
    slimming.runs_of_spec(paths.REPO / "configs/experiments/claims-o3-tiny.toml", whole,
                          committed)
    made = []

    def code(results, runs):
        made.append(sorted(runs))
        return pd.read_parquet(whole / "code.parquet").query("run in @runs") \
            .assign(text="made")

    def inlined(results, cycles):
        return pd.read_parquet(whole / "inlined.parquet").query("run in @cycles.run") \
            .assign(function="made")
    monkeypatch.setattr(slimming, "kernel_code", code)
    monkeypatch.setattr(slimming, "kernel_inlined", inlined)
    # The committed runs from the slim source, five of them replaced by
    # the gathered source's.
    slimming.merge([committed, gathered], tmp_path / "merged", replace=True)
    assert made == [run_ids]
    code_rows = pd.read_parquet(tmp_path / "merged" / "code.parquet")
    assert (code_rows["text"] == "made").all()
    assert len(code_rows) == len(pd.read_parquet(whole / "code.parquet"))
    five = sorted(pd.read_parquet(whole / "code.parquet")["run"].unique())[:5]
    for table in gathered.glob("*.parquet"):
        if table.stem != "runs":
            frame = pd.read_parquet(table)
            frame[frame["run"].isin(five)].to_parquet(table, index=False)
    runs = pq.read_table(whole / "runs.parquet").to_pandas()
    sealed.write_index(gathered, "runs.parquet", pa.Table.from_pandas(
        runs[runs["run_id"].isin(five)], preserve_index=False))
    made.clear()
    slimming.merge([committed, gathered], tmp_path / "five", replace=True)
    assert made == [five]
    code_rows = pd.read_parquet(tmp_path / "five" / "code.parquet")
    assert set(code_rows.loc[code_rows["text"] == "made", "run"]) == set(five)
    assert len(code_rows) == len(pd.read_parquet(whole / "code.parquet"))
    inlined_rows = pd.read_parquet(tmp_path / "five" / "inlined.parquet")
    assert set(inlined_rows.loc[inlined_rows["function"] == "made", "run"]) == set(five)
    assert len(inlined_rows) == len(pd.read_parquet(whole / "inlined.parquet"))


def test_slimming_to_a_spec_keeps_only_the_runs_it_plans(tmp_path):
    """The committed O3 results against their own spec keep all their runs;
    against the spec with forkwait made longer, they lose forkwait's ten,
    whose run ids name the old length, and keep the rest whole."""
    from hotline.analysis.slim import runs_of_spec
    whole = paths.REPO / "analysis" / "o3-tiny-results"
    spec = paths.REPO / "configs" / "experiments" / "claims-o3-tiny.toml"
    runs_of_spec(spec, whole, tmp_path / "same")
    before = pd.read_parquet(whole / "runs.parquet")
    assert sorted(pd.read_parquet(tmp_path / "same" / "runs.parquet")["run_id"]) == \
        sorted(before["run_id"])
    iterations = re.search(r"iterations = (\d+), first = 1", spec.read_text())[1]
    longer = tmp_path / "longer.toml"
    longer.write_text(spec.read_text().replace(f"iterations = {iterations}, first",
                                               f"iterations = {2 * int(iterations)}, first"))
    runs_of_spec(longer, whole, tmp_path / "longer")
    Results(tmp_path / "longer")            # its seal holds
    after = pd.read_parquet(tmp_path / "longer" / "runs.parquet")
    forkwait = before.loc[before["workload"] == "lmbench-lite", "run_id"]
    assert len(forkwait) == 10
    assert sorted(after["run_id"]) == sorted(set(before["run_id"]) - set(forkwait))
    for table in whole.glob("*.parquet"):
        if table.stem != "runs":
            frame = pd.read_parquet(table)
            assert len(pd.read_parquet(tmp_path / "longer" / table.name)) == \
                (~frame["run"].isin(forkwait)).sum(), table.name


def test_the_committed_smoke_results_are_slim():
    misses = pd.read_parquet(SMOKE / "misses.parquet")
    instructions = pd.read_parquet(SMOKE / "instructions.parquet")
    pd.testing.assert_frame_equal(slim_misses(misses), misses)
    pd.testing.assert_frame_equal(slim_instructions(instructions, misses), instructions)
    coherence = pd.read_parquet(SMOKE / "coherence.parquet")
    pd.testing.assert_frame_equal(slim_coherence(coherence), coherence)


def test_the_claims_page_names_committed_results_by_their_place_in_the_repository(tmp_path):
    """A page made from the committed results names no machine's paths;
    results elsewhere keep the path they were given."""
    assert claims_page.where(SMOKE) == "analysis/smoke-results"
    assert claims_page.where(paths.REPO / "analysis" / ".." / "analysis" / "o3-tiny-results") \
        == "analysis/o3-tiny-results"
    assert claims_page.where(tmp_path / "claims-smoke") == str(tmp_path / "claims-smoke")


def page_more() -> dict[str, Path]:
    """The further columns of the committed claims page
    (analysis/smoke-results/analysis/claims.html), read from the command
    that made it in analysis/smoke-results/PROVENANCE.md, so that the page
    checked is the page that command makes."""
    made_by = [c for c in command_lines((SMOKE / "PROVENANCE.md").read_text())
               if c.startswith("analyse analysis/smoke-results ")]
    assert len(made_by) == 1, made_by
    args = cli.command_line().parse_args(shlex.split(made_by[0]))
    return {label: paths.REPO / directory
            for label, _, directory in (item.partition("=") for item in args.more)}


@pytest.fixture(scope="module")
def committed():
    """The committed claims page's columns, checked with no kernel build in
    the cache (a cache's kernels add what the committed page could not
    show), and its caption."""
    with pytest.MonkeyPatch.context() as patch, \
            tempfile.TemporaryDirectory() as cache:
        patch.setenv("HOTLINE_CACHE", str(Path(cache) / "empty-cache"))
        return claims_page.columns(SMOKE, page_more())


def test_the_committed_claims_page_is_the_committed_results_checked(committed):
    """The artifact's expected page holds the verdict table that checking
    the committed results gives now, as the notebook makes it
    (claims_page.columns, best.verdicts, verdict_table)."""
    columns, caption = committed
    table = claims_page.verdict_table(best.verdicts(claims.claims(), columns), caption=caption)
    # The caption names the results by their place in the repository, so
    # the page made here is the page checked on any machine.  Compared as
    # text, cell by cell: nbconvert rewrites the markup (<br> as <br/>,
    # quotes as entities).
    committed_page = table_texts((SMOKE / "analysis" / "claims.html").read_text())
    assert len(committed_page) > 11 * 10 and committed_page == table_texts(table)


def test_readme_gives_the_verdicts_of_the_committed_claims_page(committed):
    """README's claims table is the committed page's top table, made by the
    same function (best.verdicts) from the same committed results."""
    columns, _ = committed
    table = best.markdown(best.verdicts(claims.claims(), columns))
    assert table in (paths.REPO / "README.md").read_text()


def table_texts(page: str) -> list[str]:
    """The text of the page's claims table, its caption's, every cell's and
    its details', each piece between two of the table's own tags."""
    pieces = re.split(r"</?(?:table|caption|colgroup|col|thead|tbody|tr|td|th|details|summary)"
                      r"\b[^>]*>", outer_table(page))
    return [t for t in map(text, pieces) if t]
