"""The report page's HTML, from hand-made sections: every section is in the
table of contents, and every table sits in the box that scrolls it sideways
when it is wider than the window (tests/test_browser.py measures that box
in Chromium)."""

from html.parser import HTMLParser

from hotline.report import render
from tests.conftest import MANIFEST, report_sections


class Outline(HTMLParser):
    """A page's section ids, its contents' links, and where its tables are."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.tables, self.open = [], [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":
            self.ids.append(attrs.get("id"))
        if tag == "a" and "nav" in self.open:
            self.links.append(attrs.get("href"))
        if tag == "table":
            self.tables.append(list(self.open))
        self.open.append(f"{tag}.{attrs['class']}" if "class" in attrs else tag)

    def handle_endtag(self, tag):
        while self.open and self.open.pop().split(".")[0] != tag:
            pass


def outline(page: str) -> Outline:
    parsed = Outline()
    parsed.feed(page)
    return parsed


def test_every_section_is_in_the_contents():
    parsed = outline(render.as_html(MANIFEST, report_sections()))
    assert len(parsed.ids) == 8 and len(set(parsed.ids)) == 8
    assert parsed.links == [f"#{anchor}" for anchor in parsed.ids]


def test_every_table_scrolls_inside_its_section():
    parsed = outline(render.as_html(MANIFEST, report_sections()))
    # The head's table and one per section that has rows.
    assert len(parsed.tables) == 1 + 7
    assert all(enclosing[-1] == "div.table" for enclosing in parsed.tables)
    assert "div.table{overflow-x:auto" in render.STYLE
