"""./hotline annotate RUN FUNCTION: one function's instructions, perf
annotate style: the C source lines interleaved with the instructions they
produced, each instruction with its misses per level and cause, its data
accesses, and the reads after partial writes it took part in (as the store
or as the load).  Text, and an HTML page with the counts shaded.

A gem5 run on O3 cores with hotline's extension also has its time: each
instruction's cycles (the exact, time-proportional charge: docs/gem5.md)
as a share of the function's, the share of the function's samples a
sampling profiler would have given it (the seeds' view, oprofile's), and
what it mostly waited for; under an instruction whose fences waited (an x86
locked instruction), what they waited for: the stores that held the store
queue's drain, each with its data and what served its write, and the
cycles each held it.  Where a seed's instruction table covers the
function (pte_chain_add and pte_chain_remove: the seed's page_add_rmap and
page_remove_rmap, names `annotate` also takes), the seed's shares go
beside the instructions in the same role.  With --sampled SAMPLED_RUN (a
sampled O3 run of the same kernel build, SMARTS windows: docs/gem5.md),
each instruction's estimated share of that run's unhalted cycles, with its
95% interval, goes beside its exact share of this run's.

Source lines are those of the DWARF line tables (addr2line): inlined code
shows the inlined source (bitops.h inside folio_unlock), as the tables do.
"""

import html
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hotline import outputs
from hotline.errors import HotlineError
from hotline.report import render, tables as rt
from hotline.records.manifest import Manifest
from hotline.report.run import Run, header, read_run, redo
from hotline.report.seed_listing import (
    ROLE_VIEWS, ROLES_LEGEND, SEED_NAMES, by_role, role_lines, seed_beside, share)
from hotline.kernel.source_text import SourceText
from hotline.results.objects import describe
from hotline.results.schema import CAUSES, CYCLE_CAUSES, LEVELS

SHORT = {"compulsory": "cmp", "capacity": "cap", "conflict": "cnf", "coherence": "coh",
         "upgrade": "upg"}
LEGEND = ", ".join(f"{v} {k}" for k, v in SHORT.items())

# The drain table's waits (results/schema.py DRAIN_WAITS) as the listing
# says them: what served a store's write, or what else a fence waited for.
SERVED = {"store_l1d_hit": "L1D hit", "store_l2": "L2", "store_memory": "memory",
          "store_peer": "another core"}
OTHER_WAITS = {"no_store": "nothing in the store queue", "not_at_head": "not yet at the head"}
DRAIN_COLUMNS = ["pc", "waited_for", "store_pc", "store_symbol", "store_offset", "object",
                 "field", "cycles"]
DRAIN_LEGEND = ("Under an instruction whose fences waited (gem5 runs an x86 locked instruction "
                "as fenced micro-ops): its barrier cycles by what they waited for, the store "
                "that held the store queue's drain (its address, its data, what served its "
                "write), nothing older left in the store queue (the fence issuing), or the "
                "fence not yet at the head.")


@dataclass
class Annotation:
    function: str
    start: int
    size: int
    levels: list[str]           # the levels with misses in the run
    rows: list[dict]            # {"source": file:line, "text": ...} or an instruction
    totals: dict[str, int]      # misses per level in the function
    missing_source: str | None  # why source text is missing, if it is
    # The function's cycles and samples (cycle_split), None without a
    # cycle profile, and its cycles' share of all the run's.
    time: dict | None = None
    # The seed's table where one covers the function: what it is, and the
    # seed's share of the function's samples by pc.
    seed: tuple[str, dict[int, str]] | None = None
    # A sampled run's estimates (--sampled): what run, and by pc the
    # instruction's estimated share of its unhalted cycles, low, high.
    estimate: tuple[str, dict[int, tuple[float, float, float]]] | None = None
    # Where a seed's table covers the function: its roles with the seed's
    # shares and this run's (by_role).
    roles: pd.DataFrame | None = None


def miss_split(misses: pd.DataFrame, pcs: list[int]) -> dict[int, dict[str, dict[str, int]]]:
    """{pc: {level: {cause: misses}}} for the given instructions."""
    mine = misses[misses["pc"].isin(pcs)]
    counts = mine.groupby(["pc", "level", "cause"])["count"].sum()
    split: dict[int, dict[str, dict[str, int]]] = {}
    for (pc, level, cause), n in counts.items():
        split.setdefault(int(pc), {}).setdefault(level, {})[cause] = int(n)
    return split


def cycle_split(cycles: pd.DataFrame, pcs: list[int]) -> dict:
    """The time of the given instructions (a function's), summed over
    cores and regions: {"cycles": the function's, "samples": its samples,
    "per_pc": {pc: {"cycles", "share" (of the function's cycles),
    "sampled" (share of its samples, next-committing view), "skid" (share
    of its samples in the skid view; None for a profile made without it),
    "waiting" (the cause of most of its cycles other than committing, ""
    if none)}}}."""
    mine = cycles[cycles["pc"].isin(pcs)]
    skid = "skid_samples" in mine.columns and mine["skid_samples"].notna().all()
    columns = ["cycles", "samples", *(["skid_samples"] if skid else []),
               *(f"cycles_{c}" for c in CYCLE_CAUSES)]
    per_pc = mine.groupby("pc")[columns].sum()
    total, samples = float(per_pc["cycles"].sum()), int(per_pc["samples"].sum())
    skids = int(per_pc["skid_samples"].sum()) if skid else 0
    waits = [f"cycles_{c}" for c in CYCLE_CAUSES if c != "commit"]
    split = {}
    for pc, row in per_pc.iterrows():
        waiting = row[waits].idxmax() if row[waits].max() > 0 else ""
        split[int(pc)] = {"cycles": float(row["cycles"]),
                          "share": row["cycles"] / total if total else 0.0,
                          "sampled": row["samples"] / samples if samples else 0.0,
                          "skid": (row["skid_samples"] / skids if skids else 0.0)
                          if skid else None,
                          "waiting": waiting.removeprefix("cycles_")}
    return {"cycles": total, "samples": samples, "per_pc": split}


def _store(row, function: str) -> str:
    """A store that held a drain: its address, its place (in the function
    or another), its data and what served its write."""
    symbol, offset = row.store_symbol, int(row.store_offset)
    place = f"+{offset:#x}" if symbol == function else f"{symbol}+{offset:#x}" if symbol else ""
    return (f"store at {int(row.store_pc):x}{' ' + place if place else ''} "
            f"({describe(row.object, row.field)}, {SERVED[row.waited_for]})")


def drain_split(drains: pd.DataFrame, pcs: list[int], function: str,
                stores: int = 4) -> dict[int, str]:
    """{pc: what its fences waited for} of the given instructions with
    barrier cycles, summed over cores and regions: "waited N cycles for:
    store at PC (object.field, what served it) cycles, ..., nothing in the
    store queue cycles".  The stores that held the drain longest first, at
    most `stores` of them (then how many more, and their cycles); the other
    waits after them.  N is the instruction's barrier cycles."""
    mine = drains[drains["pc"].isin(pcs)]
    keys = ["pc", "waited_for", "store_pc", "store_symbol", "store_offset", "object", "field"]
    sums = mine.groupby(keys, as_index=False)["cycles"].sum()
    notes = {}
    for pc, rows in sums.groupby("pc"):
        held = rows[rows["waited_for"].isin(list(SERVED))].sort_values(
            ["cycles", "store_pc"], ascending=[False, True], kind="stable")
        items = [f"{_store(r, function)} {r.cycles:,.0f}" for r in held.head(stores).itertuples()]
        if len(held) > stores:
            rest = held["cycles"].iloc[stores:].sum()
            items.append(f"{len(held) - stores} more stores {rest:,.0f}")
        for wait, said in OTHER_WAITS.items():
            if waited := rows.loc[rows["waited_for"] == wait, "cycles"].sum():
                items.append(f"{said} {waited:,.0f}")
        notes[int(pc)] = f"waited {rows['cycles'].sum():,.0f} cycles for: " + ", ".join(items)
    return notes


def partial_writes(rapw: pd.DataFrame, pcs: set[int], function: str,
                   partners: int = 3) -> dict[int, str]:
    """{pc: what the reads after partial writes say of it}: as a store, how
    many loads overlapped it, and the loads that did most; as a load, how
    often it overlapped a partial store, and whose."""
    notes: dict[int, list[str]] = {}

    def place(symbol: str, offset: int, pc: int) -> str:
        if symbol == function:
            return f"+{offset:#x}"
        return f"{symbol}+{offset:#x}" if symbol else f"{pc:#x}"

    for role, mine, other in (("as the store, loaded by", "store", "load"),
                              ("as the load, of stores by", "load", "store")):
        hits = rapw[rapw[f"{mine}_pc"].isin(pcs)]
        pairs = hits.groupby([f"{mine}_pc", f"{other}_pc", f"{other}_symbol",
                              f"{other}_offset"])["count"].sum()
        for pc, group in pairs.groupby(level=0):
            group = group.sort_values(ascending=False, kind="stable")
            named = [f"{place(s, o, p)} {int(n):,}" for (_, p, s, o), n in
                     group.head(partners).items()]
            more = f"; {len(group) - partners} more" if len(group) > partners else ""
            notes.setdefault(int(pc), []).append(
                f"{int(group.sum()):,} {role} {'; '.join(named)}{more}")
    return {pc: " | ".join(v) for pc, v in notes.items()}


def estimates(run: Run, sampled_dir: Path, pcs: list[int]) -> \
        tuple[str, dict[int, tuple[float, float, float]]]:
    """What the sampled run sampled_dir was, and its estimates of the
    instructions' shares of its unhalted cycles (share, low, high) by pc.
    It must have run the run's kernel build: the pcs are that build's."""
    manifest = read_run(sampled_dir, ("sampled_cycles",))
    theirs, ours = (m.raw["inputs"]["kernel"]["key"] for m in (manifest, run.manifest))
    if theirs != ours:
        raise HotlineError(f"{sampled_dir} ran kernel build {theirs[:16]}, {run.directory} "
                           f"build {ours[:16]}: give a sampled run of the same kernel build")
    table = rt.read_table(sampled_dir / "sampled_cycles.parquet",
                          ["pc", "windows", "share", "share_low", "share_high"],
                          f"the run is damaged: {redo(sampled_dir)}")
    mine = table[table["pc"].isin(pcs)]
    windows = int(table["windows"].max()) if len(table) else 0
    what = (f"{manifest.run_id} ({manifest.raw['inputs']['system']['name']}, {windows:,} "
            "windows)")
    return what, {int(r.pc): (float(r.share), float(r.share_low), float(r.share_high))
                  for r in mine.itertuples()}


def annotate(run: Run, function: str, source: SourceText | None = None,
             sampled: Path | None = None) -> Annotation:
    asked = function
    # The seed's name for the chain work names it wherever the kernel does
    # it (6.1's own page_remove_rmap, on a pte_chain kernel, only calls
    # pte_chain_remove); page_add_rmap is no 6.1 function at all.
    if function in SEED_NAMES and run.symbolizer.function_named(SEED_NAMES[function]):
        function = SEED_NAMES[function]
    symbol = run.symbolizer.function_named(function)
    if symbol is None:
        busiest = rt.top_functions(run.tables, "L1D", 5)
        why = ""
        if asked in SEED_NAMES:
            function = SEED_NAMES[asked]
            why = (f" ({asked} is seed 000's name for the chain work that hotline's "
                   f"pte_chain kernels do in {function}; this run's kernel, {run.variant}, "
                   "has neither: annotate a run of a pte-chain variant)")
        raise HotlineError(f"no function '{asked}' in the run's kernel "
                           f"({run.kernel / 'vmlinux'}){why}; its functions with most L1D "
                           f"misses: {', '.join(busiest)}")
    listing = run.disassembly.function(function)
    pcs = sorted(listing)
    lines = run.symbolizer.source_lines(pcs)
    t = run.tables
    split = miss_split(t.misses, pcs)
    data = t.instructions[t.instructions["pc"].isin(pcs) & (t.instructions["kind"] != "fetch")]
    accesses = data.groupby("pc")["accesses"].sum()
    kinds = data.groupby("pc")["kind"].agg(lambda k: "/".join(sorted(set(k))))
    rapw = partial_writes(t.rapw, set(pcs), function)
    levels = [lv for lv in LEVELS if lv in set(t.misses["level"])]
    time, drains = None, {}
    if "cycles" not in t.absent:
        time = cycle_split(t.cycles, pcs)
        time["run_cycles"] = float(t.cycles["cycles"].sum())
        time["run_share"] = time["cycles"] / (time["run_cycles"] or 1)
    if "drains" in run.manifest.tables:
        drains = drain_split(rt.read_table(run.directory / "drains.parquet", DRAIN_COLUMNS,
                                           f"the run is damaged: {redo(run.directory)}"),
                             pcs, function)
    estimate = estimates(run, Path(sampled), pcs) if sampled is not None else None
    source = source or SourceText.of_build(run.kernel)
    rows, previous = [], None
    for pc in pcs:
        location = lines.get(pc, "")
        if location and location != previous:
            rows.append({"source": location, "text": source.line(location)})
        previous = location or previous
        by_level = split.get(pc, {})
        rows.append({"pc": pc, "offset": pc - symbol.start, "instruction": listing[pc],
                     "kind": kinds.get(pc, ""), "accesses": int(accesses.get(pc, 0)),
                     "misses": {lv: by_level.get(lv, {}) for lv in levels},
                     "partial writes": rapw.get(pc, ""),
                     "time": time["per_pc"].get(pc) if time else None,
                     "drain": drains.get(pc, "")})
    totals = {lv: sum(sum(r["misses"][lv].values()) for r in rows if "pc" in r) for lv in levels}
    timed = t.cycles[t.cycles["pc"].isin(pcs)] if time else None
    return Annotation(function, symbol.start, symbol.size, levels, rows, totals, source.missing,
                      time, seed_beside(function, symbol.start, listing), estimate,
                      by_role(function, symbol.start, listing, timed))


def _time(row: dict) -> str:
    """An instruction's cycles, share, sampled shares (next-committing and
    skid views) and main wait."""
    t = row["time"]
    if not t:
        return f"{'':>{TIME_WIDTH}}"
    return (f"{t['cycles']:>10,.0f}{t['share']:>7.1%}{t['sampled']:>8.1%}"
            f"{_skid(t):>8}  {t['waiting']:<12}")


def _skid(t: dict) -> str:
    return "-" if t.get("skid") is None else f"{t['skid']:.1%}"


TIME_WIDTH = 10 + 7 + 8 + 8 + 2 + 12
TIME_HEAD = f"{'cycles':>10}{'share':>7}{'next':>8}{'skid':>8}  {'waiting on':<12}"
SEED_WIDTH = 14
ESTIMATE_WIDTH = 8 + 22
ESTIMATE_HEAD = f"{'of run':>8}{'estimate (95%)':>22}"


def _of_run(a: Annotation, pc: int) -> str:
    """The instruction's exact share of the run's cycles, if timed."""
    t = a.time["per_pc"].get(pc) if a.time else None
    return f"{t['cycles'] / a.time['run_cycles']:.2%}" if t and a.time["run_cycles"] else ""


def _estimate(a: Annotation, pc: int) -> str:
    """The sampled run's estimate of the instruction's share, with its
    interval; blank where its windows never saw the instruction."""
    e = a.estimate[1].get(pc) if a.estimate else None
    return f"{e[0]:.2%} ({e[1]:.2%}-{e[2]:.2%})" if e else ""


def _count(row: dict, level: str) -> str:
    n = sum(row["misses"][level].values())
    return f"{n:,}" if n or row["accesses"] else ""


def _causes(by_cause: dict[str, int]) -> str:
    return " ".join(f"{SHORT[c]} {by_cause[c]}" for c in CAUSES if by_cause.get(c))


def as_text(manifest: Manifest, a: Annotation) -> str:
    out = [f"{k:9} {v}" for k, v in header(manifest)]
    out += ["", f"{a.function} ({a.start:#x}, {a.size:#x} bytes): "
            + ", ".join(f"{lv} {n:,}" for lv, n in a.totals.items()) + " misses",
            f"Per instruction: misses per level, then the L1D and L2 misses by cause ({LEGEND});"
            " data accesses; reads after partial writes. * instruction as patched at boot.",
            ""]
    if a.time:
        out[-1:-1] = [f"Time (gem5 O3, exact): {a.time['cycles']:,.0f} cycles, "
                      f"{a.time['run_share']:.1%} of the run's; {a.time['samples']:,} samples. "
                      "Per instruction: its cycles, their share of the function's, its share "
                      "of the function's samples as a sampling profiler names them, to the "
                      "next instruction to commit ('next') and to the instruction after the "
                      "boundary at which a Pentium III takes the counter's interrupt ('skid'; "
                      "'-' for a profile made without it), what it mostly waited for."]
    if any(r.get("drain") for r in a.rows):
        out[-1:-1] = [DRAIN_LEGEND]
    if a.seed:
        out[-1:-1] = [f"Seed: {a.seed[0]} (column 'seed')."]
    if a.estimate:
        out[-1:-1] = [f"Sampled: {a.estimate[0]}: each instruction's estimated share of that "
                      "run's unhalted cycles with its 95% interval over the windows (column "
                      "'estimate'), beside its exact share of this run's ('of run')."]
    if a.missing_source:
        out += [f"(source text: {a.missing_source})", ""]
    if a.roles is not None:
        out += [ROLES_LEGEND, *role_lines(a.roles), ""]
    time_head = (TIME_HEAD if a.time else "") + (f"{'seed':>{SEED_WIDTH}}" if a.seed else "") \
        + (ESTIMATE_HEAD if a.estimate else "")
    levels = "".join(f"{lv:>8}" for lv in a.levels)
    # Each cause column as wide as its longest entry.
    widths = {lv: max([len(f"{lv} causes"), *(len(_causes(r["misses"].get(lv, {})))
                                               for r in a.rows if "pc" in r)]) + 2
              for lv in ("L1D", "L2")}
    out.append(f"{time_head}{levels}  {'L1D causes':<{widths['L1D']}}"
               f"{'L2 causes':<{widths['L2']}}{'accesses':>9}  {'address':<18}  instruction")
    blank = " " * ((TIME_WIDTH if a.time else 0) + (SEED_WIDTH if a.seed else 0)
                   + (ESTIMATE_WIDTH if a.estimate else 0)
                   + 8 * len(a.levels) + 2 + widths["L1D"] + widths["L2"] + 9)
    for r in a.rows:
        if "source" in r:
            text = r["text"].strip() if r["text"] is not None else ""
            out.append(f"{blank}  : {r['source']}  {text}")
            continue
        # Instructions that access data show their zeros; the others, blanks.
        counts = "".join(f"{_count(r, lv):>8}" for lv in a.levels)
        seed = f"{a.seed[1].get(r['pc'], ''):>{SEED_WIDTH}}" if a.seed else ""
        estimate = f"{_of_run(a, r['pc']):>8}{_estimate(a, r['pc']):>22}" if a.estimate else ""
        line = (f"{_time(r) if a.time else ''}{seed}{estimate}{counts}  "
                f"{_causes(r['misses'].get('L1D', {})):<{widths['L1D']}}"
                f"{_causes(r['misses'].get('L2', {})):<{widths['L2']}}{r['accesses'] or '':>9}  "
                f"{r['pc']:x}:  +{r['offset']:<#6x} {r['instruction']}")
        if r["partial writes"]:
            line += f"    [partial writes: {r['partial writes']}]"
        out.append(line)
        if r.get("drain"):
            out.append(f"{blank}    {r['drain']}")
    return "\n".join(out) + "\n"


ANNOTATE_STYLE = """.src td{color:#555;background:#f4f4f4;font-family:monospace;text-align:left}
.insn td{font-family:monospace}.pw{color:#b00}
.drain td{color:#555;font-family:monospace;text-align:left;padding-left:3em}"""


def as_html(manifest: Manifest, a: Annotation) -> str:
    top = max([sum(r["misses"][lv].values()) for r in a.rows if "pc" in r for lv in a.levels]
              or [1]) or 1
    timed = ["cycles", "share", "next", "skid", "waiting on"] if a.time else []
    timed += ["seed"] if a.seed else []
    timed += ["of run", "estimate (95%)"] if a.estimate else []
    heads = [*timed, *a.levels, *(f"{lv} {SHORT[c]}" for lv in ("L1D", "L2") if lv in a.levels
                          for c in CAUSES), "accesses", "address", "offset", "instruction",
             "partial writes"]
    width = len(heads)
    body = [f"<style>{ANNOTATE_STYLE}</style>",
            f"<p>{a.function} ({a.start:#x}, {a.size:#x} bytes): "
            + html.escape(", ".join(f"{lv} {n:,}" for lv, n in a.totals.items())) +
            " misses. Source lines (grey) precede the instructions they produced; cells are "
            "shaded by misses. * instruction as patched at boot.</p>"]
    if any(r.get("drain") for r in a.rows):
        body.append(f"<p>{html.escape(DRAIN_LEGEND)}</p>")
    if a.seed:
        body.append(f"<p>Seed: {html.escape(a.seed[0])} (column 'seed').</p>")
    if a.estimate:
        body.append(f"<p>Sampled: {html.escape(a.estimate[0])}: each instruction's estimated "
                    "share of that run's unhalted cycles with its 95% interval (column "
                    "'estimate'), beside its exact share of this run's ('of run').</p>")
    if a.missing_source:
        body.append(f"<p>(source text: {html.escape(a.missing_source)})</p>")
    if a.roles is not None:
        views = [v for v in ROLE_VIEWS if v in a.roles.columns]
        body.append(f"<p>{html.escape(ROLES_LEGEND)}</p><table><tr><th>role</th><th>where</th>"
                    + "".join(f"<th>{v}</th>" for v in views) + "</tr>")
        body += [f"<tr><td>{html.escape(r.role)}</td><td>{html.escape(r.where)}</td>"
                 + "".join(f"<td>{share(getattr(r, v))}</td>" for v in views) + "</tr>"
                 for r in a.roles.itertuples()]
        body.append("</table>")
    body.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in heads) + "</tr>")
    for r in a.rows:
        if "source" in r:
            text = html.escape(r["text"] or "")
            body.append(f'<tr class="src"><td colspan="{width}">{html.escape(r["source"])}: '
                        f"<pre style=\"display:inline\">{text}</pre></td></tr>")
            continue
        cells = []
        if a.time:
            t = r["time"] or {}
            shade = f' style="background:rgba(78,121,167,{0.1 + 0.9 * t["share"]:.2f})"' \
                if t.get("share") else ""
            cells += [f"<td{shade}>{t['cycles']:,.0f}</td>" if t else "<td></td>",
                      f"<td>{t['share']:.1%}</td>" if t else "<td></td>",
                      f"<td>{t['sampled']:.1%}</td>" if t else "<td></td>",
                      f"<td>{_skid(t)}</td>" if t else "<td></td>",
                      f"<td>{html.escape(t.get('waiting', ''))}</td>"]
        if a.seed:
            cells.append(f"<td>{html.escape(a.seed[1].get(r['pc'], ''))}</td>")
        if a.estimate:
            cells += [f"<td>{_of_run(a, r['pc'])}</td>", f"<td>{_estimate(a, r['pc'])}</td>"]
        for lv in a.levels:
            n = sum(r["misses"][lv].values())
            shade = f' style="background:rgba(196,78,82,{0.1 + 0.9 * n / top:.2f})"' if n else ""
            cells.append(f"<td{shade}>{_count(r, lv)}</td>")
        for lv in ("L1D", "L2"):
            if lv in a.levels:
                cells += [f"<td>{r['misses'][lv].get(c, '') or ''}</td>" for c in CAUSES]
        cells += [f"<td>{r['accesses'] or ''}</td>", f"<td>{r['pc']:x}</td>",
                  f"<td>+{r['offset']:#x}</td>", f"<td>{html.escape(r['instruction'])}</td>",
                  f'<td class="pw">{html.escape(r["partial writes"])}</td>']
        body.append('<tr class="insn">' + "".join(cells) + "</tr>")
        if r.get("drain"):
            body.append(f'<tr class="drain"><td colspan="{width}">{html.escape(r["drain"])}'
                        "</td></tr>")
    body.append("</table>")
    return render.page(f"hotline annotate {a.function}", header(manifest), body)


def write_annotation(run_dir: Path, function: str,
                     sampled: Path | None = None) -> tuple[str, Path, Path]:
    """Annotate `function` of the run (with the sampled run's estimates
    beside it); text, and the paths of the text and HTML written to the run
    directory's annotate/."""
    run = Run.read(run_dir)
    source = SourceText.of_build(run.kernel)
    try:
        a = annotate(run, function, source, sampled)
    finally:
        source.close()
    text = as_text(run.manifest, a)
    out = outputs.make_dir(run_dir / "annotate")
    name = render.file_name(function)
    text_path, html_path = out / f"{name}.txt", out / f"{name}.html"
    outputs.write_text(text_path, text, sync=False)
    outputs.write_text(html_path, as_html(run.manifest, a), sync=False)
    return text, text_path, html_path
