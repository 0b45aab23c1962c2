"""What a claim's rule is made of, and how it decides over repeated runs.

A rule is two lists of conditions on named figures, fixed before any data:
"supported" when every supported condition holds, "not supported" when any
not-supported condition holds, "inconclusive" otherwise.  A rule may also
name where its model cannot decide (Undecidable: a control inside the model,
a pattern the seed measured beside the claim's, found absent): then it is
"inconclusive", "not decidable on this model", unless a not-supported
condition holds.  A figure is measured once per repeat of the experiment,
and a condition is decided on the figure's 95% interval (of its kind:
Kind), not on one value: it holds when the whole interval meets it, fails
when none of it does, and is undecided when its threshold lies inside the
interval.  An undecided condition that would have changed the verdict
makes it "inconclusive", and the reason says which threshold the interval
holds.  With one run the interval is the value itself, and the figure says
"1 run".

The thresholds follow one convention (docs/claims.md, "The threshold
convention"): where the seed measured the claim's effect, supported needs
the whole interval at or beyond SUPPORT of the seed's effect and not
supported the whole interval at or within REFUTE of it (Effect makes both
conditions); a rule's other thresholds are bounds that the claim's words
set, and the rule says so (Rule.basis).
"""

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from hotline.intervals import bootstrap, half_width

SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE)
NAN = float("nan")

# The threshold convention, the same for every claim with a seed figure: a
# model of the seed's machine is asked for the seed's effect to within a
# factor of two (SUPPORT), and an effect under half of that is not the
# seed's (REFUTE); between them the model's differences from the seed's
# machine could explain either verdict.  They are the fractions that the
# rules fixed before any result they decide had been seen used (C2's, and
# C6's for the spin time); docs/claims.md gives the reasons in full and
# what the committed results showed when every rule took them.
SUPPORT, REFUTE = 0.5, 0.25
FRACTION_WORDS = {SUPPORT: "half", REFUTE: "a quarter"}


@dataclass(frozen=True)
class Kind:
    """What a figure is, where that shapes its interval: the range no run
    can measure beyond, and whether the interval of its mean is a
    bootstrap's (places in a ranking are integers, and a Student-t
    interval of them runs past the places the runs gave)."""
    low: float = -math.inf
    high: float = math.inf
    bootstrap: bool = False


MEAN = Kind()                       # a mean of anything: Student's t
SHARE = Kind(0.0, 1.0)              # of a whole, or a rate: 0 to 100%
CUT = Kind(high=1.0)                # 1 - after/before: at most 100%, negative where it grew
SHIFT = Kind(-1.0, 1.0)             # one share less another
RANK = Kind(1.0, bootstrap=True)    # a place in a ranking, #1 first


@dataclass(frozen=True)
class Interval:
    """A figure over repeated runs: the mean and its 95% interval."""
    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values, kind: Kind = MEAN) -> "Interval":
        """The 95% interval of the mean of `values`, a figure of `kind`:
        Student's t, or a bootstrap's for a kind that asks for one, cut to
        the range the kind can take (a point for one value or for values
        that do not vary; NaN if any is NaN: a repeat that could not
        measure the figure leaves it unknown)."""
        values = np.asarray(list(values), dtype=float)
        if values.size == 0 or np.isnan(values).any():
            return cls(NAN, NAN, NAN, int(values.size))
        mean = float(values.mean())
        if values.size == 1 or np.all(values == values[0]):
            return cls(mean, mean, mean, int(values.size))
        if kind.bootstrap:
            low, high = bootstrap(values)
        else:
            half = float(half_width(values.std(ddof=1), values.size))
            low, high = mean - half, mean + half
        return cls(mean, low, high, int(values.size)).within(kind.low, kind.high)

    def within(self, low: float, high: float) -> "Interval":
        """The interval cut to the range the figure can take (a share's
        0 to 100%): a Student-t interval of a figure near its bound runs
        past it, which no run can measure.  The mean is within the range
        already, being a mean of measured values."""
        return Interval(self.mean, max(self.low, low), min(self.high, high), self.n)

    def __format__(self, spec: str) -> str:
        """The mean as `spec` formats a float, and the interval beside it
        when there is one: "1.03 (1.01-1.05, 5 runs)"; "44 (the same in 5
        runs)" where every run measured the same (an interval of no width
        is no measured precision); "-" for a figure a run could not
        measure (a share of nothing, an average over none)."""
        if math.isnan(self.mean):
            return "-"
        if self.n <= 1:
            return format(self.mean, spec)
        if self.low == self.high:
            return f"{format(self.mean, spec)} (the same in {self.n} runs)"
        return (f"{format(self.mean, spec)} ({format(self.low, spec)}-"
                f"{format(self.high, spec)}, {self.n} runs)")


_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


@dataclass(frozen=True)
class Condition:
    """`figure` `op` `threshold`, e.g. Condition("ratio", ">", 1.06, ...)."""
    figure: str         # a name the claim's figures() measures
    op: str             # one of >, >=, <, <=
    threshold: float
    says: str           # the figure in words, for the rule's text
    unit: str = ""      # "%": shown as a percentage; "x": as a factor; "#": as a place
    # The seed's effect this threshold is a fraction of (Effect), or None
    # for a bound the claim's words set (the rule's basis says which).
    effect: "Effect | None" = None

    def __post_init__(self):
        assert self.op in _OPS, self.op

    def holds(self, x: Interval) -> bool | None:
        """True if the whole interval meets the condition, False if none of
        it does, None if the threshold lies inside it (or x is unknown)."""
        if math.isnan(x.mean):
            return None
        meets = _OPS[self.op]
        low, high = meets(x.low, self.threshold), meets(x.high, self.threshold)
        return low if low == high else None

    def shown(self) -> str:
        if self.unit == "%":
            value = f"{self.threshold * 100:.3g}%"
        elif self.unit == "x":
            value = f"x{self.threshold:.3g}"
        elif self.unit == "#":
            value = f"#{self.threshold:.3g}"
        else:
            value = f"{self.threshold:,.3g}"
        return f"{self.says} {self.op} {value}"


@dataclass(frozen=True)
class Effect:
    """A claim's effect as its seed measured it, and the two conditions the
    convention makes of it: supported at or beyond SUPPORT of the effect,
    not supported at or within REFUTE of it.  The effect is measured from
    `origin`, the figure where there is none (0 for a share, a cut or a
    count; 1 for a ratio of costs), in the direction of the seed's figure:
    "beyond" is >= for a seed above its origin, <= for one below it (a
    ratio of costs under 1: an instruction cheaper than another).  A claim
    whose seed names the effect without a figure takes what its words
    assert as `seed` (all of a share, once per call) and says so in `of`."""
    figure: str
    seed: float         # the seed's figure, in the figure's own terms
    says: str           # the figure in words
    unit: str = ""
    origin: float = 0.0
    of: str = "the seed's effect"       # what `seed` is, in words

    def threshold(self, fraction: float) -> float:
        return self.origin + fraction * (self.seed - self.origin)

    def _words(self, fraction: float) -> str:
        return f"{self.says} ({FRACTION_WORDS[fraction]} of {self.of})"

    @property
    def _beyond(self) -> tuple[str, str]:
        """The operators of "at or beyond" and "at or within"."""
        return (">=", "<=") if self.seed >= self.origin else ("<=", ">=")

    @property
    def supported(self) -> Condition:
        return Condition(self.figure, self._beyond[0], self.threshold(SUPPORT),
                         self._words(SUPPORT), self.unit, self)

    @property
    def refuted(self) -> Condition:
        return Condition(self.figure, self._beyond[1], self.threshold(REFUTE),
                         self._words(REFUTE), self.unit, self)


@dataclass(frozen=True)
class Undecidable:
    """Where the model cannot decide a claim: a control inside the model (a
    pattern the seed measured beside the claim's, which the same model and
    measure must show too) found absent, where `condition` holds.  The
    verdict is then inconclusive, "not decidable on this model: " and `why`,
    whose "{figure}" is the figure's interval as `spec` formats it."""
    condition: Condition
    why: str
    spec: str = ".2f"

    def reason(self, x: Interval) -> str:
        return "not decidable on this model: " + self.why.format(figure=format(x, self.spec))


@dataclass(frozen=True)
class Rule:
    supported: tuple[Condition, ...]       # all must hold
    not_supported: tuple[Condition, ...]   # any one suffices
    # Why the thresholds that are no fraction of a seed's effect are where
    # they are (the claim's words, a check that the design ran); "" where
    # every threshold is one.
    basis: str = ""
    # Where the model cannot decide: checked after not_supported, before
    # the other reasons for inconclusive.
    undecidable: tuple[Undecidable, ...] = ()

    def __post_init__(self):
        assert self.basis or all(c.effect for c in self.thresholds()), \
            "a threshold that is no fraction of the seed's effect, and no basis for it"

    def text(self) -> str:
        effect = any(c.effect for c in self.thresholds())
        why = [*([f"a threshold on the effect is {FRACTION_WORDS[SUPPORT]} of it to support, "
                  f"{FRACTION_WORDS[REFUTE]} to refute"] if effect else []),
               *([self.basis] if self.basis else [])]
        blind = " or ".join(u.condition.shown() for u in self.undecidable)
        return (f"supported if {' and '.join(c.shown() for c in self.supported)}; "
                f"not supported if {' or '.join(c.shown() for c in self.not_supported)}; "
                + (f"otherwise not decidable on this model (inconclusive) if {blind}; "
                   if blind else "") +
                "inconclusive otherwise, or when a 95% interval holds a threshold that "
                f"decides ({'; '.join(why)})")

    def thresholds(self) -> list[Condition]:
        return [*self.supported, *self.not_supported,
                *(u.condition for u in self.undecidable)]

    def verdict(self, figures: dict[str, Interval]) -> tuple[str, str]:
        """The verdict on these figures, and why it is inconclusive where an
        interval holds a threshold (else "")."""
        s = [c.holds(figures[c.figure]) for c in self.supported]
        n = [c.holds(figures[c.figure]) for c in self.not_supported]
        blind = [u for u in self.undecidable
                 if u.condition.holds(figures[u.condition.figure]) is True]
        if all(h is True for h in s):
            assert not any(h is True for h in n) and not blind, "a rule whose verdicts overlap"
            return SUPPORTED, ""
        if any(h is True for h in n):
            return NOT_SUPPORTED, ""
        if blind:
            return INCONCLUSIVE, "; ".join(u.reason(figures[u.condition.figure]) for u in blind)
        # Undecided conditions that could still have decided: a supported
        # one where none of the others failed, a not-supported one, or one
        # where the model cannot decide.
        open_ = [c for c, h in zip(self.supported, s) if h is None] \
            if not any(h is False for h in s) else []
        open_ += [c for c, h in zip(self.not_supported, n) if h is None]
        open_ += [u.condition for u in self.undecidable
                  if u.condition.holds(figures[u.condition.figure]) is None]
        held = [f"{c.says} {figures[c.figure]:.4g} (threshold {c.shown()})" for c in open_
                if not math.isnan(figures[c.figure].mean)]
        # A figure these results could not measure (the claim's figures()
        # says why where it knows): named once, in its first condition's
        # words, so that the verdict says what would decide it.
        unmeasured: dict[str, str] = {}
        for c in open_:
            if math.isnan(figures[c.figure].mean):
                unmeasured.setdefault(c.figure, c.says)
        if not held and not unmeasured:
            # Nothing undecided could have decided: the figures meet
            # neither verdict's conditions.
            failed = [f"{c.says} {figures[c.figure]:.4g} (threshold {c.shown()})"
                      for c, h in zip(self.supported, s) if h is False]
            return INCONCLUSIVE, ("between the rule's verdicts: not " + "; not ".join(failed) +
                                  ", and no condition for not supported holds")
        return INCONCLUSIVE, "; ".join(
            [*(["the 95% interval holds a threshold: " + "; ".join(held)] if held else []),
             *([f"not measured: {', '.join(unmeasured.values())}"] if unmeasured else [])])


@dataclass(frozen=True)
class Control:
    """A negative control: the same rule with the design under test
    replaced by `design`, on which it must say "not supported"."""
    design: str
    why: str            # why the claim must fail on it


@dataclass(frozen=True)
class Measured:
    """What one repeat measured: the figures the rule reads, and the
    numbers behind them (for the claims page's pictures)."""
    figures: dict[str, float]
    numbers: dict = field(default_factory=dict)
    measure: str = ""       # what decided: "modelled cycles", "simulated time", ...
    reason: str = ""        # why the rule cannot decide on these figures ("" if it can)
    # The backend cannot give the claim's measure (its reason says why): the
    # figures are shown and are no evidence (claims/best.py, rule 1).
    cannot_measure: bool = False
