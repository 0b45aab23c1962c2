"""What each mode's vCPU scheduling lets coherence figures show: cachebench's
ping-pong and false-sharing pair under hotline-cache, once in deterministic
and once in parallel mode (smoke scale, skylake-4core, baseline kernel).

    .venv/bin/python bench/interleaving.py

Prints, per mode and benchmark, the accesses of the benchmark's busiest load
and its L1D misses by cause, and writes bench/results/interleaving.json.
docs/interleaving.md discusses the numbers.
"""

import json
import os
import platform
import tempfile
from pathlib import Path

import pandas as pd

from hotline import paths
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from hotline.simulate.qemu import simulator as qemu

RESULTS = Path(__file__).parent / "results"
BENCHMARKS = {"player": "ping-pong", "incrementer": "false sharing"}


def measure(run_dir: Path, symbols) -> list[dict]:
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
                     **{cause: int(n) for cause, n in at.groupby("cause")["count"].sum().items()}})
    return rows


def main() -> None:
    results = {"host": platform.node(), "cpus": os.cpu_count(), "modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        symbols = guest_program_symbols(
            paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c", tmp)
        os.environ["HOTLINE_RESULTS"] = str(tmp / "results")
        for mode in qemu.MODES:
            spec = tmp / f"interleaving-{mode}.toml"
            spec.write_text(f'description = "interleaving"\nvariants = ["baseline"]\n'
                            f'systems = ["skylake-4core"]\nmode = "{mode}"\n'
                            'plugin = "hotline-cache"\n'
                            'workloads = [{ name = "cachebench", scale = "smoke" }]\n')
            (result,) = run_experiment(spec, rerun=True)
            if result.failure:
                raise SystemExit(f"{mode}: {result.failure}")
            results["modes"][mode] = measure(result.directory, symbols)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "interleaving.json").write_text(json.dumps(results, indent=2) + "\n")
    for mode, rows in results["modes"].items():
        print(mode)
        for row in rows:
            print("  " + ", ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
