"""What a claim's rule is made of, and how it decides over repeated runs.

A rule is two lists of conditions on named figures, fixed before any data:
"supported" when every supported condition holds, "not supported" when any
not-supported condition holds, "inconclusive" otherwise.  A figure is
measured once per repeat of the experiment, and a condition is decided on
the figure's 95% interval (Student's t over the repeats), not on one value:
it holds when the whole interval meets it, fails when none of it does, and
is undecided when its threshold lies inside the interval.  An undecided
condition that would have changed the verdict makes it "inconclusive", and
the reason says which threshold the interval holds.  With one run the
interval is the value itself, and the figure says "1 run".
"""

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from hotline.intervals import half_width

SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE)
NAN = float("nan")


@dataclass(frozen=True)
class Interval:
    """A figure over repeated runs: the mean and its 95% interval."""
    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values) -> "Interval":
        """The 95% Student-t interval of the mean of `values` (a point for
        one value or for values that do not vary; NaN if any is NaN: a
        repeat that could not measure the figure leaves it unknown)."""
        values = np.asarray(list(values), dtype=float)
        if values.size == 0 or np.isnan(values).any():
            return cls(NAN, NAN, NAN, int(values.size))
        mean = float(values.mean())
        if values.size == 1 or np.all(values == values[0]):
            return cls(mean, mean, mean, int(values.size))
        half = float(half_width(values.std(ddof=1), values.size))
        return cls(mean, mean - half, mean + half, int(values.size))

    def within(self, low: float, high: float) -> "Interval":
        """The interval cut to the range the figure can take (a share's
        0 to 100%): a Student-t interval of a figure near its bound runs
        past it, which no run can measure."""
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
    unit: str = ""      # "%": shown as a percentage; "x": as a factor

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
        else:
            value = f"{self.threshold:,.3g}"
        return f"{self.says} {self.op} {value}"


@dataclass(frozen=True)
class Rule:
    supported: tuple[Condition, ...]       # all must hold
    not_supported: tuple[Condition, ...]   # any one suffices

    def text(self) -> str:
        return (f"supported if {' and '.join(c.shown() for c in self.supported)}; "
                f"not supported if {' or '.join(c.shown() for c in self.not_supported)}; "
                "inconclusive otherwise, or when a 95% interval holds a threshold that decides")

    def thresholds(self) -> list[Condition]:
        return [*self.supported, *self.not_supported]

    def verdict(self, figures: dict[str, Interval]) -> tuple[str, str]:
        """The verdict on these figures, and why it is inconclusive where an
        interval holds a threshold (else "")."""
        s = [c.holds(figures[c.figure]) for c in self.supported]
        n = [c.holds(figures[c.figure]) for c in self.not_supported]
        if all(h is True for h in s):
            assert not any(h is True for h in n), "a rule whose verdicts overlap"
            return SUPPORTED, ""
        if any(h is True for h in n):
            return NOT_SUPPORTED, ""
        # Undecided conditions that could still have decided: a supported
        # one where none of the others failed, or a not-supported one.
        open_ = [c for c, h in zip(self.supported, s) if h is None] \
            if not any(h is False for h in s) else []
        open_ += [c for c, h in zip(self.not_supported, n) if h is None]
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
