"""Every notebook of analysis/ executes, headless, against the smoke-scale
results the project produced itself (analysis/smoke-results/, made by
configs/experiments/claims-smoke.toml and slimmed to what the notebooks read:
see PROVENANCE.md there).  A notebook that raises fails its test.  The
slimming keeps every measure the notebooks take, and the committed results
are its output."""

import shutil

import nbformat
import pandas as pd
import pytest

from hotline import paths
from hotline.analysis.cost import function_shares, instruction_listing, run_cost
from hotline.analysis.listing import lock_and_unlock
from hotline.analysis.notebooks import analyse, notebooks
from hotline.analysis.slim import slim_instructions, slim_misses
from hotline.errors import HotlineError

SMOKE = paths.REPO / "analysis" / "smoke-results"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    results = tmp_path_factory.mktemp("smoke") / "claims-smoke"
    shutil.copytree(SMOKE, results)
    return analyse(results), results


def test_every_notebook_renders(pages):
    rendered, _ = pages
    assert sorted(rendered) == sorted(p.stem for p in notebooks())
    for page in rendered.values():
        assert "<html" in page.read_text()[:2000].lower()


def test_the_claims_page_has_a_verdict_for_every_claim(pages):
    _, results = pages
    executed = nbformat.read(results / "analysis" / "claims.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code"
                      for o in c.get("outputs", []) if o.get("name") == "stdout")
    for n in range(1, 12):
        assert f"C{n}: " in printed
    verdicts = [line.split(": ")[1] for line in printed.splitlines()
                if line.startswith("C") and ": " in line]
    assert set(verdicts) <= {"supported", "not supported", "inconclusive"}


def test_a_failed_analysis_leaves_no_pages(tmp_path):
    """Pages from an earlier analysis go before anything runs, so a notebook
    that raises leaves none that could be taken for its result."""
    results = tmp_path / "claims-smoke"
    shutil.copytree(SMOKE, results)
    (results / "analysis").mkdir()
    for notebook in notebooks():
        (results / "analysis" / f"{notebook.stem}.html").write_text("<html>earlier</html>")
    (results / "misses.parquet").write_bytes(b"not a parquet file")
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


def test_the_committed_smoke_results_are_slim():
    misses = pd.read_parquet(SMOKE / "misses.parquet")
    instructions = pd.read_parquet(SMOKE / "instructions.parquet")
    pd.testing.assert_frame_equal(slim_misses(misses), misses)
    pd.testing.assert_frame_equal(slim_instructions(instructions, misses), instructions)
