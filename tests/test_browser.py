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
from tests.test_notebooks import SMOKE, copy_gathered

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
