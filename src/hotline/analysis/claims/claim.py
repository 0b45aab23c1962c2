"""A claim, apart from any results, and its check against an experiment's:
the rule decided on the design under test, and again on the negative
control's design, each over the experiment's repeats (rules.py)."""

from dataclasses import dataclass, field
from typing import Callable

from hotline.analysis.claims.rules import (
    INCONCLUSIVE, MEAN, NOT_SUPPORTED, VERDICTS, Control, Interval, Kind, Measured, Rule)
from hotline.analysis.claims.seeds import SEED_FILES
from hotline.analysis.results import Results


@dataclass(frozen=True)
class Needs:
    """Runs a claim reads: these variants on this workload (params: a subset
    of the workload's parameters, as an experiment spec writes them) on a
    system of `cpus` CPUs, with out-of-order cores where `o3` (gem5 only);
    their misses too, unless `misses` is false (a claim decided on the
    kernel's counters: results committed for the claims alone leave such a
    workload's misses out, analysis/slim.py).  The experiment specs' claim
    matrices are checked against these (tests/test_claims_coverage.py)."""
    workload: str
    variants: tuple[str, ...]
    params: tuple[tuple[str, int], ...] = ()
    cpus: int = 4
    o3: bool = False
    misses: bool = True


@dataclass(frozen=True)
class Claim:
    id: str                 # "C1"
    title: str
    seed: str               # key of SEED_FILES
    experiment: str         # the runs it reads, in words
    seed_figure: str
    design: str             # the variant the claim is about, handed to figures()
    rule: Rule
    # One repeat's figures for a design (a Measured), or why there are none.
    figures: Callable[[Results, str], "Measured | str"]
    # The measured figures in words, from their intervals and the numbers
    # of the first repeat.
    describe: Callable[[dict[str, Interval], dict], str]
    evidence: str           # the notebook of analysis/ with the evidence
    needs: tuple[Needs, ...]
    control: Control | None = None
    no_control: str = ""    # why there is none, where there is none
    # How the rule came to be, newest last; a change made after results
    # were seen says so.
    history: tuple[str, ...] = ()
    # The figures that are no plain mean (rules.py's Kind): shares, cuts
    # and ranks, whose intervals are bounded or bootstrapped; any other
    # figure's interval is Student's t.
    kinds: dict[str, Kind] = field(default_factory=dict)

    def __post_init__(self):
        assert (self.control is None) != (not self.no_control), \
            f"{self.id}: a control, or why there is none"


@dataclass(frozen=True)
class Decided:
    """The rule decided on one design."""
    design: str
    measured: str           # "-": nothing measured
    verdict: str
    reason: str             # why the rule could not decide ("" where it did)
    repeats: int            # the runs of each cell
    measure: str            # what decided, e.g. "modelled cycles"
    numbers: dict = field(default_factory=dict)
    cannot_measure: bool = False    # Measured.cannot_measure in any repeat


@dataclass(frozen=True)
class Check:
    """One claim checked against one experiment's results."""
    claim: str
    title: str
    seed: str               # the seed file
    experiment: str
    seed_figure: str
    measured: str
    verdict: str            # one of VERDICTS
    rule: str
    reason: str
    evidence: str
    numbers: dict
    repeats: int
    measure: str
    control: Decided | None     # the rule on the control's design
    control_note: str           # what the control is, or why there is none
    cannot_measure: bool = False    # the backend cannot give the claim's measure


def decide(claim: Claim, results: Results, design: str) -> Decided:
    """The claim's rule on `design`, its figures measured once per repeat."""
    measured = [claim.figures(view, design) for view in results.repeats()]
    # A repeat that lacks the claim's runs is not one of its repeats (an
    # experiment's groups may have run different numbers of them): the
    # figures are those of the repeats that have the runs, and say how many.
    found = [m for m in measured if not isinstance(m, str)]
    if not found:
        return Decided(design, "-", INCONCLUSIVE, measured[0], len(measured), "")
    measured = found
    names = {c.figure for c in claim.rule.thresholds()} | \
        {name for m in measured for name in m.figures}
    intervals = {name: Interval.of((m.figures.get(name, float("nan")) for m in measured),
                                   claim.kinds.get(name, MEAN))
                 for name in sorted(names)}
    text = claim.describe(intervals, measured[0].numbers)
    undecided = [m.reason for m in measured if m.reason]
    if undecided:
        # One repeat that cannot be decided leaves the claim undecided; the
        # reason says how many were so where not all.
        some = f"in {len(undecided)} of {len(measured)} repeats: " \
            if len(undecided) < len(measured) else ""
        verdict, reason = INCONCLUSIVE, some + undecided[0]
    else:
        verdict, reason = claim.rule.verdict(intervals)
    assert verdict in VERDICTS, verdict
    numbers = {**measured[0].numbers,
               "intervals": {k: (v.mean, v.low, v.high, v.n) for k, v in intervals.items()}}
    return Decided(design, text, verdict, reason, len(measured), measured[0].measure, numbers,
                   any(m.cannot_measure for m in measured))


def check(claim: Claim, results: Results) -> Check:
    main = decide(claim, results, claim.design)
    control = decide(claim, results, claim.control.design) if claim.control else None
    note = (f"{claim.control.design} must come out {NOT_SUPPORTED}: {claim.control.why}"
            if claim.control else f"no negative control: {claim.no_control}")
    return Check(claim.id, claim.title, SEED_FILES[claim.seed], claim.experiment,
                 claim.seed_figure, main.measured, main.verdict, claim.rule.text(),
                 main.reason, claim.evidence, main.numbers, main.repeats, main.measure,
                 control, note, main.cannot_measure)
