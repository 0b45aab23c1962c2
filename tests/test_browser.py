"""Pages checked as a real browser renders them (headless Chromium): the
checker sees pictures that loaded and one that did not, and the claims page
renders with its tables.  The report of a real run is checked the same way
in tests/test_report_run.py."""

import base64
import io

import pytest
from PIL import Image

from hotline.analysis.notebooks import analyse
from hotline.report import browser
from tests.conftest import MANIFEST, SMOKE, WIDE, copy_gathered, report_sections

pytestmark = pytest.mark.skipif(browser.chromium() is None,
                                reason="needs chromium (scripts/apt-packages.txt; "
                                       "./hotline test installs it)")


def png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "red").save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_the_browser_sees_loaded_and_broken_pictures(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(f"""<!doctype html><title>t</title><h1>one</h1><h2>two</h2>
<img alt="good" src="data:image/png;base64,{png(30, 20)}">
<img alt="broken" src="data:image/png;base64,bm90IGEgcGljdHVyZQ==">
<img alt="missing" src="no-such-file.png">
<table><tr><td>1</td></tr><tr><td>2</td></tr></table>""")
    shown = browser.render(page, tmp_path / "page.png")
    images = {i.alt: i for i in shown.images}
    assert images["good"].loaded and (images["good"].width, images["good"].height) == (30, 20)
    assert not images["broken"].loaded and not images["missing"].loaded
    assert (shown.tables, shown.rows, shown.headings) == (1, 2, ["one", "two"])
    assert Image.open(tmp_path / "page.png").size[1] >= 20


def test_the_claims_page_renders_with_its_tables(tmp_path):
    results = tmp_path / "claims-smoke"
    copy_gathered(results)
    pages = analyse(results)
    screenshot = results / "analysis" / "claims.png"
    shown = browser.render(pages["claims"], screenshot)
    assert shown.tables >= 1 and shown.rows > 11          # a row per claim, at least
    assert all(i.loaded for i in shown.images)
    for n in range(1, 12):
        assert f"C{n}: " in shown.text
    assert Image.open(screenshot).format == "PNG"


def test_the_diff_page_shows_its_picture(tmp_path):
    from hotline.report import diff
    a, b = diff.sides_of_experiment(SMOKE, ("baseline", "pte-chain"), "forkstorm",
                                    "pentium3-4way")
    _, _, page = diff.write_diff(diff.diff(a, b), tmp_path)
    shown = browser.render(page, tmp_path / "diff.png")
    assert len(shown.images) == 1 and shown.images[0].loaded
    assert shown.tables >= 4 and "pte_chain_remove" in shown.text


def test_a_page_taller_than_one_screenshot_is_taken_whole_in_parts(tmp_path):
    """A report is taller than Chromium's largest screenshot (16,384 px):
    it is taken in parts, each at most SCREENSHOT_HEIGHT, that together
    are the page (before, report.png stopped at 16,000 px and the console
    said nothing of what was left out); parts of an earlier, taller page
    are removed."""
    tall = 2 * browser.SCREENSHOT_HEIGHT + 1234
    page = tmp_path / "report.html"
    page.write_text(f"""<!doctype html><title>t</title><style>body{{margin:0}}</style>
<div style="height:{tall - 100}px;background:#eee">top</div>
<h2>the last section</h2><img alt="last" src="data:image/png;base64,{png(30, 20)}">
<div style="height:{100 - 20 - 40}px"></div>""")
    (tmp_path / "report-4.png").write_bytes(b"an earlier part")
    shown = browser.render(page, tmp_path / "report.png")
    assert shown.screenshots == [tmp_path / "report.png", tmp_path / "report-2.png",
                                 tmp_path / "report-3.png"]
    heights = [Image.open(p).size[1] for p in shown.screenshots]
    assert heights[:2] == [browser.SCREENSHOT_HEIGHT] * 2 and sum(heights) == shown.height
    assert shown.height >= tall - 100 and not (tmp_path / "report-4.png").exists()
    # The last part holds the last picture (red): the page's end is in it.
    last = Image.open(shown.screenshots[-1]).convert("RGB")
    assert (255, 0, 0) in {c for _, c in last.getcolors(1 << 16)}
    line = browser.summary(page, shown)
    assert "1 of 1 pictures loaded" in line and "in 3 parts" in line
    assert all(str(p) in line for p in shown.screenshots)


def test_a_reports_wide_tables_scroll_inside_the_window(tmp_path):
    """At the width pages are read at, a report whose tables are wider than
    the window is not: each table scrolls in its own box."""
    from hotline.report import render
    page = tmp_path / "report.html"
    page.write_text(render.as_html(MANIFEST, report_sections()))
    shown = browser.render(page, tmp_path / "report.png")
    assert shown.overflow == 0 and Image.open(shown.screenshot).size[0] == browser.WIDTH
    assert "wider than" not in browser.summary(page, shown)
    # The negative control: the same table outside its box widens the page.
    bare = tmp_path / "bare.html"
    bare.write_text(render.page("t", [], [WIDE.to_html(index=False)]))
    shown = browser.render(bare)
    assert shown.overflow > 0
    assert f"px wider than the {browser.WIDTH:,}-px window" in browser.summary(bare, shown)


def test_parts_of_a_screenshot():
    from pathlib import Path
    h = browser.SCREENSHOT_HEIGHT
    assert browser.screenshot_parts(Path("r/report.png"), 100) == [(Path("r/report.png"), 0, 100)]
    assert browser.screenshot_parts(Path("r/report.png"), h) == [(Path("r/report.png"), 0, h)]
    assert browser.screenshot_parts(Path("r/report.png"), h + 1) == [
        (Path("r/report.png"), 0, h), (Path("r/report-2.png"), h, 1)]
