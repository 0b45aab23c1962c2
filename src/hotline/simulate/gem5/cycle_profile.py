"""hotline's gem5 cycle profile (configs/gem5/extras/cycle_profile.hh: one
table per core and region, written inside gem5) into the run's
cycles.parquet and region_cycles.parquet (results/schema.py); or, of a
sampled run (one table per core and window), into sampled_cycles.parquet:
each instruction's share of the cycles, estimated with its 95% interval
over the windows.

Each table's first line says how many units make a cycle and how many
cycles the region had, halted ones among them; its rows charge every other
cycle to one instruction, in units.  The reader checks that they add up,
exactly, before anything is made of them."""

import io
from pathlib import Path

import numpy as np
import pandas as pd

from hotline.errors import HotlineError
from hotline.inputs import read_text
from hotline.intervals import half_width
from hotline.results import schema
from hotline.results.attribute import with_code

MAGIC = "# hotline cycle profile 1:"
COUNTS = ["pc", "instructions", "micro_ops", "samples"]   # then units per cause


def read(path: Path) -> tuple[dict, pd.DataFrame]:
    """One core's table of one region: its header's fields and its rows
    (pc, instructions, micro_ops, then units per cause), refused with one
    line if it is not one or does not add up.  Samples (the sampled view)
    are counted apart from the cycles."""
    text = read_text(path)
    header, _, body = text.partition("\n")
    if not header.startswith(MAGIC):
        raise HotlineError(f"{path}: not a hotline cycle profile (first line {header[:40]!r})")
    try:
        meta = dict(field.split("=", 1) for field in header[len(MAGIC):].split())
        units, region, halted, period = (int(meta[k]) for k in (
            "units_per_cycle", "region_cycles", "halted_cycles", "sample_period"))
        rows = pd.read_csv(io.StringIO(body), dtype="uint64")
    except (ValueError, KeyError) as e:
        raise HotlineError(f"{path}: damaged cycle profile ({e}); run it again") from None
    causes = list(rows.columns[len(COUNTS):])
    if list(rows.columns[:len(COUNTS)]) != COUNTS or \
            causes != list(schema.CYCLE_CAUSES):
        raise HotlineError(f"{path}: columns {list(rows.columns)} are not those of "
                           f"results/schema.py CYCLE_CAUSES: hotline and its gem5 extension "
                           f"differ; rebuild gem5 with this checkout's configs/gem5/extras")
    charged = int(rows[causes].to_numpy(dtype="uint64").sum()) if len(rows) else 0
    if charged + halted * units != region * units:
        raise HotlineError(f"{path}: {charged / units} cycles charged and {halted} halted, of "
                           f"{region}: the profile does not add up")
    return {"units_per_cycle": units, "region_cycles": region, "halted_cycles": halted,
            "sample_period": period}, rows


def tables(files: dict[tuple[int, int], Path], objects, run_id: str) -> dict[str, pd.DataFrame]:
    """cycles and region_cycles of every (region, cpu)'s table."""
    cycles, regions = [], []
    for (region, cpu), path in sorted(files.items()):
        meta, rows = read(path)
        units = meta["units_per_cycle"]
        frame = pd.DataFrame({"run": run_id, "region": region, "cpu": cpu, "pc": rows["pc"],
                              "instructions": rows["instructions"].astype("int64"),
                              "micro_ops": rows["micro_ops"].astype("int64"),
                              "samples": rows["samples"].astype("int64")})
        for cause in schema.CYCLE_CAUSES:
            frame[f"cycles_{cause}"] = rows[cause].astype("float64") / units
        frame["cycles"] = frame[[f"cycles_{c}" for c in schema.CYCLE_CAUSES]].sum(axis=1)
        cycles.append(frame)
        regions.append({"run": run_id, "region": region, "cpu": cpu,
                        "cycles": meta["region_cycles"], "halted_cycles": meta["halted_cycles"],
                        "sample_period": meta["sample_period"]})
    table = pd.concat(cycles, ignore_index=True) if cycles else schema.empty(schema.CYCLES)
    table = with_code(table, "pc", "", objects) if len(table) else table
    return {"cycles": schema.conform(table, schema.CYCLES, "cycles"),
            "region_cycles": schema.conform(pd.DataFrame(regions, columns=list(
                schema.REGION_CYCLES)), schema.REGION_CYCLES, "region_cycles")}


def sampled(files: dict[tuple[int, int, int], Path], objects, run_id: str) -> pd.DataFrame:
    """sampled_cycles of every (region, window, cpu)'s table.

    The exact profile's share of an instruction is its cycles over the
    unhalted cycles of the region (all cores).  Its estimate from the
    windows is the same ratio over the windows' sums (the ratio estimator
    of a systematic sample: SMARTS's mean, with each window weighed by its
    unhalted cycles), with the 95% interval of the ratio: the Student-t
    half-width of the residuals y - R x (y an instruction's cycles in a
    window, x the window's unhalted cycles) over the mean x.  A mean of each
    window's own share would weigh a window in which the cores were mostly
    halted as much as a busy one, and one in which all were halted as share
    0 of everything.  An instruction a window did not see has 0 cycles
    there."""
    per_window, totals = [], {}
    for (region, window, cpu), path in sorted(files.items()):
        meta, rows = read(path)
        units = meta["units_per_cycle"]
        cycles = rows[list(schema.CYCLE_CAUSES)].sum(axis=1).astype("float64") / units
        per_window.append(pd.DataFrame({"window": [(region, window)] * len(rows),
                                        "pc": rows["pc"], "cycles": cycles}))
        totals[(region, window)] = totals.get((region, window), 0.0) + \
            meta["region_cycles"] - meta["halted_cycles"]
    if not per_window:
        return schema.conform(schema.empty(schema.SAMPLED_CYCLES), schema.SAMPLED_CYCLES,
                              "sampled_cycles")
    windows = sorted(totals)
    frame = pd.concat(per_window, ignore_index=True)
    cycles = frame.pivot_table(index="pc", columns="window", values="cycles", aggfunc="sum",
                               fill_value=0.0).reindex(columns=windows, fill_value=0.0)
    y = cycles.to_numpy()
    x = np.array([totals[w] for w in windows])
    n = len(windows)
    share = y.sum(axis=1) / x.sum() if x.sum() > 0 else np.zeros(len(y))
    residuals = y - share[:, None] * x[None, :]
    spread = residuals.std(axis=1, ddof=1) / x.mean() if n > 1 and x.sum() > 0 \
        else np.zeros(len(y))
    half = half_width(spread, n)
    table = pd.DataFrame({"run": run_id, "pc": cycles.index.astype("uint64"), "windows": n,
                          "cycles": y.sum(axis=1), "share": share,
                          "share_low": share - half, "share_high": share + half})
    table = with_code(table, "pc", "", objects)
    return schema.conform(table, schema.SAMPLED_CYCLES, "sampled_cycles")
