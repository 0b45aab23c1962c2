"""Evicted or stolen, on both backends: why the struct page misses of the
smoke fork storm missed (docs/causes.md).  The region of
bench/gem5_crosscheck.py (baseline kernel, skylake-4core-crosscheck, disk
root), made by the QEMU model at several quanta (turns woven block by
block) and, with GEM5 set, by gem5's timing cores with hotline's miss
profile, and with --o3 by gem5's O3 cores as well
(skylake-4core-crosscheck-o3: the same caches).  --storm N M runs the fork
storm at N loops of M iterations instead of the smoke scale's 4 x 10.

    [GEM5=/path/to/gem5.opt] .venv/bin/python bench/causes_forkstorm.py
        [--quanta 1000 10000 100000] [--o3] [--storm N M] [--suffix S]

The instructions are the kernel's with the most L1D data misses on
`struct page`'s flags and compound_head over all settings (the top three),
matched by symbol and offset (both backends run the same kernel).  For each,
and for all the kernel's L1D data misses, each setting's misses by cause
and the coherence share.  Goal (docs/causes.md): the coherence share at
each of the three instructions within 15% (relative) between gem5 and the
QEMU model at its default quantum.  Writes bench/results/causes_forkstorm
[-S].json and prints the table.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from hotline import outputs
from hotline.experiment import run_experiment
from hotline.results.schema import CAUSES
from hotline.simulate.qemu import DEFAULT_QUANTUM

BENCH = Path(__file__).parent
RESULTS = BENCH / "results"
CONFIGS = BENCH.parent / "configs" / "experiments"
SPECS = {"qemu": CONFIGS / "crosscheck-qemu.toml", "gem5": CONFIGS / "crosscheck-gem5.toml"}
# The line of each spec that names its workload, which --storm replaces.
STORM = 'workloads = [{ name = "forkstorm", scale = "smoke" }]'
O3_SYSTEM = ('systems = ["skylake-4core-crosscheck"]', 'systems = ["skylake-4core-crosscheck-o3"]')
QUANTA = [1_000, DEFAULT_QUANTUM, 100_000]
FIELDS = {("struct page", "flags"), ("struct page", "compound_head")}
TOP = 3
GOAL = 0.15


def l1d_data(misses: pd.DataFrame) -> pd.DataFrame:
    """The kernel's L1D data misses (fetches left out, as the cross-check
    leaves them: the two backends fetch differently)."""
    return misses[(misses.level == "L1D") & (misses.kind != "fetch") &
                  (misses.space == "kernel")]


def split(misses: pd.DataFrame) -> dict:
    """Misses by cause, their total and the coherence share."""
    by = misses.groupby("cause")["count"].sum()
    counts = {cause: int(by.get(cause, 0)) for cause in CAUSES}
    total = int(misses["count"].sum())
    return {"misses": total, **counts,
            "coherence_share": counts["coherence"] / total if total else None}


def on_fields(misses: pd.DataFrame) -> pd.DataFrame:
    keys = list(zip(misses["object"], misses["field"]))
    return misses[[key in FIELDS for key in keys]]


def top_instructions(tables: dict[str, pd.DataFrame], top: int = TOP) -> list[tuple]:
    """(symbol, offset) of the instructions with most L1D data misses on
    the fields, summed over every setting's table."""
    both = pd.concat([on_fields(l1d_data(m)) for m in tables.values()])
    ranked = both.groupby(["symbol", "offset"])["count"].sum().sort_values(
        ascending=False, kind="stable")
    return [(str(s), int(o)) for s, o in ranked.index[:top]]


def compare(tables: dict[str, pd.DataFrame], reference: str | None,
            against: str | None) -> dict:
    """Each setting's split at the top instructions and over the kernel,
    and, where both `reference` (gem5) and `against` (the QEMU default)
    are there, the coherence shares' relative difference at each
    instruction against the goal."""
    rows = []
    for symbol, offset in top_instructions(tables):
        row = {"symbol": symbol, "offset": offset, "settings": {}}
        for name, m in tables.items():
            at = on_fields(l1d_data(m))
            at = at[(at.symbol == symbol) & (at.offset == offset)]
            fields = sorted({f for f in at["field"].dropna()})
            row["settings"][name] = {**split(at), "fields": fields}
        if reference in tables and against in tables:
            r = row["settings"][reference]["coherence_share"]
            a = row["settings"][against]["coherence_share"]
            row["relative"] = (a - r) / r if r else None
            row["met"] = row["relative"] is not None and abs(row["relative"]) <= GOAL
        rows.append(row)
    kernel = {name: split(l1d_data(m)) for name, m in tables.items()}
    return {"instructions": rows, "kernel": kernel}


def render(result: dict) -> str:
    names = list(result["kernel"])
    head = ["instruction"] + [f"{n}: misses, coh/cap/conf/upg, coherence share" for n in names]
    lines = [" | ".join(head)]

    def cell(s):
        share = "-" if s["coherence_share"] is None else f"{s['coherence_share']:.1%}"
        return (f"{s['misses']:,}, {s['coherence']:,}/{s['capacity']:,}/{s['conflict']:,}/"
                f"{s['upgrade']:,}, {share}")
    for row in result["instructions"]:
        goal = ""
        if row.get("relative") is not None:
            goal = f"  ({row['relative']:+.1%}: {'met' if row['met'] else 'not met'})"
        elif "met" in row:
            goal = "  (no coherence miss on gem5: no relative difference)"
        lines.append(" | ".join([f"{row['symbol']}+{row['offset']:#x}"] +
                                [cell(row["settings"][n]) for n in names]) + goal)
    lines.append(" | ".join(["kernel, all L1D data"] +
                            [cell(result["kernel"][n]) for n in names]))
    return "\n".join(lines)


def run(spec: Path, name: str) -> tuple[pd.DataFrame, str]:
    """The spec's one run (made, or found with the same inputs): its
    misses table and its directory."""
    began = time.monotonic()
    (result,) = run_experiment(spec, rerun=False)
    if result.failure:
        raise SystemExit(f"{name}: {result.failure}")
    print(f"{name}: {result.directory} ({time.monotonic() - began:.0f} s)", file=sys.stderr)
    if not (result.directory / "misses.parquet").exists():    # gem5 without the extension
        raise SystemExit(f"{name}: no misses table in {result.directory}: build gem5 with "
                         "hotline's extension (docs/gem5.md)")
    return pd.read_parquet(result.directory / "misses.parquet"), str(result.directory)


def spec_text(spec: Path, storm: list[int] | None) -> str:
    """A spec's text, with the fork storm at `storm`'s loops and
    iterations where it is given."""
    text = spec.read_text()
    if storm is None:
        return text
    if text.count(STORM) != 1:
        raise SystemExit(f"{spec}: no line {STORM!r} for --storm to replace")
    instances, iterations = storm
    return text.replace(STORM, 'workloads = [{ name = "forkstorm", scale = "smoke", params = '
                               f'{{ instances = {instances}, iterations = {iterations} }} }}]')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quanta", type=int, nargs="*", default=QUANTA,
                        help="QEMU: instructions per vCPU turn (default: %(default)s)")
    parser.add_argument("--o3", action="store_true",
                        help="with GEM5 set, gem5's O3 cores too")
    parser.add_argument("--storm", type=int, nargs=2, metavar=("LOOPS", "ITERATIONS"),
                        help="the fork storm's size (default: the smoke scale's)")
    parser.add_argument("--suffix", default="", help="added to the results file's name")
    args = parser.parse_args()
    if args.storm is not None and min(args.storm) < 1:
        parser.error("--storm takes two positive counts: loops and iterations")
    # The specs' names are the results folders' (results/<name>/).
    tag = "" if args.storm is None else "-{}x{}".format(*args.storm)
    tables, made = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        def spec(name: str, text: str) -> Path:
            path = Path(tmp) / f"{name}{tag}.toml"
            path.write_text(text)
            return path
        for quantum in args.quanta:
            name = f"qemu q{quantum}"
            # The spec ends with its [qemu] table, which these join.
            text = spec_text(SPECS["qemu"], args.storm) + \
                f'quantum = {quantum}\ninterleave = "block"\n'
            tables[name], made[name] = run(spec(f"causes-q{quantum}", text), name)
        if os.environ.get("GEM5"):
            gem5 = spec_text(SPECS["gem5"], args.storm)
            tables["gem5 timing"], made["gem5 timing"] = run(
                SPECS["gem5"] if args.storm is None else spec("crosscheck-gem5", gem5),
                "gem5 timing")
            if args.o3:
                if gem5.count(O3_SYSTEM[0]) != 1:
                    raise SystemExit(f"{SPECS['gem5']}: no line {O3_SYSTEM[0]!r} for --o3")
                tables["gem5 O3"], made["gem5 O3"] = run(
                    spec("crosscheck-gem5-o3", gem5.replace(*O3_SYSTEM)), "gem5 O3")
        else:
            print("GEM5 not set: the QEMU settings only", file=sys.stderr)
    against = f"qemu q{DEFAULT_QUANTUM}"
    result = compare(tables, "gem5 timing", against)
    print(render(result))
    RESULTS.mkdir(exist_ok=True)
    suffix = f"-{args.suffix}" if args.suffix else ""
    outputs.write_text(RESULTS / f"causes_forkstorm{suffix}.json", json.dumps({
        "benchmark": "causes_forkstorm", "host": platform.node(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "storm": args.storm or "smoke", "runs": made, "goal": GOAL, "result": result},
        indent=2) + "\n")


if __name__ == "__main__":
    main()
