"""The calibration table: per pattern of bench/groundtruth.c, what the host's
own cores take (bench/results/groundtruth-host.json, from
bench/groundtruth.py) beside what the QEMU cache model and gem5's O3 cores
make of the same source run in the guest (the workload `groundtruth`:
configs/experiments/groundtruth-qemu.toml and groundtruth-gem5.toml).

    .venv/bin/python bench/groundtruth_calibration.py [--qemu DIR] [--gem5 DIR]

Writes bench/results/groundtruth-calibration.json and prints the tables
that bench/README.md records; docs/groundtruth.md says which verdict each
row bears on.  A side whose results directory is missing is left empty,
with the command that fills it.

What each side's figure is, per iteration of the pattern:

- host: TSC ticks less the baseline's, median of the rounds with its
  interval (bench/groundtruth.py).
- QEMU: the model's cost as the notebooks count it, instructions (one
  cycle each) plus the stall cycles of the L1 misses.  Its instructions are
  the guest's own figure: deterministic mode runs QEMU with `-icount
  shift=0`, so the guest's TSC advances one tick per instruction, and the
  program's ticks less its baseline's are the instructions the pattern adds.
  An interrupt only adds instructions, so a pattern's fewest in any round
  less its baseline's fewest.  The stall cycles, the L1D misses and the
  reads after partial writes are the model's counts of the instructions in
  the pattern's own function (its loop, timed body or thread loop), divided
  by the times that function ran its step in the regions of interest (the
  timed iterations and the warm-up before them).  The model charges no
  cycle for a locked instruction, a store buffer drain or a read after a
  partial write: it counts the last.
- gem5: the guest's own figure again, since gem5's x86 TSC is the core's
  cycle count: cycles less the baseline's, median of the rounds; and, from
  the cycle profile (cycles.parquet), the cycles charged to the pattern's
  own function per step, as a check that needs no guest clock.
"""

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

import pandas as pd

from hotline import outputs, paths
from hotline.analysis.results import Results
from hotline.disk_image import guest_program_symbols

sys.path.insert(0, str(Path(__file__).parent))
import groundtruth  # noqa: E402  (bench/groundtruth.py: the statistics, one home)

RESULTS = Path(__file__).parent / "results"
HOST = RESULTS / "groundtruth-host.json"
OUTPUT = RESULTS / "groundtruth-calibration.json"
GUEST_SOURCE = paths.DISK_IMAGES / "workloads" / "groundtruth" / "groundtruth.c"
# The sides, each an experiment's results: (key, spec, the figure the
# differences compare, its column heading in the tables).
SIDES = [
    ("qemu", "configs/experiments/groundtruth-qemu.toml", "modelled_cycles",
     "QEMU {system}: modelled cycles, x host (RAPW, L1D misses)"),
    ("qemu_parallel", "configs/experiments/groundtruth-qemu-parallel.toml", "stall_cycles",
     "QEMU {system}, parallel: stall cycles (coherence misses)"),
    ("gem5", "configs/experiments/groundtruth-gem5.toml", "cycles",
     "gem5 O3 {system}: cycles (x host)"),
]
WARMUP_DIVISOR = 10     # groundtruth.c: an untimed run of N/10 + 1 iterations first
L1 = ("L1D", "L1I")
# The rows of the patterns table in groundtruth.c: LOOPED(name, group, loop,
# ...), EACH_(name, body, ...), SHARED(name, thread_loop, ...).
PATTERN_ROW = re.compile(r'\b(?:LOOPED|EACH_|SHARED)\("(\w+)",\s*(?:"\w+",\s*)?(\w+)')


# ---- What ran where: from the C source and the guest's own report ----

def pattern_functions(source: str) -> dict[str, str]:
    """{pattern: the function that runs its step} from the program's
    patterns table."""
    return dict(PATTERN_ROW.findall(source))


def steps_per_run(record: dict) -> int:
    """How many steps the pattern's function ran inside its regions, over
    all rounds: per round the warm-up (N/10 + 1) and the N timed for a loop
    and each thread of a pair, one warm-up call and N for a timed body.  N
    is the record's own iterations (the handoff's are already a hundredth)."""
    n = record["iterations"]
    if record["timing"] == "each":
        per_round = n + 1
    elif record["timing"] == "threads":
        per_round = 2 * (n // WARMUP_DIVISOR + 1 + n)
    else:
        per_round = n // WARMUP_DIVISOR + 1 + n
    return record["rounds"] * per_round


def fewest_net(record: dict) -> float:
    """The fewest ticks of any round less the baseline's fewest."""
    return min(record["cycles"]) - min(record["baseline_cycles"])


def in_function(pcs, symbols: dict, function: str):
    start, size = symbols[function]
    return (pcs >= start) & (pcs < start + size)


# ---- The two models ----

def qemu_side(results: Results, symbols: dict, functions: dict) -> dict:
    """Per system: per pattern the model's instructions, stall cycles,
    modelled cycles, L1D misses (of them coherence) and reads after partial
    writes, per step."""
    misses, rapw = results.table("misses"), results.table("rapw")
    sides = {}
    for _, run in results.ok.iterrows():
        system, rows = run["system"], {}
        mine = misses[(misses["run"] == run["run_id"]) & misses["level"].isin(L1)]
        replays = rapw[rapw["run"] == run["run_id"]]
        for record in run["summary"]["patterns"]:
            if "skipped" in record:
                continue
            function = functions[record["pattern"]]
            steps = steps_per_run(record)
            here = mine[in_function(mine["pc"], symbols, function)]
            l1d = here[here["level"] == "L1D"]
            # The guest's TSC counts instructions in deterministic mode only.
            instructions = fewest_net(record) if run["mode"] == "deterministic" else None
            stall = here["cycles"].sum() / steps
            rows[record["pattern"]] = {
                "function": function, "steps": steps,
                "instructions": None if instructions is None else round(instructions, 3),
                "stall_cycles": round(stall, 3),
                "modelled_cycles": None if instructions is None else
                round(instructions + stall, 3),
                "l1d_misses": round(l1d["count"].sum() / steps, 4),
                "coherence_misses": round(l1d.loc[l1d["cause"] == "coherence",
                                                  "count"].sum() / steps, 4),
                "rapw": round(replays.loc[in_function(replays["load_pc"], symbols, function),
                                          "count"].sum() / steps, 4)}
        quantum = run["quantum"]
        sides[system] = {"run": run["run_id"], "mode": run["mode"],
                         "quantum": None if pd.isna(quantum) else int(quantum), "patterns": rows}
    return sides


def gem5_side(results: Results, symbols: dict, functions: dict) -> dict:
    """Per system: per pattern the guest's cycles less its baseline (median
    and interval) and, with a cycle profile, the cycles charged to the
    pattern's function per step."""
    profile = results.table("cycles") if results.has("cycles") else None
    sides = {}
    for _, run in results.ok.iterrows():
        records = [r for r in run["summary"]["patterns"] if "skipped" not in r]
        analysed, _ = groundtruth.analyse(records)
        rows = {}
        for record, row in zip(records, analysed):
            function = functions[record["pattern"]]
            entry = {"function": function, "cycles": row["median"],
                     "interval": row["interval"], "coverage": row["coverage"],
                     "rounds": row["net_cycles"]}
            if profile is not None:
                mine = profile[(profile["run"] == run["run_id"])
                               & in_function(profile["pc"], symbols, function)]
                entry["profile_cycles"] = round(mine["cycles"].sum()
                                                / steps_per_run(record), 3)
            rows[record["pattern"]] = entry
        sides[run["system"]] = {"run": run["run_id"], "patterns": rows,
                                "cycle_profile": profile is not None}
    return sides


# ---- The table ----

def ratio(model: float | None, host: float) -> float | None:
    if model is None or abs(host) < 0.5:    # a host figure within noise of 0 has no ratio
        return None
    return round(model / host, 3)


def table(host: dict, sides: dict) -> list[dict]:
    """Per pattern the host's figure and each side's, per system, with the
    ratio of the side's figure to the host's."""
    rows = []
    for h in host["patterns"]:
        if "skipped" in h:
            continue
        name = h["pattern"]
        row = {"pattern": name, "group": h["group"], "what": h["what"],
               "host": {"ticks": h["median"], "interval": h["interval"]}}
        for key, _, figure, _ in SIDES:
            row[key] = {}
            for system, side in sides[key].items():
                if name in side["patterns"]:
                    entry = dict(side["patterns"][name])
                    entry["ratio"] = ratio(entry[figure], h["median"])
                    row[key][system] = entry
        rows.append(row)
    return rows


def differences(host: dict, sides: dict) -> list[dict]:
    """groundtruth.DIFFERENCES on every side: the host's round by round with
    its interval, each side's as the difference of its figures (and, for
    the model, of its counts)."""
    by_name = {d["difference"]: d for d in host["differences"]}
    rows = []
    for name, a, b, bears_on in groundtruth.DIFFERENCES:
        row = {"difference": name, "bears_on": bears_on, "host": by_name.get(name)}
        for key, _, figure, _ in SIDES:
            row[key] = {}
            for system, side in sides[key].items():
                p = side["patterns"]
                if a not in p or b not in p:
                    continue
                entry = {}
                for field in (figure, "rapw", "l1d_misses", "coherence_misses"):
                    if field in p[a] and p[a][field] is not None and p[b][field] is not None:
                        entry[field] = round(p[a][field] - p[b][field], 4)
                row[key][system] = entry
        rows.append(row)
    return rows


def _figure(value: float | None) -> str:
    if value is None:
        return ""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _cell(key: str, entry: dict | None) -> str:
    """One side's figure for one system, as the tables show it."""
    if entry is None:
        return ""
    if key == "qemu":
        times = f" x{entry['ratio']}" if entry.get("ratio") else ""
        return (f"{_figure(entry.get('modelled_cycles'))}{times} ({entry.get('rapw', 0):g}, "
                f"{entry.get('l1d_misses', 0):g})")
    if key == "qemu_parallel":
        return f"{_figure(entry.get('stall_cycles'))} ({entry.get('coherence_misses', 0):g})"
    return _figure(entry.get("cycles")) + (f" (x{entry['ratio']})" if entry.get("ratio") else "")


def markdown(result: dict) -> str:
    """The two tables bench/README.md records: per pattern, and the
    differences the verdicts rest on."""
    columns = [(key, system, heading.format(system=system))
               for key, _, _, heading in SIDES for system in result["sides"][key]]
    missing = [key for key, *_ in SIDES if not result["sides"][key]]
    heads = [c[2] for c in columns] + [heading.format(system="(no run)")
                                       for key, _, _, heading in SIDES if key in missing]

    def rows_of(items, first_cells, entry_of):
        lines = []
        for item in items:
            cells = first_cells(item)
            cells += [_cell(key, entry_of(item, key, system)) for key, system, _ in columns]
            cells += ["not run" for _ in missing]
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    def interval(h):
        return "" if h is None else (f"{h['median']:.1f} ({h['interval'][0]:.1f} to "
                                     f"{h['interval'][1]:.1f})")

    head = ["pattern", "host ticks (95% interval)", *heads]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += rows_of(result["table"],
                     lambda r: [f"`{r['pattern']}`",
                                interval({"median": r["host"]["ticks"], **r["host"]})],
                     lambda r, key, system: r[key].get(system))
    head = ["difference", "bears on", "host ticks (95% interval)", *heads]
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += rows_of(result["differences"],
                     lambda d: [f"`{d['difference']}`", d["bears_on"].split(":")[0],
                                interval(d["host"])],
                     lambda d, key, system: d[key].get(system))
    return "\n".join(lines)


def load_side(directory: Path, spec: str) -> Results | None:
    if not (directory / "runs.parquet").is_file():
        print(f"groundtruth_calibration: no {directory / 'runs.parquet'}; ./hotline run "
              f"{spec} fills that side", file=sys.stderr)
        return None
    return Results(directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", type=Path, default=HOST)
    for key, spec, _, _ in SIDES:
        parser.add_argument(f"--{key.replace('_', '-')}", type=Path,
                            default=paths.results_dir() / Path(spec).stem,
                            help=f"the results of {spec} (default: %(default)s)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()

    host = json.loads(args.host.read_text())
    functions = pattern_functions(groundtruth.SOURCE.read_text())
    with tempfile.TemporaryDirectory() as scratch:
        symbols = guest_program_symbols(GUEST_SOURCE, Path(scratch))
    readers = {"qemu": qemu_side, "qemu_parallel": qemu_side, "gem5": gem5_side}
    sides, not_run = {}, {}
    for key, spec, _, _ in SIDES:
        results = load_side(getattr(args, key), spec)
        sides[key] = readers[key](results, symbols, functions) if results else {}
        if not results:
            not_run[key] = f"./hotline run {spec}" + (
                " with GEM5=/path/to/gem5.opt" if key == "gem5" else "")
    result = {
        "benchmark": "groundtruth-calibration",
        "host": {"cpu": host["cpu"], "unit": host["unit"], "rounds": host["rounds"],
                 "iterations": host["iterations"], "source_sha256": host["source_sha256"]},
        "units": {
            "qemu": "per step of the pattern's function: instructions (the guest's icount "
                    "ticks less the baseline's, fewest of the rounds) + L1 stall cycles = "
                    "modelled cycles; L1D misses and reads after partial writes counted",
            "qemu_parallel": "per step of the pattern's function: L1 stall cycles and "
                             "coherence misses (the guest's clock is the host's: no "
                             "instruction count)",
            "gem5": "core cycles per iteration (the guest's rdtsc) less the baseline's, "
                    "median of the rounds; profile_cycles: the cycle profile's cycles of "
                    "the pattern's function per step"},
        "sides": {key: {system: {k: v for k, v in side.items() if k != "patterns"}
                        for system, side in sides[key].items()} for key in sides},
        "not_run": not_run,
        "table": table(host, sides),
        "differences": differences(host, sides),
    }
    outputs.make_dir(args.output.parent)
    outputs.write_text(args.output, json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
