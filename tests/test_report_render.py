"""The report page's HTML, from hand-made sections: every section is in the
table of contents, and every table sits in the box that scrolls it sideways
when it is wider than the window (tests/test_browser.py measures that box
in Chromium)."""

from html.parser import HTMLParser

import pandas as pd

from hotline.figures import Picture
from hotline.records.manifest import Manifest
from hotline.report import render

MANIFEST = Manifest({
    "run_id": "baseline--forkstorm-smoke--skylake-4core--r0", "hotline": {"revision": "abc"},
    "inputs": {"kernel": {"variant": "baseline", "version": "6.1.192", "key": "0" * 64},
               "system": {"name": "skylake-4core", "spec": {"cpus": 4}},
               "workload": {"name": "forkstorm", "scale": "smoke", "params": {"instances": 4}},
               "backend": {"name": "qemu", "version": "QEMU 10.0.2", "mode": "deterministic"}}})
# What a wide row of the report looks like: an instruction and its partial writes.
WIDE = pd.DataFrame({"where": ["folio_unlock+0x8"], "instruction": [
    "lock andb $0xfe,(%rdi)    [partial writes: 3,351 as the store, loaded by "
    "page_cpupid_xchg_last+0x4 1,192; page_cpupid_xchg_last+0x2a 1,192; "
    "shmem_file_read_iter+0x86 202; 5 more]"], **{f"column {n}": [n * 1000] for n in range(20)}})


def report_sections() -> list[render.Section]:
    """The report's kinds of section: with pictures, without, and many
    alike (the shared lines)."""
    picture = Picture("top-l1d", "t", b"\x89PNG", b"<svg/>")
    return [render.Section("Misses by level", "note", pd.DataFrame({"level": ["L1D"]})),
            render.Section("Top 25 instructions by L1D misses", "note", WIDE, [picture]),
            render.Section("Top 25 instructions by L2 misses", "note", WIDE),
            render.Section("page->flags: the instructions that miss", "note", WIDE),
            render.Section("Shared cache lines (c2c)", "note", WIDE),
            *(render.Section(f"Shared line struct page+{n:#x}", "note", WIDE)
              for n in (0, 0x40)),
            render.Section("Reads after partial writes", "note", pd.DataFrame())]


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
