"""The report's commands on a real run (the demo's fork storm, booted
here): the report's pictures load in Chromium with its tables and a
screenshot is kept in the run directory; annotate shows folio_unlock's
`lock andb` with its misses and partial writes; the pprof export's totals
are the tables'; the shared-line table agrees with the misses table."""

import re
import shutil
import subprocess

import pandas as pd
import pytest

from hotline import paths
from hotline.experiment import run_experiment
from hotline.report import browser, pprof
from hotline.report.annotate import write_annotation
from hotline.report.c2c import SharedLines
from hotline.report.render import PICTURES, write_report
from hotline.report.run import Run
from tests.conftest import expected_totals, go_pprof_raw, require_tools

pytestmark = pytest.mark.boot
DEMO = paths.CONFIGS / "experiments" / "demo.toml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp_path_factory.mktemp("results")))
        (result,) = run_experiment(DEMO)
    assert result.failure is None
    return result.directory


def table(run_dir, name) -> pd.DataFrame:
    return pd.read_parquet(run_dir / f"{name}.parquet")


def test_the_report_shows_its_pictures_in_a_browser(run_dir):
    if browser.chromium() is None:
        pytest.skip("needs chromium (scripts/apt-packages.txt; ./hotline test installs it)")
    text, _, html_path = write_report(run_dir)
    pictures = sorted(p.stem for p in (run_dir / PICTURES).glob("*.png"))
    assert {"struct-page", "top-l1d", "page-flags-thieves"} <= set(pictures)
    assert len([p for p in pictures if p.startswith("function-")]) == 5
    assert all((run_dir / PICTURES / f"{p}.svg").is_file() for p in pictures)
    screenshot = run_dir / "report.png"
    shown = browser.render(html_path, screenshot)
    assert len(shown.images) == len(pictures) and all(i.loaded for i in shown.images)
    alts = " ".join(i.alt for i in shown.images)
    for title in ("struct page: misses by field and level", "who stole it from whom",
                  "by cause", "along the function's addresses"):
        assert title in alts
    for heading in ("Misses by level", "struct page by field", "page->flags: who stole it",
                    "Shared cache lines (c2c)"):
        assert heading in shown.headings
    assert shown.tables >= len(shown.headings) - 1
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_annotate_shows_the_lock_andb_with_its_misses_and_partial_writes(run_dir):
    insns = table(run_dir, "instructions")
    locked = insns[(insns["symbol"] == "folio_unlock") & (insns["kind"] == "rmw")]
    (pc,) = locked["pc"].unique()
    text, text_path, html_path = write_annotation(run_dir, "folio_unlock")
    (row,) = [line for line in text.splitlines() if f"{pc:x}:" in line]
    assert "lock andb $0xfe,(%rdi)" in row
    misses = table(run_dir, "misses")
    at = misses[misses["pc"] == pc].groupby("level")["count"].sum()
    levels = [lv for lv in ("L1I", "L1D", "L2", "L3") if lv in set(misses["level"])]
    shown = row.split()[:len(levels)]
    assert shown == [f"{int(at.get(lv, 0)):,}" for lv in levels]
    rapw = table(run_dir, "rapw")
    events = int(rapw.loc[rapw["store_pc"] == pc, "count"].sum())
    assert events > 0 and f"partial writes: {events:,} as the store" in row
    assert "bitops.h" in text and "folio_unlock" in text
    assert "lock andb" in html_path.read_text() and text_path.read_text() == text


def annotate_header(text: str, function: str) -> str:
    """The header line of an annotation of `function` in `text`."""
    (line,) = [line.strip() for line in text.splitlines()
               if re.match(rf"\s*{function} \(0x[0-9a-f]+, 0x[0-9a-f]+ bytes\):", line)]
    return line


def test_the_docs_annotate_example_is_the_demos_own(run_dir):
    # The demo is deterministic: the page's figures are this run's, not an
    # older build's that would read as figures that wander.
    page = (paths.REPO / "docs" / "results-and-report.md").read_text()
    text, _, _ = write_annotation(run_dir, "folio_unlock")
    assert annotate_header(page, "folio_unlock") == annotate_header(text, "folio_unlock")


def test_the_pprof_export_totals_are_the_tables(run_dir):
    path = pprof.export_run(run_dir)
    misses = table(run_dir, "misses")
    assert pprof.totals(pprof.read(path)) == expected_totals(misses)
    if shutil.which("go") is None:
        pytest.skip("needs Go for go tool pprof (decoded with hotline's pprof.proto above)")
    types, sums = go_pprof_raw(path)
    assert dict(zip(types, sums)) == expected_totals(misses)
    top = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=L1D-misses", str(path)],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    total = int(misses.loc[misses["level"] == "L1D", "count"].sum())
    assert re.search(rf"of {total} total", top)


def test_the_shared_lines_agree_with_the_misses_table(run_dir):
    run = Run.read(run_dir)
    lines = SharedLines.of_run(run).lines().set_index("line")
    misses = table(run_dir, "misses")
    page = misses[(misses["object"] == "struct page") & (misses["level"] == "L1D")]
    for cause in ("coherence", "upgrade"):
        assert lines.loc["struct page+0x0", cause] == page.loc[page["cause"] == cause,
                                                                 "count"].sum()
    sharing = misses[(misses["level"] == "L1D") & misses["cause"].isin(["coherence", "upgrade"])]
    assert lines["coherence"].sum() + lines["upgrade"].sum() == sharing["count"].sum()
