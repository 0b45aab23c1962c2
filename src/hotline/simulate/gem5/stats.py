"""gem5's stats.txt, read into hotline's tables.

The text format (gem5 v24.0, src/base/stats/text.cc): each dump is framed by
"---------- Begin Simulation Statistics ----------" and
"---------- End Simulation Statistics   ----------"; inside, one statistic per
line: its dotted name (vector and distribution elements as NAME::SUBNAME),
the value, for vector elements the percentage and cumulative percentage, and
"# description (Unit)".  A value is a decimal number, "nan" or "inf".
Lines of other shapes (a one-line vector's " |" cells) are skipped.

hotline's config dumps once per region of interest (at work_end); gem5 adds
its own dump when it exits, so dump i < number of regions is region i and
any later dump is the rest of the run.

Tables:
- long (gem5_stats.parquet): run, dump, region, name, value: everything.
- per core (gem5_core_stats.parquet): one row per (run, region, cpu), the
  figures hotline compares across backends.
"""

import math
import re
from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError

BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"
_LINE = re.compile(r"^(\S+)\s+(-?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf))(?:\s|$)")

LONG = {"run": "string", "dump": "int32", "region": "int32", "name": "string",
        "value": "float64"}
CORE = {"run": "string", "region": "int32", "cpu": "int16",
        "l1d_accesses": "float64", "l1d_misses": "float64", "l1d_miss_latency_ticks": "float64",
        "l1i_accesses": "float64", "l1i_misses": "float64",
        "l2_accesses": "float64", "l2_misses": "float64", "l2_miss_latency_ticks": "float64",
        "lsq_forwarded_loads": "float64", "lsq_rescheduled_loads": "float64",
        "committed_insts": "float64", "cycles": "float64",
        "sim_seconds": "float64", "host_seconds": "float64", "host_inst_rate": "float64"}

# Where each figure lives under hotline's config (configs/gem5/): the cache
# hierarchy's per-core lists l1icaches, l1dcaches, l2caches; the measuring
# run's SimpleProcessor's cores "cores" (O3 LSQ stats in lsq0, gem5's
# src/cpu/o3/lsq_unit.cc), as gem5 v24.0.0.1 printed them (docs/gem5-notes.md).  CORE_STATS maps a column to a pattern with one
# group, the core number (empty with one core: gem5 numbers the elements
# of a SimObject vector only when it has more than one, zero-padded).
CORE_STATS = {
    "l1d_accesses": r"board\.cache_hierarchy\.l1dcaches(\d*)\.demandAccesses::total",
    "l1d_misses": r"board\.cache_hierarchy\.l1dcaches(\d*)\.demandMisses::total",
    "l1d_miss_latency_ticks": r"board\.cache_hierarchy\.l1dcaches(\d*)\.demandMissLatency::total",
    "l1i_accesses": r"board\.cache_hierarchy\.l1icaches(\d*)\.demandAccesses::total",
    "l1i_misses": r"board\.cache_hierarchy\.l1icaches(\d*)\.demandMisses::total",
    "l2_accesses": r"board\.cache_hierarchy\.l2caches(\d*)\.demandAccesses::total",
    "l2_misses": r"board\.cache_hierarchy\.l2caches(\d*)\.demandMisses::total",
    "l2_miss_latency_ticks": r"board\.cache_hierarchy\.l2caches(\d*)\.demandMissLatency::total",
    "lsq_forwarded_loads": r"board\.processor\.cores(\d*)\.core\.lsq0\.forwLoads",
    "lsq_rescheduled_loads": r"board\.processor\.cores(\d*)\.core\.lsq0\.rescheduledLoads",
    "committed_insts": r"board\.processor\.cores(\d*)\.core\.commitStats0\.numInsts",
    # The cycles the core ticked: an O3 core's leave out those it slept.
    "cycles": r"board\.processor\.cores(\d*)\.core\.numCycles",
}
GLOBAL_STATS = {"sim_seconds": "simSeconds", "host_seconds": "hostSeconds",
                "host_inst_rate": "hostInstRate"}


def parse_dumps(text: str) -> list[dict[str, float]]:
    """Each dump as {name: value}, in file order."""
    dumps, current = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == BEGIN:
            current = {}
        elif stripped == END:
            if current is not None:
                dumps.append(current)
            current = None
        elif current is not None and (m := _LINE.match(stripped)):
            value = m.group(2)
            current[m.group(1)] = math.nan if value in ("nan", "-nan") else float(value)
    return dumps


def read_stats(path: Path, run_id: str, regions: int) -> pd.DataFrame:
    """The long table of a stats.txt; region is -1 for dumps after the regions."""
    if not path.is_file():
        raise HotlineError(f"{path}: gem5 wrote no stats file")
    dumps = parse_dumps(path.read_text(errors="replace"))
    if len(dumps) < regions:
        raise HotlineError(f"{path}: {len(dumps)} stats dump(s) for {regions} region(s) of "
                           "interest: gem5 stopped inside a region?")
    rows = [(run_id, i, i if i < regions else -1, name, value)
            for i, dump in enumerate(dumps) for name, value in dump.items()]
    return pd.DataFrame(rows, columns=list(LONG)).astype(LONG)


def core_summary(long: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, region, cpu) of the regions' dumps.  A figure the
    dump lacks (no O3 CPU, Ruby caches) is NaN."""
    rows = []
    compiled = {column: re.compile(pattern + "$") for column, pattern in CORE_STATS.items()}
    for (run, region), dump in long[long.region >= 0].groupby(["run", "region"], sort=True):
        values = dict(zip(dump.name, dump.value))
        cores: dict[int, dict] = {}
        for name, value in values.items():
            for column, pattern in compiled.items():
                if m := pattern.match(name):
                    cores.setdefault(int(m.group(1) or 0), {})[column] = value
        for cpu in sorted(cores):
            row = {"run": run, "region": region, "cpu": cpu, **cores[cpu]}
            for column, name in GLOBAL_STATS.items():
                row[column] = values.get(name, math.nan)
            rows.append(row)
    frame = pd.DataFrame(rows, columns=list(CORE))
    return frame.astype(CORE)
