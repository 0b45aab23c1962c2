"""How far a sampling profiler's view is from the exact cycle profile, by
TIP's measure (Gottschall, Eeckhout, Jahre, "TIP: Time-Proportional
Instruction Profiling", MICRO 2021): the share of a function's samples
that name another instruction than its cycles would, half the sum over its
instructions of |share of the samples - share of the cycles|.  0 when the
samples fall where the time goes, 1 when none does.  TIP reported 1.6%
for itself and 9.3% for the next-committing view.

The views are the cycle profile's (configs/gem5/extras/cycle_profile.hh):
`samples` names the next instruction to commit, `skid_samples` the one
after the boundary at which a Pentium III takes the counter interrupt."""

import math

import pandas as pd

# A view's name, and the cycles table's column that holds its samples.
VIEWS = {"next-committing": "samples", "skid": "skid_samples"}


def view_error(cycles: pd.Series, samples: pd.Series) -> float:
    """TIP's error of samples against cycles, both by instruction (any
    index; an instruction missing from one has 0 there); NaN where either
    has nothing to share."""
    cycles, samples = cycles.astype("float64"), samples.astype("float64")
    if not cycles.sum() > 0 or not samples.sum() > 0:
        return math.nan
    cycle_share, sample_share = cycles / cycles.sum(), samples / samples.sum()
    return 0.5 * float(sample_share.sub(cycle_share, fill_value=0.0).abs().sum())


def errors_by_function(cycles: pd.DataFrame, top: int = 20) -> pd.DataFrame:
    """The `top` functions by cycles (symbol; summed over cores and
    regions): their cycles, share of all, and each view's error (NaN for a
    view the profile lacks)."""
    columns = [c for c in VIEWS.values() if c in cycles.columns and cycles[c].notna().all()]
    per_pc = cycles.groupby(["symbol", "pc"])[["cycles", *columns]].sum()
    total = float(per_pc["cycles"].sum())
    rows = []
    for symbol, rows_of in per_pc.groupby(level="symbol"):
        row = {"symbol": symbol, "cycles": float(rows_of["cycles"].sum())}
        row["share"] = row["cycles"] / total if total else math.nan
        for view, column in VIEWS.items():
            row[f"{view} error"] = view_error(rows_of["cycles"], rows_of[column]) \
                if column in columns else math.nan
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["symbol", "cycles", "share",
                                        *(f"{v} error" for v in VIEWS)])
    return frame.sort_values("cycles", ascending=False).head(top).reset_index(drop=True)
