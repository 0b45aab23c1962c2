"""The two backends on one region of interest: the smoke fork storm on the
baseline kernel, 4 CPUs of skylake-4core-crosscheck, root on the disk; the
QEMU cache model against gem5's TimingSimpleCPU with classic caches.

    GEM5=/path/to/gem5.opt .venv/bin/python bench/gem5_crosscheck.py

Runs configs/experiments/crosscheck-qemu.toml and crosscheck-gem5.toml (or
reuses their results: a run whose inputs are unchanged is not run again),
then compares their misses.parquet: total L1D and L2 data misses, and the
ten kernel functions with most L1D data misses, each with its share of the
kernel's L1D data misses on either side, and the coherence misses on
page->flags (what the quantum of deterministic mode is for:
docs/interleaving.md).  Goals: totals and page->flags's coherence misses
within 15%, the top ten's shares within 20% (relative).  Beside them, with no goal, the
L1D data misses' split by cause on either side (gem5's from hotline's miss
profile, which needs gem5 built with hotline's extension).  Writes bench/results/gem5_crosscheck.json and prints the tables.

Instruction fetches are left out on both sides: the QEMU model fetches a
block's lines once per executed block, gem5's L1I sees every fetch.
"""

import argparse
import json
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from hotline import outputs

RESULTS = Path(__file__).parent / "results"
CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "experiments"
SPECS = {"qemu": CONFIGS / "crosscheck-qemu.toml", "gem5": CONFIGS / "crosscheck-gem5.toml"}
TOTAL_GOAL = 0.15
SHARE_GOAL = 0.20
TOP = 10


def data_misses(misses: pd.DataFrame, level: str) -> pd.DataFrame:
    return misses[(misses.level == level) & (misses.kind != "fetch")]


def relative(a: float, b: float) -> float:
    """b relative to a: (b - a) / a."""
    return (b - a) / a if a else float("inf")


def compare(qemu: pd.DataFrame, gem5: pd.DataFrame, top: int = TOP) -> dict:
    """The cross-check of two misses tables (schema.MISSES)."""
    totals = {}
    for level in ("L1D", "L2"):
        q, g = (int(data_misses(m, level)["count"].sum()) for m in (qemu, gem5))
        totals[level] = {"qemu": q, "gem5": g, "relative": relative(q, g),
                         "met": abs(relative(q, g)) <= TOTAL_GOAL}
    shares = {}
    for name, m in (("qemu", qemu), ("gem5", gem5)):
        kernel = data_misses(m, "L1D")
        kernel = kernel[kernel.space == "kernel"]
        by_function = kernel.groupby("symbol")["count"].sum()
        shares[name] = by_function / by_function.sum()
    leaders = shares["qemu"].sort_values(ascending=False).head(top).index
    functions = []
    for symbol in leaders:
        q, g = float(shares["qemu"].get(symbol, 0.0)), float(shares["gem5"].get(symbol, 0.0))
        functions.append({"function": symbol, "qemu_share": q, "gem5_share": g,
                          "relative": relative(q, g), "met": abs(relative(q, g)) <= SHARE_GOAL})
    q, g = (page_flags_coherence(m) for m in (qemu, gem5))
    flags = {"qemu": q, "gem5": g, "relative": relative(q, g),
             "met": abs(relative(q, g)) <= TOTAL_GOAL}
    causes = {}
    for name, m in (("qemu", qemu), ("gem5", gem5)):
        by_cause = data_misses(m, "L1D").groupby("cause")["count"].sum()
        causes[name] = (by_cause / by_cause.sum()).to_dict()
    return {"totals": totals, "top_functions": functions, "page_flags_coherence": flags,
            "l1d_causes": {c: {b: float(causes[b].get(c, 0.0)) for b in causes}
                           for c in sorted(set(causes["qemu"]) | set(causes["gem5"]))},
            "met": all(t["met"] for t in totals.values()) and all(f["met"] for f in functions)
            and flags["met"]}


def page_flags_coherence(misses: pd.DataFrame) -> int:
    """L1D coherence misses on struct page's flags."""
    l1d = data_misses(misses, "L1D")
    return int(l1d.loc[(l1d.object == "struct page") & (l1d.field == "flags")
                       & (l1d.cause == "coherence"), "count"].sum())


def table(result: dict) -> str:
    lines = ["| | QEMU model | gem5 timing | gem5 vs QEMU | goal met |", "|---|---|---|---|---|"]
    for level, t in result["totals"].items():
        lines.append(f"| {level} data misses | {t['qemu']:,} | {t['gem5']:,} | "
                     f"{t['relative']:+.1%} | {'yes' if t['met'] else 'no'} |")
    f = result["page_flags_coherence"]
    lines.append(f"| page->flags coherence misses (L1D) | {f['qemu']:,} | {f['gem5']:,} | "
                 f"{f['relative']:+.1%} | {'yes' if f['met'] else 'no'} |")
    for f in result["top_functions"]:
        lines.append(f"| {f['function']} (share of kernel L1D) | {f['qemu_share']:.1%} | "
                     f"{f['gem5_share']:.1%} | {f['relative']:+.1%} | "
                     f"{'yes' if f['met'] else 'no'} |")
    lines += ["", "| L1D data misses by cause | QEMU model | gem5 timing |", "|---|---|---|"]
    for cause, share in result["l1d_causes"].items():
        lines.append(f"| {cause or 'cause unknown'} | {share['qemu']:.1%} | "
                     f"{share['gem5']:.1%} |")
    return "\n".join(lines)


def main() -> int:
    from hotline.experiment import run_experiment
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    runs = {}
    for backend, spec in SPECS.items():
        [result] = run_experiment(spec)
        if result.failure:
            print(f"gem5_crosscheck: the {backend} run failed: {result.failure}", file=sys.stderr)
            return 1
        if not (result.directory / "misses.parquet").exists():    # gem5 without the extension
            print(f"gem5_crosscheck: the {backend} run has no misses table: build gem5 with "
                  "hotline's extension (docs/gem5.md)", file=sys.stderr)
            return 1
        runs[backend] = result.directory
    misses = {b: pd.read_parquet(d / "misses.parquet") for b, d in runs.items()}
    result = compare(misses["qemu"], misses["gem5"])
    manifests = {b: json.loads((d / "manifest.json").read_text()) for b, d in runs.items()}
    record = {"result": result,
              "runs": {b: {"directory": str(d), "key": manifests[b]["key"],
                           "wall_seconds": manifests[b]["wall_seconds"],
                           "backend": manifests[b]["inputs"]["backend"]}
                       for b, d in runs.items()},
              "host": platform.node(), "date": datetime.now(timezone.utc).isoformat()}
    RESULTS.mkdir(exist_ok=True)
    outputs.write_text(RESULTS / "gem5_crosscheck.json", json.dumps(record, indent=2) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
