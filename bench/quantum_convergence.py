"""Where the QEMU figures stop moving as vCPU turns shorten: the smoke fork
storm (baseline kernel, skylake-4core-crosscheck, disk root: the QEMU side
of bench/gem5_crosscheck.py) in deterministic mode with QEMU's own turns and
at each quantum (the model seeing the turns as run, or woven block by
block: weave.c), beside gem5's timing cores on the same region (the
cross-check's recorded gem5 figures).

    .venv/bin/python bench/quantum_convergence.py [--quanta 1000000 ...]
        [--interleave turn block] [--suffix S]

Per setting: the run's wall time, the L1D data misses and the coherence
share of them, the coherence misses on page->flags, the thief matrix of
page->flags (victim CPU x thief CPU) and the turns the plugin measured.
Writes bench/results/quantum_convergence[-S].json; docs/interleaving.md
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

from hotline import outputs
from hotline.experiment import run_experiment

BENCH = Path(__file__).parent
RESULTS = BENCH / "results"
SPEC = BENCH.parent / "configs" / "experiments" / "crosscheck-qemu.toml"
QUANTA = [10**6, 10**5, 10**4, 10**3]


def measure(run_dir: Path) -> dict:
    misses = pd.read_parquet(run_dir / "misses.parquet")
    l1d = misses[(misses["level"] == "L1D") & (misses["kind"] != "fetch")]
    coherence = l1d[l1d["cause"] == "coherence"]
    flags = coherence[(coherence["object"] == "struct page") & (coherence["field"] == "flags")]
    thieves = pd.read_parquet(run_dir / "coherence.parquet")
    thieves = thieves[(thieves["object"] == "struct page") & (thieves["field"] == "flags")]
    matrix = thieves.pivot_table(index="cpu", columns="thief_cpu", values="count",
                                 aggfunc="sum", fill_value=0)
    turns = pd.read_parquet(run_dir / "turns.parquet")
    return {
        "l1d_data_misses": int(l1d["count"].sum()),
        "l1d_coherence": int(coherence["count"].sum()),
        "l1d_coherence_share": float(coherence["count"].sum() / l1d["count"].sum()),
        "page_flags_coherence": int(flags["count"].sum()),
        "page_flags_thieves": {f"cpu{v}": {f"by_cpu{t}": int(n) for t, n in row.items()}
                               for v, row in matrix.iterrows()},
        "turns": int(turns["turns"].sum()),
        "mean_turn": float(turns["instructions"].sum() / max(1, turns["turns"].sum())),
    }


def gem5_reference() -> dict | None:
    """The cross-check's gem5 side, as bench/gem5_crosscheck.py recorded it."""
    path = RESULTS / "gem5_crosscheck.json"
    if not path.exists():
        return None
    recorded = json.loads(path.read_text())
    result = recorded["result"]
    return {"l1d_data_misses": result["totals"]["L1D"]["gem5"],
            "l1d_coherence_share": result["l1d_causes"]["coherence"]["gem5"],
            "recorded": recorded.get("when") or recorded.get("date")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quanta", type=int, nargs="*", default=QUANTA,
                        help="instructions per vCPU turn to measure (default: %(default)s)")
    parser.add_argument("--interleave", nargs="*", choices=["turn", "block"],
                        default=["turn", "block"],
                        help="how the model sees each quantum's turns (default: both)")
    parser.add_argument("--suffix", default="", help="added to the results file's name")
    args = parser.parse_args()
    results = {"host": platform.node(), "cpus": os.cpu_count(), "spec": SPEC.name,
               "gem5": gem5_reference(), "settings": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["HOTLINE_RESULTS"] = str(tmp / "results")
        # quantum 0: QEMU's own turns, up to the next virtual-timer deadline.
        for quantum, interleave in [(0, "turn"),
                                    *((q, i) for q in args.quanta for i in args.interleave)]:
            spec = tmp / f"convergence-{quantum}-{interleave}.toml"
            # The spec ends with its [qemu] table, which these join.
            spec.write_text(SPEC.read_text() + f'quantum = {quantum}\n'
                            + (f'interleave = "{interleave}"\n' if quantum else ""))
            began = time.monotonic()
            (result,) = run_experiment(spec, rerun=True)
            if result.failure:
                raise SystemExit(f"quantum {quantum}, {interleave}: {result.failure}")
            setting = {"quantum": quantum, "interleave": interleave,
                       "wall_seconds": round(time.monotonic() - began, 1),
                       **measure(result.directory)}
            results["settings"].append(setting)
            print(json.dumps(setting), flush=True)
    RESULTS.mkdir(exist_ok=True)
    suffix = f"-{args.suffix}" if args.suffix else ""
    outputs.write_text(RESULTS / f"quantum_convergence{suffix}.json",
                       json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
