"""A run's report as sections (a title, a sentence saying what the table
shows, the table), rendered as plain text and as one HTML page."""

import html
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError
from hotline.kernel.build import kernel_directory
from hotline.report import tables as rt
from hotline.results.symbols import Symbolizer
from hotline.simulate import guest_log
from hotline.sweep.done import latest_attempt, read_manifest
from hotline.sweep.layout import record_path

TOP = 25            # instructions per top list
FUNCTIONS = 5       # functions listed instruction by instruction


@dataclass
class Section:
    title: str
    note: str
    table: pd.DataFrame


def kernel_dir(manifest: dict) -> Path:
    """The kernel build a run used, from its manifest (builds are cached by key)."""
    kernel = manifest["inputs"]["kernel"]
    directory = kernel_directory(kernel["variant"], kernel["key"])
    if not (directory / "vmlinux").is_file():
        raise HotlineError(f"the run's kernel build {directory.name} is not in the cache; "
                           f"rebuild it with ./hotline build-kernel {kernel['variant']} "
                           "(same inputs give the same key)")
    return directory


def redo(run_dir: Path) -> str:
    """How to have a damaged run made again."""
    run_id = run_dir.name.removesuffix(".failed")
    record = run_dir.parent / record_path(run_id, max(latest_attempt(run_dir.parent, run_id), 1))
    return (f"delete {run_dir}" + (f" and {record}" if record.exists() else "") +
            " and run its experiment again (or run it with --rerun)")


def read_run(run_dir: Path) -> dict:
    """A run's manifest, if the run has tables to report; a one-line error
    saying why not otherwise."""
    try:
        manifest = read_manifest(run_dir / "manifest.json")
    except HotlineError as e:
        raise HotlineError(f"{e}: the run is damaged: {redo(run_dir)}") from None
    if manifest.get("status") == "failed":
        raise HotlineError(f"{run_dir}: the run failed: {manifest.get('failure')}; a failed "
                           f"run has no tables to report (its guest log: "
                           f"{run_dir / guest_log.FILE})")
    if "misses" not in (manifest.get("tables") or {}):
        raise HotlineError(f"{run_dir} has no results tables: the report needs a run made "
                           "with plugin = \"hotline-cache\"")
    return manifest


def sections(run_dir: Path) -> tuple[dict, list[Section]]:
    manifest = read_run(run_dir)
    t = rt.RunTables.read(run_dir, f"the run is damaged: {redo(run_dir)}")
    try:
        vmlinux = kernel_dir(manifest) / "vmlinux"
        _header(manifest)
    except (KeyError, TypeError) as e:
        raise HotlineError(f"{run_dir / 'manifest.json'}: not a manifest the report can read "
                           f"({type(e).__name__}: {e}; written by another version of "
                           f"hotline?): {redo(run_dir)}") from None
    disasm = rt.Disassembly(Symbolizer(vmlinux), t.instructions)
    out = [Section("Misses by level", "All vCPUs together, inside the regions of interest. "
                   "Stall cycles: misses x the latency of what served them.", rt.totals(t))]
    for level in ("L1D", "L2"):
        out.append(Section(
            f"Top {TOP} instructions by {level} misses",
            f"Data accesses. % of all {level} data misses; data: the object.field most of "
            "them touched; then the misses by cause. * instruction as patched at boot.", rt.top_instructions(t, level, TOP, disasm)))
    for name in rt.top_functions(t, "L1D", FUNCTIONS):
        out.append(Section(f"{name}: annotated", "Instructions of the function that missed "
                           "(oprofile style): L1D misses, % of the function's, L2 data misses.",
                           rt.function_listing(t, name, disasm)))
    out.append(Section("struct page by field", "Misses on the struct page array (vmemmap) "
                       "by field and level; the L1D misses by cause.", rt.page_fields(t)))
    out.append(Section("page->flags: the instructions that miss", "L1D misses on "
                       "struct page's flags word, by instruction and cause.",
                       rt.field_instructions(t, "flags", TOP, disasm)))
    out.append(Section("page->flags: who stole it", "Coherence misses on page->flags: the "
                       "instruction that missed and the other CPU's write that invalidated "
                       "the line.", rt.thieves(t, "flags", TOP)))
    out.append(Section("Reads after partial writes", "A load overlapping, but not contained "
                       "in, a store still in the same CPU's store buffer.",
                       rt.partial_writes(t, TOP, disasm)))
    return manifest, out


def _header(manifest: dict) -> list[tuple[str, str]]:
    inputs = manifest["inputs"]
    w = inputs["workload"]
    return [("run", manifest["run_id"]),
            ("kernel", f"{inputs['kernel']['variant']} (Linux {inputs['kernel']['version']}, "
                       f"build {inputs['kernel']['key'][:16]})"),
            ("system", f"{inputs['system']['name']}, {inputs['system']['spec']['cpus']} CPUs"),
            ("workload", f"{w['name']} {w['scale']} "
                         + " ".join(f"{k}={v}" for k, v in sorted(w["params"].items()))),
            ("backend", f"{inputs['backend']['version']}, {inputs['backend']['mode']} mode, "
                        f"plugin {inputs['backend']['plugin']['name']}"),
            ("hotline", manifest["hotline"]["revision"])]


def _format(table: pd.DataFrame) -> pd.DataFrame:
    return table.apply(lambda c: c.map(lambda v: f"{v:.1f}") if c.dtype == float else c)


def as_text(manifest: dict, report: list[Section]) -> str:
    lines = [f"{k:9} {v}" for k, v in _header(manifest)]
    for s in report:
        lines += ["", s.title, "=" * len(s.title), s.note, ""]
        lines.append(_format(s.table).to_string(index=False) if len(s.table) else "(none)")
    return "\n".join(lines) + "\n"


STYLE = """body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:90%}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td:nth-child(-n+4){text-align:left;font-family:monospace}h2{margin-top:2em}"""


def as_html(manifest: dict, report: list[Section]) -> str:
    parts = [f"<!doctype html><meta charset=utf-8><title>hotline report "
             f"{html.escape(manifest['run_id'])}</title><style>{STYLE}</style>",
             "<h1>hotline report</h1><table>"]
    parts += [f"<tr><th>{k}</th><td>{html.escape(v)}</td></tr>" for k, v in _header(manifest)]
    parts.append("</table>")
    for s in report:
        parts.append(f"<h2>{html.escape(s.title)}</h2><p>{html.escape(s.note)}</p>")
        parts.append(_format(s.table).to_html(index=False) if len(s.table) else "<p>(none)</p>")
    return "\n".join(parts) + "\n"


def write_report(run_dir: Path) -> tuple[str, Path, Path]:
    manifest, report = sections(run_dir)
    text = as_text(manifest, report)
    text_path, html_path = run_dir / "report.txt", run_dir / "report.html"
    text_path.write_text(text)
    html_path.write_text(as_html(manifest, report))
    return text, text_path, html_path
