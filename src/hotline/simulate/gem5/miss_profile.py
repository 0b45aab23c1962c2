"""hotline's gem5 miss profile (configs/gem5/extras/miss_profile.hh: one
table per region, counted inside gem5 from the caches' probe points) into
the raw misses frame and the coherence misses by thief that the packet
traces gave before (trace_misses.RAW, STOLEN), so that attribution goes on
as for every backend.

Each table's first line says what the region held besides the misses (the
MSHR's hits, misses without an instruction, uncacheable accesses,
invalidations it could not explain, the L1D upgrades the core's own L2
granted, which are not misses, the deferred writes the L1D sent again,
which are, misses still in flight at the region's end); its rows are misses
per (cpu, level, pc, kind, the access's virtual address, cause, thief), with
their count and the ticks from miss to fill.  The causes are docs/causes.md's.
"""

from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError
from hotline.results import schema
from hotline.simulate.gem5 import extension_table
from hotline.simulate.gem5.physical_map import PhysicalMap, data_key
from hotline.simulate.gem5.trace_misses import RAW, STOLEN

MAGIC = "# hotline miss profile 2:"
# What every version's first line begins with; a table of another version
# counts and classifies otherwise.
FAMILY = "# hotline miss profile "
COLUMNS = ["cpu", "level", "pc", "kind", "vaddr", "cause", "thief_cpu", "thief_pc", "count",
           "ticks"]
# The header's counts, summed over the regions into the run's summary.
COUNTS = ("mshr_hits", "without_pc", "uncacheable", "unexplained_invalidations",
          "own_l2_upgrades", "deferred_writes", "unfilled")
LEVELS = {"L1D", "L2"}


def read(path: Path) -> tuple[dict, pd.DataFrame]:
    """One region's table: its header's fields and its rows, refused with
    one line if it is not one."""
    try:
        meta, rows = extension_table.read(
            path, MAGIC, "miss profile", ("tick_frequency", "line_bytes", *COUNTS), COLUMNS, {
                "cpu": "int16", "level": "string", "pc": "uint64", "kind": "string",
                "vaddr": "uint64", "cause": "string", "thief_cpu": "int16",
                "thief_pc": "uint64", "count": "int64", "ticks": "uint64"})
    except HotlineError:
        _refuse_another_version(path)
        raise
    for column, known in (("level", LEVELS), ("kind", set(schema.KINDS)),
                          ("cause", set(schema.CAUSES))):
        unknown = set(rows[column].unique()) - known
        if unknown:
            raise HotlineError(f"{path}: unknown {column} {sorted(unknown)[0]!r}; "
                               f"{extension_table.REBUILD}")
    return meta, rows


def _refuse_another_version(path: Path) -> None:
    """Refuses, saying so, a table an extension of another version wrote."""
    try:
        with open(path, "rb") as f:
            first = f.readline(len(MAGIC)).decode("utf-8", "replace")
    except OSError:
        return
    if first.startswith(FAMILY) and not first.startswith(MAGIC):
        raise HotlineError(f"{path}: a miss profile of another version ({first!r}): "
                           f"{extension_table.REBUILD}") from None


def aggregate(paths: list[Path], physical: PhysicalMap,
              clock_hz: float) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The raw misses frame (RAW) and the L1Ds' coherence misses by thief
    (STOLEN) of the regions' tables, and their header counts summed (with
    "misses")."""
    frames, summary = [], {key: 0 for key in ("misses", *COUNTS)}
    for path in paths:
        meta, rows = read(path)
        for key in COUNTS:
            summary[key] += meta[key]
        summary["misses"] += int(rows["count"].sum())
        line_bytes = meta["line_bytes"]
        rows["data"] = [data_key(kind, pc, vaddr, physical, line_bytes) for kind, pc, vaddr in
                        zip(rows["kind"], rows["pc"].tolist(), rows["vaddr"].tolist())]
        rows["cycles"] = rows["ticks"].astype("float64") * clock_hz / meta["tick_frequency"]
        frames.append(rows)
    rows = pd.concat(frames, ignore_index=True) if frames else \
        pd.DataFrame(columns=[*COLUMNS, "data", "cycles"])
    keys = ["cpu", "pc", "kind", "data", "level", "cause"]
    raw = rows.groupby(keys, as_index=False, sort=False).agg(count=("count", "sum"),
                                                             cycles=("cycles", "sum"))
    raw["cycles"] = raw["cycles"].round()
    raw = raw[list(RAW)].astype(RAW)
    # The coherence table is the L1Ds' (as the QEMU plugin's stolen records).
    stolen = rows[(rows["thief_cpu"] >= 0) & (rows["level"] == "L1D")].groupby(
        ["cpu", "pc", "data", "thief_cpu", "thief_pc"], as_index=False, sort=False)["count"].sum()
    stolen = stolen[list(STOLEN)].astype(STOLEN)
    return (raw.sort_values(["cpu", "level", "pc", "kind", "data"]).reset_index(drop=True),
            stolen.sort_values(list(STOLEN)[:-1]).reset_index(drop=True), summary)
