"""Whether a sampled gem5 run's estimates (sampled_cycles.parquet, SMARTS
windows) hold against what they estimate: the three checks of
docs/gem5.md, "Sampled simulation", each on the top instructions:

  micro-ops  the sampled run's own micro-ops per instruction (its retire
             counts), within the windows' interval of micro_op_share:
             whether the windows are a fair sample of the execution they
             came from
  time       the exact run's cycles per micro-op per instruction, within the
             windows' interval of cycles_per_micro_op: the second half,
             across the two executions (same code, same cores)
  shares     the exact run's share of the cycles per instruction, within the
             windows' interval of share: both halves, across executions,
             which differ where the guest's work depends on timing

With 20 independent 95% intervals, 3 or fewer fall outside 98.4% of the
time; that is the bound the gem5 tests hold each check to.

    .venv/bin/python -m hotline.analysis.sampling EXACT_RUN_DIR SAMPLED_RUN_DIR [--top N]
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError, guarded
from hotline.records import done, manifest as run_record

TOP = 20
# The most of TOP independent 95% intervals that may miss by chance alone
# (binomial: P(4 or more of 20) = 1.6%).
ALLOWED_OUTSIDE = 3


def outside(value: pd.Series, sampled: pd.DataFrame, column: str) -> pd.DataFrame:
    """The rows of value (indexed by pc) outside the sampled interval of
    column (an instruction the windows never saw has the interval [0, 0])."""
    low = sampled[f"{column}_low"].reindex(value.index, fill_value=0.0)
    high = sampled[f"{column}_high"].reindex(value.index, fill_value=0.0)
    frame = pd.DataFrame({"value": value, "low": low, "high": high})
    return frame[(frame["value"] < frame["low"]) | (frame["value"] > frame["high"])]


def micro_ops_outside(sampled: pd.DataFrame, counted_micro_ops: float,
                      top: int = TOP) -> pd.DataFrame:
    """The top instructions by the sampled run's own micro-ops whose share
    lies outside the windows' estimate of it."""
    counted = sampled["counted_micro_ops"] / counted_micro_ops
    return outside(counted.nlargest(top), sampled, "micro_op_share")


def time_outside(sampled: pd.DataFrame, exact: pd.DataFrame, top: int = TOP) -> pd.DataFrame:
    """The exact run's top instructions by cycles whose cycles per micro-op
    lie outside the windows' estimate of it."""
    per_pc = exact.groupby("pc")[["cycles", "micro_ops"]].sum().nlargest(top, "cycles")
    return outside(per_pc["cycles"] / per_pc["micro_ops"], sampled, "cycles_per_micro_op")


def shares_outside(sampled: pd.DataFrame, exact: pd.DataFrame, top: int = TOP) -> pd.DataFrame:
    """The exact run's top instructions by share of the cycles whose share
    lies outside the windows' estimate of it."""
    cycles = exact.groupby("pc")["cycles"].sum()
    return outside((cycles / cycles.sum()).nlargest(top), sampled, "share")


def read(exact_dir: Path, sampled_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The exact run's cycles, the sampled run's estimates (by pc) and its
    counted micro-ops; each run whole (done.damage) and with its table."""
    for directory, table in ((exact_dir, "cycles.parquet"),
                             (sampled_dir, "sampled_cycles.parquet")):
        if problem := done.damage(Path(directory)):
            raise HotlineError(f"{problem}: give runs as hotline left them")
        if not (Path(directory) / table).is_file():
            raise HotlineError(f"{directory} has no {table}: give an exact O3 run and a sampled "
                               "one (pentium3-4way-o3 and pentium3-4way-o3-sampled, say)")
    manifest = run_record.read(Path(sampled_dir))
    sampled = pd.read_parquet(Path(sampled_dir) / "sampled_cycles.parquet").set_index("pc")
    return (pd.read_parquet(Path(exact_dir) / "cycles.parquet"), sampled,
            float((manifest.account or {})["counted_micro_ops"]))


def report(exact_dir: Path, sampled_dir: Path, top: int = TOP) -> str:
    exact, sampled, counted = read(exact_dir, sampled_dir)
    names = sampled["symbol"].fillna("") + "+" + sampled["offset"].astype(str)
    lines = [f"{len(sampled)} instructions seen in {int(sampled['windows'].iloc[0])} windows"]
    checks = (("micro-ops (same execution)", micro_ops_outside(sampled, counted, top)),
              ("time per micro-op (across executions)", time_outside(sampled, exact, top)),
              ("shares (across executions)", shares_outside(sampled, exact, top)))
    for check, missed in checks:
        lines.append(f"{check}: {len(missed)} of the top {top} outside their 95% intervals"
                     f" ({'within' if len(missed) <= ALLOWED_OUTSIDE else 'beyond'} the "
                     f"{ALLOWED_OUTSIDE} that chance leaves out)")
        for pc, row in missed.iterrows():
            lines.append(f"  {names.get(pc, hex(pc))}: {row['value']:.4g} outside "
                         f"[{row['low']:.4g}, {row['high']:.4g}]")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exact", type=Path)
    parser.add_argument("sampled", type=Path)
    parser.add_argument("--top", type=int, default=TOP)
    args = parser.parse_args(argv)
    return guarded(lambda: print(report(args.exact, args.sampled, args.top)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
