"""hotline's gem5 retire counts (configs/gem5/extras/retire_count.hh: one
table per core, atomic or O3, and region of a sampled run): the micro-ops
the run itself committed per instruction, summed over its cores, so that
the windows' estimate (cycle_profile.sampled) can be set against the
execution it came from.

Each table is checked against gem5's own statistic for its core and
region (the Sampler records each core's numOps, its atomic and O3 cores
together, as the region closes): the count can fall short of it by the
atomic cores' faulting micro-ops, which gem5 counts and re-executes, and
never exceed it."""

from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError
from hotline.simulate.gem5 import extension_table
from hotline.simulate.gem5.params import run_params

MAGIC = "# hotline retire count 1:"
COLUMNS = ["pc", "instructions", "micro_ops"]
CORES = run_params.RETIRE_CORES


def read(path: Path) -> pd.DataFrame:
    """One core's table of one region, refused with one line if it is not
    one."""
    return extension_table.read(path, MAGIC, "retire count", (), COLUMNS, "uint64")[1]

def counted(files: dict[tuple[int, int, str], Path],
            statistic: dict[tuple[int, int], int]) -> pd.Series:
    """Micro-ops per instruction (pc) over every (region, cpu, core)'s
    table; statistic: gem5's micro-ops of each (region, cpu)."""
    per_core, tables = {}, []
    for (region, cpu, _), path in sorted(files.items()):
        rows = read(path)
        per_core[(region, cpu)] = per_core.get((region, cpu), 0) + int(rows["micro_ops"].sum())
        tables.append(rows[["pc", "micro_ops"]])
    for key, n in sorted(per_core.items()):
        if key not in statistic:
            raise HotlineError(f"region {key[0]}, cpu {key[1]}: no micro-op statistic to "
                               "check its retire count against; run it again")
        if n > statistic[key]:
            raise HotlineError(f"region {key[0]}, cpu {key[1]}: {n} micro-ops counted, more "
                               f"than gem5's {statistic[key]}: the extension and gem5 "
                               "disagree on what a micro-op is")
    if not tables:
        return pd.Series(dtype="int64")
    return pd.concat(tables).groupby("pc")["micro_ops"].sum().astype("int64")
