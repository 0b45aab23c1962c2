"""The claims' verdicts as a Markdown table, for documents: one row per
claim, the seed's figure beside the measured one, the verdict with what
decided it and over how many runs, and the negative control's verdict.
docs/claims.md holds this table for the committed smoke results, and a
test makes it again from them, so that the document cannot drift."""

from hotline.analysis.claims.best import control
from hotline.analysis.claims.claim import Check


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(checks: list[Check]) -> str:
    rows = ["| claim | seed figure | measured | verdict | decided on | control |",
            "|---|---|---|---|---|---|"]
    for c in checks:
        runs = f"{c.repeats} runs" if c.repeats > 1 else "1 run"
        verdict = c.verdict + (f": {c.reason}" if c.reason else "")
        rows.append("| " + " | ".join(_cell(x) for x in (
            f"{c.claim} {c.title}", c.seed_figure, c.measured, verdict,
            f"{c.measure or '-'}, {runs}", control(c))) + " |")
    return "\n".join(rows) + "\n"
