"""What hotline's profiles cost gem5, timed on and off.

One gem5 run's region again from its checkpoint, with its profiles and
without them (gem5's own statistics only, as a gem5 built without the
extension runs), alternated: gem5's host seconds and its region
instructions a second, and the bytes the miss profile writes.

    GEM5=/path/to/gem5.opt .venv/bin/python bench/gem5_miss_profile.py RUN \
        [--repeats N] [--suffix NAME] [--off miss_profile cycle_profile]

RUN is the directory of a finished gem5 run with classic caches, made by
this checkout (for example from configs/experiments/crosscheck-gem5.toml);
its parameters (gem5-params.json) and its checkpoint are used as they are,
once as they are and once with the profiles --off names taken out (the miss
profile unless told; an O3 run's cycle profile too with --off
miss_profile cycle_profile), alternated, each in a directory of its own
under bench/results/gem5_miss_profile/.  Writes
bench/results/gem5_miss_profile.json (gem5_miss_profile-NAME.json with
--suffix).
"""

import argparse
import dataclasses
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
# The profiles a run's parameters may hold (run_params.MeasureParams).
PROFILES = ("miss_profile", "cycle_profile")


def gem5_run(params, way: str, attempt: int) -> dict:
    """gem5 from the run's checkpoint with these parameters; its figures."""
    from hotline.simulate.gem5 import params as gem5_params, simulator as gem5
    directory = WORK / f"{way}-{attempt}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / gem5.PARAMS_FILE).write_text(
        json.dumps(gem5_params.run_params.to_dict(params), indent=2) + "\n")
    started = time.monotonic()
    with open(directory / gem5.LOG, "w") as log:
        done = subprocess.run(gem5.command(gem5.gem5_binary()), cwd=directory, stdout=log,
                              stderr=subprocess.STDOUT)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"gem5_miss_profile: gem5 failed ({way}); see {directory / gem5.LOG}")
    out = directory / gem5.OUTDIR
    regions = gem5.read_regions(out)
    cores = gem5.stats.core_summary(gem5.stats.read_stats(out / "stats.txt", "bench",
                                                          len(regions)))
    instructions = int(cores["committed_insts"].fillna(0).sum())
    # gem5's own clock of each region (its stats are reset at the region's
    # start): one figure per region, on every core's row.
    region_seconds = float(cores.groupby("region")["host_seconds"].first().sum())
    written = sum(p.stat().st_size for p in (out / "misses").rglob("*") if p.is_file()) \
        if (out / "misses").is_dir() else 0
    return {"gem5_seconds": seconds, "region_host_seconds": region_seconds,
            "instructions": instructions, "mips": instructions / seconds / 1e6,
            "region_mips": instructions / region_seconds / 1e6 if region_seconds else None,
            "miss_profile_bytes": written}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a finished gem5 run's directory")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--suffix", default="",
                        help="record as gem5_miss_profile-SUFFIX.json (another run's)")
    parser.add_argument("--off", nargs="+", choices=PROFILES, default=["miss_profile"],
                        help="the profiles taken out of the run (default: %(default)s)")
    args = parser.parse_args()
    from hotline.simulate.gem5 import params as gem5_params, simulator as gem5
    run_params = gem5_params.run_params
    path = args.run / gem5.PARAMS_FILE
    try:
        params = run_params.from_dict(run_params.MeasureParams, json.loads(path.read_text()))
    except (OSError, ValueError, run_params.ParamsError) as e:
        sys.exit(f"gem5_miss_profile: {path}: {e}; make RUN with this checkout")
    if missing := [p for p in args.off if getattr(params, p) is None]:
        sys.exit(f"gem5_miss_profile: {args.run} has no {', '.join(missing)} in its "
                 "parameters: --off names the profiles it has")
    ways = {"profiles": params,
            "off": dataclasses.replace(params, **{p: None for p in args.off})}
    rounds = []
    for attempt in range(args.repeats):
        rounds.append({way: gem5_run(p, way.replace(" ", "-"), attempt)
                       for way, p in ways.items()})
        print(json.dumps(rounds[-1], indent=1), flush=True)
    record = {"run": str(args.run), "off": args.off, "rounds": rounds, "host": platform.node(),
              "date": datetime.now(timezone.utc).isoformat()}
    RESULTS.mkdir(exist_ok=True)
    name = f"gem5_miss_profile-{args.suffix}.json" if args.suffix else "gem5_miss_profile.json"
    outputs.write_text(RESULTS / name, json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
