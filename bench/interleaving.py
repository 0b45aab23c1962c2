"""What each mode's vCPU scheduling lets coherence figures show: cachebench's
ping-pong and false-sharing pair under hotline-cache in deterministic mode
with QEMU's own turns and at each quantum (instructions per vCPU turn),
the model seeing each quantum's turns as run or woven block by block, and
once in parallel mode (smoke scale, skylake-4core, baseline kernel).

    .venv/bin/python bench/interleaving.py [--quanta 1000000 100000 ...]
        [--interleave turn block] [--no-parallel] [--suffix S]

Prints, per setting and benchmark, the accesses of the benchmark's busiest
load, its L1D misses by cause, what hardware would show (derived by hand in
docs/interleaving.md), the turns the plugin measured and the run's wall
time, and writes bench/results/interleaving[-S].json.  docs/interleaving.md
discusses the numbers.
"""

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import pandas as pd

from hotline import outputs, paths
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from hotline.workloads import load_workload

RESULTS = Path(__file__).parent / "results"
BENCHMARKS = {"player": "ping-pong", "incrementer": "false sharing"}
QUANTA = [10**6, 10**5, 10**4, 10**3, 10**2]
SMOKE = load_workload("cachebench").scales["smoke"]
# Hardware, derived by hand: each handoff of the ping-pong one coherence
# miss; the two incrementers, running at the same moment, alternate on the
# line at most once per increment (about 2 x iterations misses).
HARDWARE = {"ping-pong": SMOKE["handoffs"], "false sharing": 2 * SMOKE["iterations"]}


def measure(run_dir: Path, symbols) -> dict:
    insns = pd.read_parquet(run_dir / "instructions.parquet")
    misses = pd.read_parquet(run_dir / "misses.parquet")
    rows = []
    for name, label in BENCHMARKS.items():
        start, size = symbols[name]
        loads = insns[(insns["pc"] >= start) & (insns["pc"] < start + size)
                      & (insns["kind"] == "read")]
        load = loads.loc[loads["accesses"].idxmax()]
        at = misses[(misses["pc"] == load["pc"]) & (misses["level"] == "L1D")]
        rows.append({"benchmark": label, "function": name, "load_accesses": int(load["accesses"]),
                     "hardware_coherence": HARDWARE[label],
                     **{cause: int(n) for cause, n in at.groupby("cause")["count"].sum().items()}})
    turns = pd.read_parquet(run_dir / "turns.parquet")
    summary = None
    if len(turns):
        summary = {"turns": int(turns["turns"].sum()),
                   "mean_instructions": float(turns["instructions"].sum() / turns["turns"].sum()),
                   "longest_bucket": [int(turns["shortest"].max()), int(turns["longest"].max())],
                   "histogram": turns.groupby("shortest")["turns"].sum().astype(int)
                   .to_dict()}
    return {"benchmarks": rows, "turns": summary}


def run(tmp: Path, name: str, mode: str, quantum: int | None, interleave: str | None,
        symbols) -> dict:
    spec = tmp / f"interleaving-{name}.toml"
    spec.write_text('description = "interleaving"\nvariants = ["baseline"]\n'
                    'systems = ["skylake-4core"]\n'
                    'workloads = [{ name = "cachebench", scale = "smoke" }]\n'
                    f'[qemu]\nmode = "{mode}"\nplugin = "hotline-cache"\n'
                    + (f"quantum = {quantum}\n" if quantum is not None else "")
                    + (f'interleave = "{interleave}"\n' if interleave else ""))
    began = time.monotonic()
    (result,) = run_experiment(spec, rerun=True)
    if result.failure:
        raise SystemExit(f"{name}: {result.failure}")
    return {"mode": mode, "quantum": quantum, "interleave": interleave,
            "wall_seconds": round(time.monotonic() - began, 1),
            **measure(result.directory, symbols)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quanta", type=int, nargs="*", default=QUANTA,
                        help="instructions per vCPU turn to measure (default: %(default)s)")
    parser.add_argument("--interleave", nargs="*", choices=["turn", "block"],
                        default=["turn", "block"],
                        help="how the model sees each quantum's turns (default: both)")
    parser.add_argument("--no-parallel", action="store_true", help="skip parallel mode")
    parser.add_argument("--suffix", default="", help="added to the results file's name")
    args = parser.parse_args()
    results = {"host": platform.node(), "cpus": os.cpu_count(), "settings": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        symbols = guest_program_symbols(
            paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c", tmp)
        os.environ["HOTLINE_RESULTS"] = str(tmp / "results")
        # quantum 0: QEMU's own turns, up to the next virtual-timer deadline.
        settings = [("deterministic", "deterministic", 0, None),
                    *((f"quantum-{q}-{i}", "deterministic", q, i)
                      for q in args.quanta for i in args.interleave),
                    *([] if args.no_parallel else [("parallel", "parallel", None, None)])]
        for name, mode, quantum, interleave in settings:
            results["settings"].append(run(tmp, name, mode, quantum, interleave, symbols))
            setting = results["settings"][-1]
            print(f"{name}: {setting['wall_seconds']} s, turns {setting['turns']}", flush=True)
            for row in setting["benchmarks"]:
                print("  " + ", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    RESULTS.mkdir(exist_ok=True)
    suffix = f"-{args.suffix}" if args.suffix else ""
    outputs.write_text(RESULTS / f"interleaving{suffix}.json", json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
