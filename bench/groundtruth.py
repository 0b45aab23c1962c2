"""Ground truth: what this machine's own x86 cores do with the patterns the
models' verdicts rest on (a byte-wide `lock andb` then a load of its word,
a locked instruction after stores that hit or miss, two cores on one line),
timed natively by bench/groundtruth.c.

    .venv/bin/python bench/groundtruth.py [--iterations N] [--rounds R] [PATTERN ...]
    .venv/bin/python bench/groundtruth.py --markdown [RESULT.json]

Compiles the program into hotline's build cache (never into the
repository), runs it once (every pattern, R rounds alternated), and writes
bench/results/groundtruth-host.json: the host's CPU model, per pattern each
round's TSC ticks per iteration raw and less its baseline (the empty loop,
or the empty timed body), the median with its 95% interval and the range;
and the differences the claims need (C9: `lock andb`+load over `lock
andq`+load, and the positive control `movb`+load over `movq`+load), each
taken round by round.  Where `perf stat` can count the core's events it
also records ld_blocks.store_forward and machine clears for the forwarding
patterns; otherwise it says why not.  bench/README.md ("Ground truth on the
host") has the recorded tables, as --markdown prints them from the JSON.
"""

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from hotline import outputs, paths
from hotline.analysis.ground_truth import net, paired_differences
from hotline.experiment.execution import hotline_revision
from hotline.intervals import CONFIDENCE

SOURCE = Path(__file__).parent / "groundtruth.c"
RESULTS = Path(__file__).parent / "results"
CFLAGS = ["-O2", "-Wall", "-Wextra", "-pthread"]
MIN_ROUNDS = 10
PERF_EVENTS = ["ld_blocks.store_forward", "machine_clears.count"]
PERF_PATTERNS = ["lock_andb_load", "lock_andq_load", "movb_load", "movq_load"]
# (name, minuend, subtrahend, what it bears on): per round, the minuend's
# net ticks less the subtrahend's.
DIFFERENCES = [
    ("lock_andb_load - lock_andq_load", "lock_andb_load", "lock_andq_load",
     "C9: the byte lock's extra cost when its word is read next"),
    ("movb_load - movq_load", "movb_load", "movq_load",
     "C9's positive control: a store-forwarding failure"),
    ("lock_btsq_after_hit - lock_btsq", "lock_btsq_after_hit", "lock_btsq",
     "C2: draining one store that hits"),
    ("lock_btsq_after_4hits - lock_btsq", "lock_btsq_after_4hits", "lock_btsq",
     "C2: draining four stores that hit"),
    ("lock_btsq_after_miss - lock_btsq_each", "lock_btsq_after_miss", "lock_btsq_each",
     "C2: draining a store that misses"),
    ("lock_incq_after_miss - lock_incq_each", "lock_incq_after_miss", "lock_incq_each",
     "C2: draining a store that misses"),
    ("pingpong - separate_lines", "pingpong", "separate_lines",
     "C3/C4/C6: one word moving between two cores"),
    ("false_sharing - separate_lines", "false_sharing", "separate_lines",
     "C3/C4/C6: one line moving between two cores"),
]


# ---- The arithmetic: plain lists in, numbers out (tests/test_groundtruth.py) ----

def median_interval(values: list[float], confidence: float = CONFIDENCE
                    ) -> tuple[float, float, float]:
    """The distribution-free interval for the median: the k-th smallest and
    k-th largest values, k as large as keeps the chance that the median
    lies outside at most 1 - confidence (the number of values below the
    median is Binomial(n, 1/2)).  Returns (low, high, coverage); with too
    few values for the confidence asked, the range and its coverage."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no values")

    def below(k):    # P(Binomial(n, 1/2) <= k - 1): the median is below x_(k)
        return sum(math.comb(n, i) for i in range(k)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * below(k + 1) >= confidence:
        k += 1
    return xs[k - 1], xs[n - k], 1 - 2 * below(k)


def summary(values: list[float]) -> dict:
    """Median, its interval (with the coverage it has), and the range."""
    low, high, coverage = median_interval(values)
    return {"median": round(statistics.median(values), 3),
            "interval": [round(low, 3), round(high, 3)], "coverage": round(coverage, 4),
            "range": [round(min(values), 3), round(max(values), 3)]}


# ---- The program ----

def gcc_version() -> str:
    return subprocess.run(["gcc", "--version"], capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]


def compile_command(output: Path, extra: list[str] = ()) -> list[str]:
    return ["gcc", *CFLAGS, *extra, "-o", str(output), str(SOURCE)]


def build(directory: Path | None = None) -> Path:
    """The program, built once per source, flags and compiler, under the
    build cache (or in `directory`)."""
    if shutil.which("gcc") is None:
        raise SystemExit("groundtruth: needs gcc (./hotline test installs it)")
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(CFLAGS).encode()
                         + gcc_version().encode()).hexdigest()[:16]
    directory = directory or paths.cache_dir() / "groundtruth" / key
    binary = directory / "groundtruth"
    if binary.is_file():
        return binary
    outputs.make_dir(directory)
    partial = directory / "groundtruth.partial"
    done = subprocess.run(compile_command(partial), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"groundtruth: {SOURCE} does not compile:\n{done.stderr}")
    if done.stderr:
        print(done.stderr, file=sys.stderr, end="")
    partial.rename(binary)
    return binary


def read_lines(text: str) -> list[dict]:
    """The program's output, one pattern a line, checked for the keys the
    statistics need."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        record = json.loads(line)
        keys = ({"pattern", "group", "timing", "skipped"} if "skipped" in record else
                {"pattern", "group", "timing", "baseline", "iterations", "rounds", "cycles",
                 "baseline_cycles"})
        missing = keys - record.keys()
        if missing:
            raise ValueError(f"line {number}: no {', '.join(sorted(missing))}: {line}")
        if "skipped" not in record and not (
                len(record["cycles"]) == len(record["baseline_cycles"]) == record["rounds"]):
            raise ValueError(f"line {number}: {record['rounds']} rounds but "
                             f"{len(record['cycles'])} values and "
                             f"{len(record['baseline_cycles'])} baseline values")
        records.append(record)
    return records


def analyse(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """Per pattern, its rounds less their baselines and their summary; and
    the DIFFERENCES between patterns that were both measured."""
    rows, nets = [], {}
    for r in records:
        row = dict(r)
        if "skipped" not in r:
            nets[r["pattern"]] = net(r["cycles"], r["baseline_cycles"])
            row.update(net_cycles=[round(v, 3) for v in nets[r["pattern"]]],
                       raw=summary(r["cycles"]), baseline_summary=summary(r["baseline_cycles"]),
                       **summary(nets[r["pattern"]]))
        rows.append(row)
    differences = []
    for name, a, b, bears_on in DIFFERENCES:
        if a in nets and b in nets:
            d = paired_differences(nets[a], nets[b])
            s = summary(d)
            differences.append({"difference": name, "bears_on": bears_on,
                                "rounds": [round(v, 3) for v in d], **s,
                                "excludes_zero": s["interval"][0] > 0 or s["interval"][1] < 0})
    return rows, differences


# ---- The host ----

def host_cpu() -> dict:
    """The first processor's identity in /proc/cpuinfo, and whether it runs
    under a hypervisor."""
    fields = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    flags = fields.get("flags", "").split()
    return {"model_name": fields.get("model name"), "vendor": fields.get("vendor_id"),
            "family": fields.get("cpu family"), "model": fields.get("model"),
            "stepping": fields.get("stepping"), "mhz": fields.get("cpu MHz"),
            "hypervisor": "hypervisor" in flags,
            "constant_tsc": "constant_tsc" in flags and "nonstop_tsc" in flags}


def perf_counters(binary: Path, iterations: int) -> dict:
    """PERF_EVENTS per iteration of each forwarding pattern where `perf stat`
    counts them; otherwise why they were skipped."""
    if shutil.which("perf") is None:
        return {"available": False, "reason": "perf is not installed"}
    if not Path("/sys/bus/event_source/devices/cpu").exists():
        return {"available": False,
                "reason": "no `cpu` event source in /sys/bus/event_source/devices: this "
                          "host exposes no hardware performance counters (a VM without a "
                          "virtual PMU), so `perf stat -e` has nothing to count"}
    counts = {}
    for pattern in PERF_PATTERNS:
        done = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(PERF_EVENTS), "--",
                               str(binary), "--iterations", str(iterations), "--rounds", "1",
                               pattern], capture_output=True, text=True)
        values = {}
        for line in done.stderr.splitlines():
            parts = line.split(",")
            if len(parts) > 2 and parts[2] in PERF_EVENTS:
                values[parts[2]] = parts[0]
        if done.returncode or set(values) != set(PERF_EVENTS) or any(
                not v.isdigit() for v in values.values()):
            reason = done.stderr.strip().splitlines()[:3] or [f"exit {done.returncode}"]
            return {"available": False, "reason": "`perf stat -e "
                    f"{','.join(PERF_EVENTS)}` failed: {' / '.join(reason)}"}
        # The run times the pattern and its baseline with a warm-up each:
        # counts are over the whole program, divided by the timed iterations.
        counts[pattern] = {e: round(int(v) / iterations, 4) for e, v in values.items()}
    return {"available": True, "events": PERF_EVENTS, "per_iteration": counts,
            "note": "whole program, one round, divided by the timed iterations"}


# ---- Report ----

def print_table(rows: list[dict], differences: list[dict]) -> None:
    print(f"{'pattern':<24}{'net median':>11}{'95% interval':>18}{'range':>20}"
          f"{'raw':>9}{'baseline':>10}")
    for row in rows:
        if "skipped" in row:
            print(f"{row['pattern']:<24} skipped: {row['skipped']}")
            continue
        interval, span = (f"{row['interval'][0]}..{row['interval'][1]}",
                          f"{row['range'][0]}..{row['range'][1]}")
        print(f"{row['pattern']:<24}{row['median']:>11}{interval:>18}{span:>20}"
              f"{row['raw']['median']:>9}{row['baseline_summary']['median']:>10}")
    print()
    for d in differences:
        interval = f"{d['interval'][0]}..{d['interval'][1]}"
        print(f"{d['difference']:<40}{d['median']:>9}{interval:>18}"
              f"  {'excludes 0' if d['excludes_zero'] else 'includes 0'}")


def markdown(result: dict) -> str:
    """The recorded tables as bench/README.md has them: each pattern's net
    ticks, then the differences."""
    one = lambda v: f"{v:.1f}"  # noqa: E731
    span = lambda pair: f"{one(pair[0])} to {one(pair[1])}"  # noqa: E731
    lines = ["| pattern | median | 95% interval | range |", "|---|---|---|---|"]
    lines += [f"| {row['what']} | {one(row['median'])} | {span(row['interval'])} | "
              f"{span(row['range'])} |" for row in result["patterns"] if "skipped" not in row]
    lines += ["", "| difference, round by round | bears on | median | 95% interval |",
              "|---|---|---|---|"]
    lines += [f"| `{d['difference']}` | {d['bears_on']} | {one(d['median'])} | "
              f"{span(d['interval'])} |" for d in result["differences"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000, metavar="N",
                        help="iterations of each pattern's loop (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=15, metavar="R",
                        help=f"rounds per pattern, at least {MIN_ROUNDS} (default: %(default)s)")
    parser.add_argument("patterns", nargs="*", metavar="PATTERN",
                        help="only these patterns (the program's --list names them)")
    parser.add_argument("--output", type=Path, default=RESULTS / "groundtruth-host.json",
                        help="where the results go (default: %(default)s)")
    parser.add_argument("--markdown", nargs="?", const=RESULTS / "groundtruth-host.json",
                        type=Path, metavar="RESULT",
                        help="print a recorded result's tables as markdown, run nothing "
                             "(default: %(const)s)")
    args = parser.parse_args()
    if args.markdown is not None:
        try:
            print(markdown(json.loads(args.markdown.read_text())))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise SystemExit(f"groundtruth: {args.markdown} is not a recorded result "
                             f"({error!r}): record one with this script, without --markdown")
        return
    if args.rounds < MIN_ROUNDS:
        parser.error(f"--rounds {args.rounds}: at least {MIN_ROUNDS}, for a median with "
                     "an interval")
    if args.iterations < 1:
        parser.error(f"--iterations {args.iterations}: at least 1")

    revision = hotline_revision()
    binary = build()
    load_before = os.getloadavg()
    began = time.monotonic()
    done = subprocess.run([str(binary), "--iterations", str(args.iterations),
                           "--rounds", str(args.rounds), *args.patterns],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"groundtruth: {binary} exited with {done.returncode}: "
                         f"{done.stderr.strip()}")
    seconds = round(time.monotonic() - began, 1)
    rows, differences = analyse(read_lines(done.stdout))
    perf = perf_counters(binary, args.iterations)
    result = {"benchmark": "groundtruth", "hotline": revision, "host": platform.node(),
              "date": time.strftime("%Y-%m-%d"), "cpu": host_cpu(), "host_cpus": os.cpu_count(),
              "load_average_before": [round(v, 2) for v in load_before],
              "load_average_after": [round(v, 2) for v in os.getloadavg()],
              "seconds": seconds, "compiler": gcc_version(), "cflags": CFLAGS,
              "source_sha256": hashlib.sha256(SOURCE.read_bytes()).hexdigest(),
              "iterations": args.iterations, "rounds": args.rounds,
              "unit": "TSC ticks per iteration (the TSC's constant rate, not core cycles)",
              "interval": f"order statistics of the rounds: the distribution-free interval "
                          f"for the median at {CONFIDENCE:.0%} or more (its coverage given)",
              "perf": perf, "patterns": rows, "differences": differences}
    outputs.make_dir(args.output.parent)
    outputs.write_text(args.output, json.dumps(result, indent=2) + "\n")
    cpu = result["cpu"]
    print(f"{cpu['model_name']} (family {cpu['family']}, model {cpu['model']}"
          f"{', under a hypervisor' if cpu['hypervisor'] else ''}), load average "
          f"{load_before[0]:.2f} before; TSC ticks per iteration, less the baseline")
    print_table(rows, differences)
    print(f"perf: {'counted' if perf['available'] else perf['reason']}")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
