"""A run's report as sections (a title, a sentence saying what the table
shows, the table, and pictures), rendered as plain text and as one HTML page
with the pictures embedded; the pictures are also written as PNG and SVG
in the run directory's pictures/."""

import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hotline import outputs
from hotline.figures import Picture
from hotline.report import c2c
from hotline.report import pictures as pic
from hotline.report import tables as rt
from hotline.records.manifest import Manifest
from hotline.report.run import Run, header
from hotline.results.schema import CAUSES, UNKNOWN_CAUSE

TOP = 25            # instructions per top list
FUNCTIONS = 5       # functions listed instruction by instruction
PAIRS = 15          # (missing, stealing) instruction pairs in the picture
C2C_LINES = 15      # shared lines listed offset by offset
C2C_ROWS = 30       # rows per shared line listed
PICTURES = "pictures"   # the run directory's folder of picture files


@dataclass
class Section:
    title: str
    note: str
    table: pd.DataFrame
    pictures: list[Picture] = field(default_factory=list)


def sections(run_dir: Path) -> tuple[dict, list[Section]]:
    run = Run.read(run_dir)
    t, disasm = run.tables, run.disassembly
    out = [Section("Misses by level", "All vCPUs together, inside the regions of interest. "
                   "Stall cycles: misses x the latency of what served them.", rt.totals(t))]
    for level in ("L1D", "L2"):
        top = rt.top_instructions(t, level, TOP, disasm)
        out.append(Section(
            f"Top {TOP} instructions by {level} misses",
            f"Data accesses. % of all {level} data misses; data: the object.field most of "
            "them touched; then the misses by cause. * instruction as patched at boot.", top,
            [_top_picture(top, level)] if level == "L1D" and len(top) else []))
    for name in rt.top_functions(t, "L1D", FUNCTIONS):
        listing = rt.function_listing(t, name, disasm)
        out.append(Section(f"{name}: annotated", "Instructions of the function that missed "
                           "(oprofile style): L1D misses, % of the function's, L2 data misses. "
                           f"Source interleaved: ./hotline annotate RUN {name}.",
                           listing, [_function_picture(run, name, listing)]))
    out.append(Section("struct page by field", "Misses on the struct page array (vmemmap) "
                       "by field and level; the L1D misses by cause.", rt.page_fields(t),
                       [_page_picture(run)]))
    out.append(Section("page->flags: the instructions that miss", "L1D misses on "
                       "struct page's flags word, by instruction and cause.",
                       rt.field_instructions(t, "flags", TOP, disasm)))
    thieves = rt.thieves(t, "flags", TOP)
    out.append(Section("page->flags: who stole it", "Coherence misses on page->flags: the "
                       "instruction that missed, the other CPU's write that invalidated "
                       "the line, and the struct page field that write touches (the one "
                       "its own misses touched most; another field than flags is false "
                       "sharing)." + _unmeasured(run, "coherence"), thieves,
                       [_thief_picture(run, thieves)] if len(thieves) else []))
    out += _c2c_sections(run)
    out.append(Section("Reads after partial writes", "A load overlapping, but not contained "
                       "in, a store still in the same CPU's store buffer." +
                       _unmeasured(run, "rapw"), rt.partial_writes(t, TOP, disasm)))
    return run.manifest, out


# What a backend that does not make a table leaves out, said where the table
# would be used.
UNMEASURED = {
    "coherence": "which write took each line away (the cache model's coherence table)",
    "rapw": "reads after partial writes (the QEMU cache model's store buffer; gem5 makes "
            "no such table: its O3 cores' cycle profile charges the time such a read takes)",
}


def _unmeasured(run: Run, table: str) -> str:
    if table not in run.tables.absent:
        return ""
    backend = run.manifest.backend
    return f" Not measured: backend {backend} does not record {UNMEASURED[table]}."


def _top_picture(top: pd.DataFrame, level: str) -> Picture:
    labels = [f"{w}  {i}" for w, i in zip(top["where"], top["instruction"])]
    return pic.cause_bars(f"top-{level.lower()}", f"Top {len(top)} instructions by {level} "
                          "data misses, by cause", labels,
                          top[[c for c in (*CAUSES, UNKNOWN_CAUSE) if c in top]],
                          f"{level} misses")


def _function_picture(run: Run, name: str, listing: pd.DataFrame) -> Picture:
    symbol = run.symbolizer.function_named(name)
    l1d, l2 = rt.function_profile(run.tables, name)
    busiest = l1d.sum(axis=1).sort_values(ascending=False, kind="stable").head(3)
    text = dict(zip(listing["address"], listing["instruction"])) if len(listing) else {}
    start = symbol.start if symbol else 0
    marks = {int(o): f"+{int(o):#x} {text.get(f'{start + int(o):x}', '')}"
             for o in busiest.index}
    size = symbol.size if symbol else int(max([*l1d.index, *l2.index, 0])) + 16
    return pic.along_function(f"function-{file_name(name)}", name, size, l1d, l2, marks)


def _page_picture(run: Run) -> Picture:
    layout, misses = run.layout, rt.page_field_misses(run.tables)
    return pic.struct_page("struct-page", misses, rt.page_layout(layout), int(layout["sizeof"]),
                           run.line_bytes, rt.page_boxes(layout, set(misses["field"])))


def _thief_picture(run: Run, thieves: pd.DataFrame) -> Picture:
    pairs = thieves.head(PAIRS)
    fields = [f" [{f.removeprefix(rt.PAGE + '.')}]" if f else ""
              for f in pairs["the write's field"]]
    return pic.cpu_matrix("page-flags-thieves", "flags",
                          rt.thief_matrix(run.tables, "flags", run.cpus),
                          [f"{m} <- {s}{f}" for m, s, f in zip(pairs["missed at"],
                                                                 pairs["stolen by the write at"],
                                                                 fields)],
                          [int(n) for n in pairs["misses"]])


def _c2c_sections(run: Run) -> list[Section]:
    shared = c2c.SharedLines.of_run(run)
    lines = shared.lines()
    out = [Section("Shared cache lines (c2c)", "Every data line with coherence misses or "
                   "upgrades (perf c2c style), most first. struct page's lines are those of "
                   "all pages together, by field; kernel-other and user lines are not told "
                   "apart (the tables keep no address for them)." +
                   _unmeasured(run, "coherence"), lines)]
    for key in lines["line"].head(C2C_LINES):
        out.append(Section(f"Shared line {key}", f"Per offset in the {run.line_bytes}-byte "
                           "line: the instructions that missed on it (coherence, upgrade) and "
                           "the CPUs that ran them; then the writes that took the line from "
                           f"them, with the field each write usually touches (top {C2C_ROWS}).",
                           shared.offsets(key, C2C_ROWS)))
    return out


def file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _format(table: pd.DataFrame) -> pd.DataFrame:
    return table.apply(lambda c: c.map(lambda v: f"{v:.1f}") if c.dtype == float else c)


def as_text(manifest: Manifest, report: list[Section]) -> str:
    return as_text_sections([f"{k:9} {v}" for k, v in header(manifest)], report)


def as_text_sections(lines: list[str], report: list[Section]) -> str:
    """The head lines, then each section: title, note, table, pictures."""
    lines = list(lines)
    for s in report:
        lines += ["", s.title, "=" * len(s.title), s.note, ""]
        lines.append(_format(s.table).to_string(index=False) if len(s.table) else "(none)")
        for p in s.pictures:
            lines.append(f"picture: {PICTURES}/{p.name}.png ({p.title})")
    return "\n".join(lines) + "\n"


# A table wider than the window (an instruction with its partial writes, a
# c2c line's fields) scrolls inside its own box, so that the page keeps
# the window's width and the other sections do not move.
STYLE = """body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:90%}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td:nth-child(-n+4){text-align:left;font-family:monospace}h2{margin-top:2em}
div.table{overflow-x:auto;max-width:100%}
figure{margin:1em 0}figure img{max-width:100%}figcaption{font-size:85%;color:#555}
nav ol{columns:3 20em;margin:0;padding-left:2em}"""


def table_html(table: str) -> str:
    """An HTML table in the box that lets it scroll sideways."""
    return f'<div class="table">{table}</div>'


def page(title: str, head: list[tuple[str, str]], body: list[str]) -> str:
    """One self-contained HTML page: a title, a table of (name, value) lines,
    then body."""
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                   for k, v in head)
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style>", f"<h1>{html.escape(title)}</h1>",
             table_html(f"<table>{rows}</table>")]
    return "\n".join(parts + body) + "\n"


def section_html(s: Section, link_dir: str = PICTURES) -> str:
    anchor = file_name(s.title)
    parts = [f'<h2 id="{anchor}">{html.escape(s.title)}</h2><p>{html.escape(s.note)}</p>']
    parts += [p.html(link_dir) for p in s.pictures]
    parts.append(table_html(_format(s.table).to_html(index=False)) if len(s.table)
                 else "<p>(none)</p>")
    return "\n".join(parts)


def contents(report: list[Section]) -> str:
    """The page's table of contents: every section, in order."""
    return "<nav><ol>" + "".join(f'<li><a href="#{file_name(s.title)}">'
                                 f"{html.escape(s.title)}</a></li>" for s in report) + \
        "</ol></nav>"


def as_html(manifest: Manifest, report: list[Section]) -> str:
    return page(f"hotline report {manifest.run_id}", header(manifest),
                [contents(report), *(section_html(s) for s in report)])


def write_report(run_dir: Path) -> tuple[str, Path, Path]:
    manifest, report = sections(run_dir)
    text = as_text(manifest, report)
    text_path, html_path = run_dir / "report.txt", run_dir / "report.html"
    for s in report:
        for p in s.pictures:
            p.write(run_dir / PICTURES)
    outputs.write_text(text_path, text, sync=False)
    outputs.write_text(html_path, as_html(manifest, report), sync=False)
    return text, text_path, html_path
