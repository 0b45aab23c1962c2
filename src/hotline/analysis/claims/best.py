"""The project's verdict on each claim: of one claim's checks against
several sets of results (a column each: QEMU, gem5 O3, QEMU at seed scale,
...), the one that is the best evidence.  The claims page's top table and
README's verdict table are both made by verdicts() and rows(), so that the
two cannot disagree.

The rule (fixed from what each kind of evidence can show, not from the
verdicts it gives; the first difference decides):

1. A check that measured something (its figure is not "-") over one that
   did not: a column without the claim's runs, or a backend that cannot
   give its measure, is no evidence.  A backend's figures that the claim's
   module shows while saying the backend cannot give its measure (C3's
   and C6's contention on QEMU's vCPU turns: Measured.cannot_measure)
   rank with those not measured.
2. The measure the claim is about over a stand-in.  The seeds measured
   time, so a check decided on time as gem5's O3 cores measure it (their
   cycle profile, or C6's sampled spin time: TIME_MEASURES) comes before
   one on a stand-in for time (QEMU's modelled cycles, miss counts, an
   in-order core's simulated time).  A claim that no column measured by
   time ties here.
3. A decided verdict (supported, not supported) over inconclusive.
4. More runs, up to five (a figure's 95% interval over five repeats or
   more; beyond five, more runs give no preference at this step).
5. The larger scale: the work of the largest run the claim read (the
   product of the workload's size parameters, those in which its declared
   scales differ: a fork storm's instances times its iterations).
6. More runs.
7. The column given first.

Each row says which column decided, on what measure, over how many runs and
at what scale, and lists every column's figure and verdict beside it.
"""

import json
import math
from dataclasses import dataclass
from functools import cache

from hotline.analysis.claims.c06 import SPIN_MEASURE
from hotline.analysis.claims.claim import Check, Claim
from hotline.analysis.claims.common import O3_CYCLES
from hotline.analysis.claims.rules import INCONCLUSIVE
from hotline.analysis.results import Results
from hotline.workloads import available_workloads, load_workload

# What "time" is where a claim is about time (rule 2).
TIME_MEASURES = (O3_CYCLES, SPIN_MEASURE)


@dataclass(frozen=True)
class Size:
    """The largest run a claim read in one column: its work (rule 5) and
    the same in words ("seed scale", or the size parameters where they are
    no declared scale's)."""
    work: int = 0
    words: str = ""


@dataclass(frozen=True)
class Column:
    """One set of results, every claim checked against it."""
    label: str
    checks: dict[str, Check]        # by claim id; empty where not run
    sizes: dict[str, Size]          # by claim id

    @property
    def run(self) -> bool:
        return bool(self.checks)


@dataclass(frozen=True)
class Verdict:
    """The project's verdict on one claim: the deciding column's check
    (None where no column was run), and every column, ranked by the rule
    (the deciding one first, those not run last)."""
    claim: Claim
    column: Column | None
    check: Check | None
    every: tuple[Column, ...]


def column(label: str, results: Results, checks: list[Check],
           claims: list[Claim]) -> Column:
    """The column of these results, whose checks are `checks`."""
    return Column(label, {c.claim: c for c in checks},
                  {claim.id: size(results, claim) for claim in claims})


def not_run(label: str) -> Column:
    return Column(label, {}, {})


def size(results: Results, claim: Claim) -> Size:
    """The largest run of the claim's workloads among the results' runs."""
    workloads = {n.workload for n in claim.needs}
    runs = results.ok[results.ok["workload"].isin(workloads)]
    return max((_size(w, json.loads(p)) for w, p in zip(runs["workload"], runs["params"])),
               key=lambda s: s.work, default=Size())


@cache
def _scales(workload: str) -> dict[str, dict[str, int]]:
    """The workload's declared scales, each by its size parameters only."""
    if workload not in available_workloads():
        return {}
    scales = load_workload(workload).scales
    sized = {k for k in set().union(*scales.values())
             if len({s.get(k) for s in scales.values()}) > 1}
    return {name: {k: v for k, v in s.items() if k in sized} for name, s in scales.items()}


def _size(workload: str, params: dict) -> Size:
    scales = _scales(workload)
    if not scales:
        return Size()
    sized = {k: params.get(k, 0) for k in next(iter(scales.values()))}
    name = next((n for n, s in scales.items() if s == sized), None)
    words = f"{name} scale" if name else \
        f"{workload} " + ", ".join(f"{k} {v}" for k, v in sized.items())
    return Size(math.prod(sized.values()), words)


def measured(check: Check | None) -> bool:
    return check is not None and check.measured != "-"


def on_time(check: Check) -> bool:
    return any(m in check.measure for m in TIME_MEASURES)


def _preference(order: int, column_: Column, check: Check) -> tuple:
    """The rule of the module's docstring as a sort key, larger first."""
    return (measured(check) and not check.cannot_measure, on_time(check),
            check.verdict != INCONCLUSIVE, min(check.repeats, 5),
            column_.sizes[check.claim].work, check.repeats, -order)


def verdicts(claims: list[Claim], columns: list[Column]) -> list[Verdict]:
    """Each claim's verdict: its best evidence among the columns'."""
    out = []
    for claim in claims:
        found = sorted(((i, c, c.checks[claim.id]) for i, c in enumerate(columns)
                        if claim.id in c.checks), key=lambda f: _preference(*f), reverse=True)
        ranked = tuple(c for _, c, _ in found) + tuple(c for c in columns if not c.run)
        out.append(Verdict(claim, found[0][1] if found else None,
                           found[0][2] if found else None, ranked))
    return out


def runs(check: Check) -> str:
    return f"{check.repeats} runs" if check.repeats > 1 else "1 run"


def decided_on(column_: Column, check: Check) -> str:
    """What a column's check was decided on, over how many runs, at what
    scale."""
    at = column_.sizes[check.claim].words
    return f"{check.measure or '-'}, {runs(check)}" + (f", {at}" if at else "")


def decided_by(column_: Column, check: Check) -> str:
    """Which column decided, and decided_on()."""
    if not measured(check):
        return f"no results measured it (the reason is {column_.label}'s)"
    return f"{column_.label}: {decided_on(column_, check)}"


def control(check: Check | None) -> str:
    """The negative control's verdict, with its reason where it has one (an
    inconclusive control says why, as every inconclusive verdict does)."""
    if check is None:
        return "-"
    if check.control is None:
        return "none"
    why = f" ({check.control.reason})" if check.control.reason else ""
    return f"{check.control.design}: {check.control.verdict}{why}"


# The top table's columns, in order: at most six, so that it fits a 1,400 px window.
HEAD = ("claim", "seed figure", "measured", "verdict", "decided by", "control")


def row(verdict: Verdict) -> dict[str, str]:
    """The top table's cells of one claim, as text, under HEAD's names."""
    claim, check = verdict.claim, verdict.check
    if check is None:
        return dict(zip(HEAD, (f"{claim.id} {claim.title}", claim.seed_figure, "-",
                               "not run", "no results given", "-")))
    return dict(zip(HEAD, (
        f"{claim.id} {claim.title}", claim.seed_figure, check.measured,
        check.verdict + (f": {check.reason}" if check.reason else ""),
        decided_by(verdict.column, check), control(check))))


def markdown(found: list[Verdict]) -> str:
    """The top table as Markdown (README's)."""
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(cell(v) for v in row(f).values()) + " |" for f in found]
    return "\n".join(lines) + "\n"
