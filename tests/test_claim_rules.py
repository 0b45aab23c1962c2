"""The claims' rule engine (hotline.analysis.claims.rules) against values
worked out by hand: intervals over repeats (Student's t, bounded by what
the figure can take, a rank's bootstrap) and how they print; conditions,
and a rule's verdicts between, across and beside its thresholds, a control
the model cannot show included.  Then every claim's rule: both verdicts
apart, the threshold convention (half and a quarter of the seed's effect)
or a basis that says why not, each figure's kind, each threshold stated in
the rule's text, a control or the reason for none, and the history that
docs/claims.md repeats word for word."""

import math

import pytest

from hotline import paths
from hotline.analysis.claims import CLAIMS, INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED
from hotline.analysis.claims.rules import (
    CUT, MEAN, RANK, REFUTE, SHARE, SHIFT, SUPPORT, Condition, Effect, Interval, Rule,
    Undecidable)


def test_an_interval_is_students_t_over_the_repeats():
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.3027: 2 -/+ 4.3027 / sqrt(3) = 2.4842
    i = Interval.of([1, 2, 3])
    assert (i.mean, i.n) == (2, 3)
    assert i.low == pytest.approx(2 - 2.4842, abs=1e-4)
    assert i.high == pytest.approx(2 + 2.4842, abs=1e-4)
    assert f"{i:.2f}" == "2.00 (-0.48-4.48, 3 runs)"
    assert Interval.of([5.0]) == Interval(5.0, 5.0, 5.0, 1) and f"{Interval.of([5.0]):.1f}" == "5.0"
    assert Interval.of([7, 7, 7]) == Interval(7, 7, 7, 3)       # no spread: a point
    unknown = Interval.of([1, float("nan")])
    assert math.isnan(unknown.mean) and f"{unknown:.1%}" == "-"      # not "nan%"


def test_an_interval_is_bounded_by_what_its_figure_can_take():
    """A share's t-interval is cut to 0-100%, a cut's at 100% only (a cut
    below zero is a rise, which a run can measure), a shift of shares to
    -100%-100%; the mean is the mean either way."""
    near_zero = [0.0, 0.0, 0.0, 0.0003, 0.0012]      # t-interval -0.0004-0.0010
    assert Interval.of(near_zero).low < 0
    share = Interval.of(near_zero, SHARE)
    assert (share.low, share.mean) == (0.0, pytest.approx(0.0003)) and share.high < 0.0011
    rises = [-0.3, 0.1, 0.2, 0.9, 0.95]
    cut = Interval.of(rises, CUT)
    assert cut.low == Interval.of(rises).low < 0 and cut.high == 1.0
    assert Interval.of([-0.99, 0.9, 0.99], SHIFT).low == -1.0


def test_a_rank_has_a_bootstrap_interval_of_places_the_runs_gave():
    """Places 4, 5, 5, 4, 5: Student's t gives 3.92-5.28, past the places
    any run gave; the percentile bootstrap of the mean (10,000 resamples
    of the five, a fixed seed) gives 4.2-5.0, the same on every call."""
    places = [4, 5, 5, 4, 5]
    t = Interval.of(places, MEAN)
    assert (round(t.low, 2), round(t.high, 2)) == (3.92, 5.28)
    rank = Interval.of(places, RANK)
    assert (rank.mean, rank.low, rank.high) == (pytest.approx(4.6), 4.2, 5.0)
    assert Interval.of(places, RANK) == rank                         # deterministic
    assert f"{rank:.1f}" == "4.6 (4.2-5.0, 5 runs)"
    assert f"{Interval.of([3, 3, 3], RANK):.0f}" == "3 (the same in 3 runs)"


@pytest.mark.parametrize("op, low, high, holds", [
    (">", 1.1, 1.2, True), (">", 0.8, 1.0, False), (">", 0.9, 1.1, None),
    (">", 1.0, 1.2, None),         # the threshold at the low end is inside
    (">=", 1.0, 1.2, True), ("<", 0.8, 0.9, True), ("<", 1.0, 1.2, False),
    ("<=", 0.8, 1.0, True), ("<=", 0.9, 1.1, None),
])
def test_a_condition_holds_fails_or_holds_its_threshold(op, low, high, holds):
    assert Condition("x", op, 1.0, "x").holds(Interval((low + high) / 2, low, high, 5)) is holds


def test_an_interval_across_a_threshold_makes_the_verdict_inconclusive():
    rule = Rule((Condition("x", ">", 1.0, "x"),), (Condition("x", "<", 0.5, "x"),),
                basis="bounds of the test's own")
    assert rule.verdict({"x": Interval(1.2, 1.1, 1.3, 5)}) == (SUPPORTED, "")
    assert rule.verdict({"x": Interval(0.4, 0.3, 0.45, 5)}) == (NOT_SUPPORTED, "")
    # Between the verdicts, decided: inconclusive, saying so.
    assert rule.verdict({"x": Interval(0.7, 0.6, 0.8, 5)}) == (
        INCONCLUSIVE, "between the rule's verdicts: not x 0.7 (0.6-0.8, 5 runs) (threshold "
                      "x > 1), and no condition for not supported holds")
    verdict, reason = rule.verdict({"x": Interval(1.05, 0.95, 1.15, 5)})
    assert verdict == INCONCLUSIVE
    assert reason == ("the 95% interval holds a threshold: x 1.05 (0.95-1.15, 5 runs) "
                      "(threshold x > 1)")


def test_a_control_the_model_cannot_show_makes_the_verdict_not_decidable():
    """An effect whose seed lies below its origin (a ratio under 1, as C2's
    remove path) is shown at or below half-way to the seed's figure and
    absent at or above a quarter-way.  Absent, as an Undecidable, it makes
    the verdict "not decidable on this model", unless a not-supported
    condition holds; an interval holding its threshold says so."""
    control = Effect("c", 0.2, "c", origin=1.0)
    assert (control.supported.op, control.supported.threshold) == ("<=", pytest.approx(0.6))
    assert (control.refuted.op, control.refuted.threshold) == (">=", pytest.approx(0.8))
    rule = Rule((Condition("x", ">=", 1.0, "x"), control.supported),
                (Condition("x", "<=", 0.5, "x"),), basis="bounds of the test's own",
                undecidable=(Undecidable(control.refuted, "c is {figure}"),))
    assert "otherwise not decidable on this model (inconclusive) if c (a quarter of the " \
        "seed's effect) >= 0.8; " in rule.text()

    def verdict(x: float, c: list[float]) -> tuple[str, str]:
        return rule.verdict({"x": Interval.of([x]), "c": Interval.of(c)})
    assert verdict(1.1, [0.6]) == (SUPPORTED, "")
    assert verdict(1.1, [0.8]) == (INCONCLUSIVE, "not decidable on this model: c is 0.80")
    assert verdict(0.7, [0.9]) == (INCONCLUSIVE, "not decidable on this model: c is 0.90")
    assert verdict(0.4, [0.9]) == (NOT_SUPPORTED, "")
    assert verdict(1.1, [0.7])[1].startswith("between the rule's verdicts: not c (half")
    assert verdict(1.1, [0.7, 0.9])[1].startswith("the 95% interval holds a threshold: c (half")


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_rule_has_both_verdicts_apart(claim):
    """At each threshold and a little either side of it, with every other
    figure anywhere, "supported" and "not supported" never both hold (the
    rule asserts it), and each figure the rule reads is measured."""
    rule = CLAIMS[claim].rule
    names = sorted({c.figure for c in rule.thresholds()})
    values = sorted({c.threshold * f for c in rule.thresholds() for f in (0.9, 1.0, 1.1)} |
                    {c.threshold + d for c in rule.thresholds() for d in (-1, 1)})
    verdicts = set()
    for value in values:
        for name in names:
            for other in values:
                figures = {n: Interval.of([value if n == name else other]) for n in names}
                verdicts.add(rule.verdict(figures)[0])
    assert verdicts == {SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE}


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_threshold_follows_the_convention_or_says_why_not(claim):
    """A threshold on a seed's effect is SUPPORT of it (>=) in the
    supported list and REFUTE of it (<=) in the not-supported list, both
    made from the same effect; the others are bounds that the rule's basis
    explains.  Half and a quarter, the same for every claim."""
    rule = CLAIMS[claim].rule
    assert (SUPPORT, REFUTE) == (0.5, 0.25)
    effects = {c.effect for c in rule.thresholds() if c.effect}
    for effect in effects:
        # A control's effect absent makes the model blind, not the claim
        # refuted (C2's remove path).
        assert effect.supported in rule.supported and effect.refuted in \
            (*rule.not_supported, *(u.condition for u in rule.undecidable))
        beyond, within = (">=", "<=") if effect.seed >= effect.origin else ("<=", ">=")
        for condition, op, fraction in ((effect.supported, beyond, SUPPORT),
                                        (effect.refuted, within, REFUTE)):
            assert condition.op == op and condition.threshold == pytest.approx(
                effect.origin + fraction * (effect.seed - effect.origin))
    others = [c for c in rule.thresholds() if not c.effect]
    assert rule.basis if others else True
    assert rule.basis in rule.text()


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_figure_a_rule_reads_as_a_share_or_a_place_has_its_kind(claim):
    """A figure a condition compares as a percentage has a bounded kind
    (a share, a cut, a shift of shares), one compared as a place a rank's
    bootstrap interval, so that no interval the rule decides on runs past
    what a run can measure."""
    c = CLAIMS[claim]
    for condition in c.rule.thresholds():
        kind = c.kinds.get(condition.figure, MEAN)
        if condition.unit == "%":
            assert kind in (SHARE, CUT, SHIFT), condition.figure
        if condition.unit == "#":
            assert kind == RANK, condition.figure


def test_the_rule_history_since_2026_11_29_is_in_the_claims_document():
    """Each claim's entries since the day the threshold convention was
    chosen (C2's two: the convention, and the remove path's control; C4's
    three: the convention, the lock's time as its measure, that time read
    from the measuring build; C11's one: forkwait as its measure, its
    thresholds being no fraction of an effect) are docs/claims.md's, word
    for word; the module's is the one home."""
    text = (paths.REPO / "docs" / "claims.md").read_text()
    entries = [(c.id, h) for c in CLAIMS.values() for h in c.history
               if h[:10] >= "2026-11-29"]
    assert {claim for claim, _ in entries} == {f"C{n}" for n in range(1, 12)}
    assert [claim for claim, _ in entries].count("C2") == 2
    assert [claim for claim, _ in entries].count("C4") == 3
    for claim, entry in entries:
        assert f"- {claim}: {entry}\n" in text, claim


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_threshold_is_stated_in_its_rule(claim):
    rule = CLAIMS[claim].rule
    for condition in rule.thresholds():
        assert condition.shown() in rule.text()


def test_every_claim_has_a_control_or_says_why_not_and_a_history():
    for claim in CLAIMS.values():
        assert (claim.control is None) == bool(claim.no_control), claim.id
        assert claim.history and all(h[:4] == "2026" for h in claim.history), claim.id
    assert {c.id for c in CLAIMS.values() if c.control} == {"C4", "C5", "C9", "C10"}
