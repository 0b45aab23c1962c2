"""The claims page (analysis/claims.ipynb) as HTML pieces: at the top one
table, a row per claim with the project's verdict (the best evidence among
the columns, claims/best.py, which README's table is made by too): the
seed's figure, the measured one, the verdict, the column that decided it and
the negative control; under each row, folded, every column's figure and
verdict (a column is one set of results: QEMU, gem5, QEMU with 32-byte
lines, ...).  Then a section per claim with its rule and, where a picture
says more than a number, one picture.  The checks are the claims
package's; this module only lays them out and draws (matplotlib's object API, as the run
report's pictures, with the same hotline.figures).

A column without results is "not run" in the table; a claim's picture
shows the columns that measured it, beside the seed where the seed gave
the same measure.
"""

import base64
import html
import zlib
from pathlib import Path
from typing import Callable

import matplotlib
from matplotlib.figure import Figure

from hotline import paths
from hotline.analysis.claims import (
    CLAIMS, INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED, Check, Claim, check_all)
from hotline.analysis.claims import best
from hotline.analysis.claims.best import Column, Verdict
from hotline.analysis.claims import c01, c02, c05, c06, c07
from hotline.analysis.claims.common import BASE, CHAIN, FORK, SIDE_BASE, SIDE_CHAIN
from hotline.analysis import ground_truth
from hotline.analysis.claims.seeds import SEED_FILES
from hotline.analysis.results import Results
from hotline.figures import STYLE, picture

NOT_RUN = "not run"
VERDICT_COLOURS = {SUPPORTED: "#d4edda", NOT_SUPPORTED: "#f8d7da", INCONCLUSIVE: "#fff3cd",
                   NOT_RUN: "#eeeeee"}
SEED_COLOUR = "#9e9e9e"
# The two backends' own colours, and those of further columns by name.
COLUMN_COLOURS = {"QEMU": "#4c72b0", "gem5": "#dd8452"}
MORE_COLOURS = ("#55a868", "#8172b3", "#937860", "#da8bc3", "#64b5cd")

# {column label: that column's check of one claim}; a column not run is absent.
Measured = dict[str, Check]


def column_colour(name: str) -> str:
    """A column's colour in every picture: the backend's own, else one
    fixed by the name (zlib.crc32, not hash(), which varies per process)."""
    if name in COLUMN_COLOURS:
        return COLUMN_COLOURS[name]
    return MORE_COLOURS[zlib.crc32(name.encode()) % len(MORE_COLOURS)]


def column_label(backends: list[str]) -> str:
    """The column of results made by these backends: "QEMU" or "gem5"."""
    names = {"qemu": "QEMU", "gem5": "gem5"}
    return "/".join(names.get(b, b) for b in backends) or "no runs"


def where(directory) -> str:
    """A results directory as the page names it: inside the repository (the
    committed expected results) relative to it, so that a committed page
    names no machine's paths; elsewhere as given."""
    path = Path(directory).resolve()
    return str(path.relative_to(paths.REPO)) if path.is_relative_to(paths.REPO) else \
        str(directory)


def columns(results_dir, more: dict) -> tuple[list[Column], str]:
    """Every claim checked against each column's results, in the page's
    order: the first results, gem5's ("not run" unless given), then `more`
    ({label: directory}); and the table's caption, saying what each column
    holds."""
    first = Results(results_dir)
    directories = {column_label(first.backends): results_dir}
    directories.setdefault("gem5", None)
    directories.update(more)
    found, holds = [], []
    for label, directory in directories.items():
        if directory is None:
            found.append(best.not_run(label))
            holds.append(f"{label}: not run")
            continue
        results = first if directory == results_dir else Results(directory)
        found.append(best.column(label, results, check_all(results), list(CLAIMS.values())))
        holds.append(f"{label}: {len(results.ok)} of {len(results.runs)} runs succeeded in "
                     f"{where(directory)}")
    return found, "; ".join(holds)


def _e(text: str) -> str:
    return html.escape(str(text))


def _anchor(claim: str) -> str:
    return claim.lower()


def _cell(content: str, tag: str = "td", background: str = "", colspan: int = 1) -> str:
    """A table cell, left-aligned (notebook styles right-align cells: fine
    for numbers, hard to read for sentences)."""
    colour = f"background:{background};" if background else ""
    span = f' colspan="{colspan}"' if colspan > 1 else ""
    return (f'<{tag}{span} style="text-align:left;vertical-align:top;{colour}">'
            f'{content}</{tag}>')


def _verdict_cell(check: Check | None, reason: bool = False) -> str:
    """The verdict, coloured; with its reason under it where `reason`."""
    verdict = check.verdict if check else NOT_RUN
    why = f"<br><small>{_e(check.reason)}</small>" if reason and check and check.reason else ""
    return _cell(_e(verdict) + why, background=VERDICT_COLOURS[verdict])


def _figure_cell(check: Check | None) -> str:
    if check is None:
        return _cell("-")
    reason = f'<br><small>{_e(check.reason)}</small>' if check.reason else ""
    runs = f"{check.repeats} runs" if check.repeats > 1 else "1 run: no interval"
    measure = f'<br><small>decided on {_e(check.measure or "-")}; {runs}</small>'
    control = (f"<br><small>control {_e(check.control.design)}: "
               f"{_e(check.control.verdict)}</small>" if check.control else "")
    return _cell(f"{_e(check.measured)}{reason}{measure}{control}")


def _figure(check: Check, name: str) -> float:
    """The mean over the repeats of one of the check's figures."""
    return check.numbers["intervals"][name][0]


def verdict_table(verdicts: list[Verdict], caption: str = "") -> str:
    """The table at the top of the page: one row per claim with the
    project's verdict (best.py: the best evidence among the columns, and
    which column gave it), and under it, folded, every column's figure and
    verdict."""
    widths = (15, 17, 25, 20, 15, 8)        # % of the page, in best.HEAD's order
    cols = "".join(f'<col style="width:{w}%">' for w in widths)
    head = "".join(_cell(_e(name), "th") for name in best.HEAD)
    rows = []
    for verdict in verdicts:
        claim, check, text = verdict.claim, verdict.check, best.row(verdict)
        name = (f'<a href="#{_anchor(claim.id)}">{claim.id}</a>: {_e(claim.title)}'
                f"<br><small>evidence: {_evidence(claim)}</small>")
        rows.append(
            f"<tr>{_cell(name)}{_cell(_e(text['seed figure']))}{_cell(_e(text['measured']))}"
            f"{_verdict_cell(check, reason=True)}"
            f"{_cell(_e(text['decided by']))}{_cell(_e(text['control']))}</tr>"
            f'<tr class="detail">{_cell(_detail(verdict), colspan=len(best.HEAD))}</tr>')
    caption = (f'<caption style="text-align:left"><small>{_e(caption)}</small></caption>'
               if caption else "")
    return (f'<table class="claims" style="width:100%;table-layout:fixed;'
            f'overflow-wrap:anywhere">{caption}<colgroup>{cols}</colgroup>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _detail(verdict: Verdict) -> str:
    """Every column's figure and verdict of one claim, folded under its row,
    in the rule's order: the deciding column first, and marked."""
    head = "".join(_cell(name, "th") for name in ("results", "measured", "verdict",
                                                   "decided on", "control"))
    rows = []
    for column in verdict.every:
        check = column.checks.get(verdict.claim.id)
        label = _e(column.label) + (" <b>(decides)</b>" if column is verdict.column else "")
        on = best.decided_on(column, check) if check else "-"
        rows.append(f"<tr>{_cell(label)}{_cell(_e(check.measured) if check else '-')}"
                    f"{_verdict_cell(check, reason=True)}{_cell(_e(on))}"
                    f"{_cell(_e(best.control(check)))}</tr>")
    measured = sum(best.measured(c.checks.get(verdict.claim.id)) for c in verdict.every)
    return (f"<details><summary>every column, in the rule's order: {measured} of "
            f"{len(verdict.every)} measured {verdict.claim.id}</summary>"
            f'<table style="width:100%;table-layout:fixed;overflow-wrap:anywhere">'
            f'<colgroup><col style="width:15%"><col style="width:35%"><col style="width:25%">'
            f'<col style="width:15%"><col style="width:10%"></colgroup>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></details>")


def _evidence(claim: Claim) -> str:
    return f'<a href="{claim.evidence}.html">{claim.evidence}</a>'


def section(claim: Claim, measured: Measured, columns: list[str]) -> str:
    """A claim's section: what it is, its rule, what each column measured."""
    head = "".join(_cell(name, "th") for name in ("results", "measured", "verdict"))
    rows = "".join(
        f"<tr>{_cell(_e(b))}{_figure_cell(measured.get(b))}{_verdict_cell(measured.get(b))}</tr>"
        for b in columns)
    return (f'<h2 id="{_anchor(claim.id)}">{claim.id}: {_e(claim.title)}</h2>'
            f"<p><b>Seed</b> ({SEED_FILES[claim.seed]}): {_e(claim.seed_figure)}</p>"
            f"<p><b>Experiment</b>: {_e(claim.experiment)}</p>"
            f"<p><b>Rule</b>: {_e(claim.rule.text())}</p>"
            f"<p><b>Negative control</b>: {_e(_control(claim))}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            f"{_on_the_host(claim)}"
            f"<p><b>Evidence</b>: {_evidence(claim)}</p>"
            f"<details><summary>The rule's history</summary><ul>"
            f"{''.join(f'<li>{_e(h)}</li>' for h in claim.history)}</ul></details>")


def _on_the_host(claim: Claim) -> str:
    """What the host's own cores measured of the patterns the claim's
    verdicts rest on (ground_truth.py), or ""."""
    host, found = ground_truth.for_claim(claim.id)
    if not found:
        return ""
    items = "".join(f"<li>{_e(ground_truth.describe(d))}</li>" for d in found)
    return (f"<p><b>On the host's own cores</b> ({_e(host)}; "
            f"{_e(where(ground_truth.HOST))}; what each figure says of the models' "
            f"assumptions: docs/groundtruth.md):</p><ul>{items}</ul>")


def _control(claim: Claim) -> str:
    return (f"{claim.control.design}, which must come out {NOT_SUPPORTED}: {claim.control.why}"
            if claim.control else f"none: {claim.no_control}")


def sections(claims: list[Claim], columns: list[Column]) -> str:
    """Every claim's section, each with its picture."""
    out = []
    for claim in claims:
        measured = {c.label: c.checks[claim.id] for c in columns if claim.id in c.checks}
        out.append(section(claim, measured, [c.label for c in columns]) +
                   picture_html(claim, measured))
    return "".join(out)


def picture_html(claim: Claim, measured: Measured) -> str:
    """The claim's picture as an embedded PNG, or "" where a number says it
    (or no backend measured what the picture shows)."""
    draw = PICTURES.get(claim.id)
    shown = {b: c for b, c in measured.items() if c.numbers}
    if draw is None or not shown:
        return ""
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(7.5, 3.2), layout="constrained")
        title = draw(figure, shown)
    png = picture(figure, claim.id.lower(), title).png
    return (f'<figure><img src="data:image/png;base64,{base64.b64encode(png).decode()}" '
            f'alt="{_e(title)}"><figcaption>{_e(title)}</figcaption></figure>')


# The pictures: each draws into the figure and returns its caption. ---------

def _bars(ax, groups: list[str], series: dict[str, list[float]], percent: bool = True) -> None:
    """Grouped vertical bars: one group per label, one bar per series."""
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        colour = SEED_COLOUR if name == "seed" else column_colour(name)
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [v * 100 if percent else v for v in values], width, label=name, color=colour)
    ax.set_xticks(range(len(groups)), groups)
    ax.legend(frameon=False)


# C1's single measures of time, as the bars' legend names them.
C1_TIMES = {"simulated_seconds": "simulated time in the regions",
            "system_cycles": "system cycles (O3: kernel instructions' cycles)"}


def _c1_bars(cost: dict, base: str) -> list[tuple[str, float, float]]:
    """(variant, lower part, upper part) of each variant's cost over base's:
    instructions and stall cycles (the model), or one measure of time
    (C1_TIMES) and nothing."""
    if (time := next((k for k in C1_TIMES if k in cost[base]), None)) is not None:
        return [(v, c[time] / cost[base][time], 0.0) for v, c in cost.items()]
    total = sum(cost[base].values())
    return [(v, c["instructions"] / total, c["stall_cycles"] / total) for v, c in cost.items()]


def _c1(figure: Figure, measured: Measured) -> str:
    axes = figure.subplots(1, len(measured), squeeze=False)[0]
    for ax, (backend, check) in zip(axes, measured.items()):
        bars = _c1_bars(check.numbers["cost"], BASE)
        if check.numbers.get("side_cost"):
            bars += _c1_bars(check.numbers["side_cost"], SIDE_BASE)
        names = [v for v, _, _ in bars]
        lower = [b for _, b, _ in bars]
        time = next((C1_TIMES[k] for k in C1_TIMES if k in check.numbers["cost"][BASE]), None)
        ax.bar(names, lower, color="#c7d3e8" if not time else column_colour(backend),
               label=time or "instructions (1 cycle each)")
        if not time:
            ax.bar(names, [t for _, _, t in bars], bottom=lower, color=column_colour(backend),
                   label="L1 miss stall cycles")
        ax.axhline(c01.SEED_RATIO, color=SEED_COLOUR, linestyle="--",
                   label=f"seed: x{c01.SEED_RATIO:.2f} system time")
        ax.set_title(f"{backend}: x{_figure(check, 'ratio'):.3f}")
        ax.set_ylabel("cost / its reference's")
        ax.set_ylim(0, 1.6 * max(c01.SEED_RATIO, _figure(check, "ratio")))
        ax.tick_params(axis="x", labelsize=7, labelrotation=20)
        ax.legend(frameon=False, loc="upper left", fontsize=7)
    return (f"C1: the fork storm's cost, {CHAIN} over {BASE} (the 2.5.27 layout) and "
            f"{SIDE_CHAIN} over {SIDE_BASE} (side array), 4 CPUs")


def _c2(figure: Figure, measured: Measured) -> str:
    # Both of the seed's listings: the claim's (the add path) and the
    # control inside the model (the remove path, whose unlock the seed
    # measured at a sixth of its lock).
    ax = figure.subplots()
    series = {"seed": [c02.SEED_LOCK, c02.SEED_UNLOCK, c02.SEED_REMOVE_LOCK,
                       c02.SEED_REMOVE_UNLOCK]}
    for backend, check in measured.items():
        series[backend] = [_figure(check, name) for name in (
            "lock_share", "unlock_share", "remove_lock_share", "remove_unlock_share")]
    _bars(ax, [f"{symbol}\n{role}" for symbol in (c02.SYMBOL, c02.REMOVE_SYMBOL)
               for role in ("lock", "unlock")], series)
    ax.set_ylabel("% of the function's cycles (seed: samples)")
    return ("C2: the chain lock's and unlock's shares of their function's cost, in the "
            "claim's listing (page_add_rmap) and the control's (page_remove_rmap)")


def _c5(figure: Figure, measured: Measured) -> str:
    ax = figure.subplots()
    groups = ["adds from fork", "adds from faults", "removes from zap"]
    series = {"seed": [c05.SEED_FORK, c05.SEED_FAULT, c05.SEED_ZAP]}
    for backend, check in measured.items():
        adds, removes = check.numbers["adds"], check.numbers["removes"]
        series[backend] = [adds.get("rmap_add_fork", 0) / sum(adds.values()),
                           adds.get("rmap_add_fault", 0) / sum(adds.values()),
                           removes.get("rmap_remove_zap", 0) / sum(removes.values())]
    _bars(ax, groups, series)
    ax.set_ylabel("% of rmap adds / removes")
    return f"C5: where rmap adds and removes come from, fork storm on {FORK}"


C6_BATCH = {"pagevec-1": 1, "baseline": 15, "pagevec-31": 31}   # pages a batch, by variant


def _c6(figure: Figure, measured: Measured) -> str:
    ax = figure.subplots()
    first = next(iter(measured.values())).numbers["acquisitions"]
    variants = sorted(first, key=lambda v: C6_BATCH.get(v, 0))
    seed = {"pagevec-1": 1.0, "baseline": 1 - c06.SEED_CUT}
    series = {"seed": [seed.get(v, float("nan")) for v in variants]}
    for backend, check in measured.items():
        acquisitions = check.numbers["acquisitions"]
        series[backend] = [acquisitions.get(v, 0) / acquisitions["pagevec-1"] for v in variants]
    _bars(ax, [f"{v}\n({C6_BATCH[v]} a batch)" if v in C6_BATCH else v for v in variants],
          series)
    ax.set_ylabel("LRU-lock acquisitions, % of pagevec-1's")
    return "C6: LRU-lock acquisitions against the batch size (lruwriters, 4 CPUs)"


def _c7(figure: Figure, measured: Measured) -> str:
    ax = figure.subplots()
    series = {"seed": [c07.SEED_MMAP, c07.SEED_READ]}
    for backend, check in measured.items():
        series[backend] = [_figure(check, "mmap_user"), _figure(check, "read_user")]
    _bars(ax, ["copy via mmap()", "copy via read()"], series)
    ax.set_ylabel("% of L1D stall cycles in user space")
    ax.set_ylim(0, 100)
    return "C7: where a dump copy's L1D misses land"


def _c8(figure: Figure, measured: Measured) -> str:
    axes = figure.subplots(1, len(measured), squeeze=False)[0]
    marked = {"unmap_page_range", "filemap_map_pages"}
    for ax, (backend, check) in zip(axes, measured.items()):
        shares = check.numbers["shares"]
        names = list(shares)[::-1]
        ax.barh(names, [shares[n] * 100 for n in names],
                color=[column_colour(backend) if n in marked else "#c7d3e8" for n in names])
        ax.set_title(backend)
        ax.set_xlabel(f"% of {check.numbers['share_of']}")
    return ("C8: the script storm's top kernel functions (zap = unmap_page_range, fault-around "
            "= filemap_map_pages, marked)")


PICTURES: dict[str, Callable[[Figure, Measured], str]] = {
    "C1": _c1, "C2": _c2, "C5": _c5, "C6": _c6, "C7": _c7, "C8": _c8}
