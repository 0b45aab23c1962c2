"""Every notebook of analysis/ executes, headless, against the smoke-scale
results the project produced itself (analysis/smoke-results/, made by
configs/experiments/claims-smoke.toml: see PROVENANCE.md there).  A notebook
that raises fails its test."""

import shutil

import nbformat
import pytest

from hotline import paths
from hotline.analysis.notebooks import analyse, notebooks
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
