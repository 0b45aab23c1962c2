"""Counting misses inside gem5 (hotline's miss profile) against the packet
traces it replaces, on the same region from the same checkpoint: gem5's
host seconds, its instructions a second, the bytes it writes, and the
host's seconds reading them into the raw misses frame.

    GEM5=/path/to/gem5.opt .venv/bin/python bench/gem5_miss_profile.py RUN KERNEL_DIR \
        [--repeats N] [--suffix NAME]

RUN is the directory of a finished gem5 run with classic caches (for
example from configs/experiments/crosscheck-gem5.toml), KERNEL_DIR its
kernel's build directory (in hotline's cache); its parameters
(gem5-params.json) and its checkpoint are used as they are, once with the
miss profile and once with it taken out (the traces of a gem5 without the
extension), alternated, each in a directory of its own under
bench/results/gem5_miss_profile/.  Writes bench/results/gem5_miss_profile.json
(gem5_miss_profile-NAME.json with --suffix).
"""

import argparse
import json
import platform
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from hotline import outputs

RESULTS = Path(__file__).parent / "results"
WORK = RESULTS / "gem5_miss_profile"


def gem5_run(kernel_dir: Path, params: dict, way: str, attempt: int) -> dict:
    """gem5 from the run's checkpoint with these parameters; its figures."""
    from hotline.simulate.gem5 import lsq_trace, params as gem5_params, simulator as gem5
    directory = WORK / f"{way}-{attempt}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / gem5.PARAMS_FILE).write_text(json.dumps(
        {k: v for k, v in params.items() if k != "miss_profile_lines"}, indent=2) + "\n")
    # O3 runs carry the load/store queue's trace: read through its pipe, as
    # a run reads it (simulator.run).  Off, gem5 writes it into its log:
    # 7.6 GB a round on O3 cores, as in the rounds recorded on 2026-11-28.
    lsq_on = bool(params.get("lsq_debug_flags"))
    started = time.monotonic()
    reader = lsq_trace.PipeReader(directory / gem5.OUTDIR / gem5_params.LSQ_TRACE) \
        if lsq_on else None
    try:
        with open(directory / gem5.LOG, "w") as log:
            done = subprocess.run(gem5.command(gem5.gem5_binary(), lsq_trace_on=lsq_on),
                                  cwd=directory, stdout=log, stderr=subprocess.STDOUT)
    finally:
        if reader is not None:
            reader.finish()
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"gem5_miss_profile: gem5 failed ({way}); see {directory / gem5.LOG}")
    out = directory / gem5.OUTDIR
    regions = gem5.read_regions(out)
    written: dict[str, int] = {}     # bytes under each of gem5's output folders
    for path in out.rglob("*"):
        if path.is_file():
            top = path.relative_to(out).parts[0]
            written[top] = written.get(top, 0) + path.stat().st_size
    instructions = sum(gem5.stats.core_summary(gem5.stats.read_stats(
        out / "stats.txt", "bench", len(regions)))["committed_insts"].fillna(0))
    figures = {"gem5_seconds": seconds, "instructions": int(instructions),
               "mips": instructions / seconds / 1e6,
               "bytes": {"misses": written.get("misses", 0), "traces": written.get("traces", 0)}}
    started = time.monotonic()
    figures["misses"] = read_misses(kernel_dir, directory, params, regions)
    figures["read_seconds"] = time.monotonic() - started
    return figures


def read_misses(kernel_dir: Path, directory: Path, params: dict, regions) -> int:
    """The host's reading of either way's outputs into the raw frame, as
    collect() does it; the misses counted."""
    from hotline.simulate.gem5 import checkpoints, miss_profile, physical_map, trace_misses
    checkpoint = checkpoints.Checkpoint("", Path(params["checkpoint_dir"]).parent)
    physical = physical_map.load(kernel_dir, checkpoints.vmemmap(checkpoint))
    clock_hz = float(params["machine"]["clock"].removesuffix("GHz")) * 1e9
    out = directory / "gem5"
    if params["miss_profile"]:
        files = [out / params["miss_profile"]["path"].format(region=r)
                 for r, (_, end) in enumerate(regions) if end is not None]
        raw, _, _ = miss_profile.aggregate(files, physical, clock_hz)
    else:
        t = params["traces"]
        cpus = params["machine"]["cpus"]
        monitors = trace_misses.monitors(out / t["directory"], cpus, t["l1d_monitor"],
                                         t["l2_monitor"])
        core = {cpu: out / t["directory"] / f"{t['core_monitor'].format(cpu=cpu)}.req.trc.gz"
                for cpu in range(cpus)} if t["core_monitor"] else None
        raw, _, _ = trace_misses.aggregate(
            monitors, regions, physical, clock_hz, core_traces=core,
            line_bytes=params["caches"]["line_bytes"],
            l1d_lines=params["miss_profile_lines"])
    return int(raw["count"].sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a finished gem5 run's directory")
    parser.add_argument("kernel_dir", type=Path, help="its kernel's build directory")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--suffix", default="",
                        help="record as gem5_miss_profile-SUFFIX.json (another run's)")
    args = parser.parse_args()
    from hotline.simulate.gem5 import simulator as gem5
    params = json.loads((args.run / gem5.PARAMS_FILE).read_text())
    if not params.get("miss_profile"):
        sys.exit(f"gem5_miss_profile: {args.run} has no miss profile in its parameters")
    # The replay of the traces needs the L1D's lines, which the miss
    # profile's parameters carry.
    lines = params["miss_profile"]["l1d_lines"]
    ways = {"miss profile": {**params, "miss_profile_lines": lines},
            "traces": {**params, "miss_profile": None, "miss_profile_lines": lines}}
    rounds = []
    for attempt in range(args.repeats):
        rounds.append({way: gem5_run(args.kernel_dir, p, way.replace(" ", "-"), attempt)
                       for way, p in ways.items()})
        print(json.dumps(rounds[-1], indent=1), flush=True)
    record = {"run": str(args.run), "rounds": rounds, "host": platform.node(),
              "date": datetime.now(timezone.utc).isoformat()}
    RESULTS.mkdir(exist_ok=True)
    name = f"gem5_miss_profile-{args.suffix}.json" if args.suffix else "gem5_miss_profile.json"
    outputs.write_text(RESULTS / name, json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
