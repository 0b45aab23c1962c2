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

from pathlib import Path

import numpy as np
import pandas as pd

from hotline.errors import HotlineError
from hotline.intervals import half_width
from hotline.results import schema
from hotline.results.attribute import with_code
from hotline.simulate.gem5 import extension_table

MAGIC = "# hotline cycle profile 1:"
COUNTS = ["pc", "instructions", "micro_ops", "samples"]   # then units per cause


def read(path: Path) -> tuple[dict, pd.DataFrame]:
    """One core's table of one region: its header's fields and its rows
    (pc, instructions, micro_ops, then units per cause), refused with one
    line if it is not one or does not add up.  Samples (the sampled view)
    are counted apart from the cycles."""
    meta, rows = extension_table.read(
        path, MAGIC, "cycle profile",
        ("units_per_cycle", "region_cycles", "halted_cycles", "sample_period"),
        [*COUNTS, *schema.CYCLE_CAUSES], "uint64")
    units, region, halted = meta["units_per_cycle"], meta["region_cycles"], meta["halted_cycles"]
    causes = list(schema.CYCLE_CAUSES)
    charged = int(rows[causes].to_numpy(dtype="uint64").sum()) if len(rows) else 0
    if charged + halted * units != region * units:
        raise HotlineError(f"{path}: {charged / units} cycles charged and {halted} halted, of "
                           f"{region}: the profile does not add up")
    return meta, rows


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


def _ratio(y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ratio estimator of a systematic sample, row by row: sum(y) /
    sum(x) over the windows (the columns), and its 95% half-width, the
    Student-t half-width of the residuals y - R x over the mean x.  x is one
    row for all (the windows' totals) or one per row; NaN where it sums
    to 0."""
    x = np.broadcast_to(x, y.shape)
    n = y.shape[1]
    total = x.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total > 0, y.sum(axis=1) / total, np.nan)
        residuals = y - np.nan_to_num(ratio)[:, None] * x
        spread = residuals.std(axis=1, ddof=1) / x.mean(axis=1) if n > 1 \
            else np.zeros(len(y))
    return ratio, np.where(total > 0, half_width(spread, n), np.nan)


def sampled(files: dict[tuple[int, int, int], Path], periods: dict[tuple[int, int, int], int],
            objects, run_id: str, counted: pd.Series | None = None) -> pd.DataFrame:
    """sampled_cycles of every (region, window, cpu)'s table; periods: the
    micro-ops each core committed in the period that ends with the window
    (its atomic and O3 cores together), keyed as files; counted: the run's
    own micro-ops per instruction (retire_count.py), if it counted them.

    The exact profile's share of an instruction is its cycles over the
    unhalted cycles of the region (all cores).  Each window stands for its
    period: the core's period ran U micro-ops, the window committed K of
    them in its cycles, so the period's time is estimated as the window's
    cycles times U / K (SMARTS: the period's work times the window's cycles
    per unit of work), and an instruction's as its cycles in the window
    times U / K.  Its share is the ratio of the sums over the windows (the
    ratio estimator of a systematic sample), with the 95% interval of the
    ratio: the Student-t half-width of the residuals y - R x (y the
    instruction's estimated cycles in a window's period, x the period's
    estimated unhalted cycles, both summed over the cores) over the mean x.

    The estimate is the product of two, each with its own interval so that
    each can be checked on its own: the instruction's share of the
    micro-ops (its window micro-ops times U / K over the periods' U), which
    the run's own count (`counted`) can be set against, and its cycles per
    micro-op in the windows (the same ratio, of its cycles to its micro-ops,
    window by window), which an exact O3 run of the same code can.

    Windows are placed in the atomic cores' time, which runs one micro-op a
    cycle whatever the code, and last a fixed number of O3 cycles: without
    the U / K weights a window in slow code (misses, a lock) would count as
    much as one in fast code that ran four times as many of the program's
    micro-ops, and slow code's share would come out too small
    (tests/test_cycle_profile.py works an example).  The unit is the
    micro-op because the atomic cores' time is: gem5's x86 `rep stosq` is
    one instruction for a whole page.  A core that committed nothing in a
    window (halted through it) has no rate to scale by: its period's
    micro-ops go to its next window's, which stands for both.  An
    instruction a window did not see has 0 cycles there."""
    per_window, totals, work = [], {}, {}
    unmeasured: dict[tuple[int, int], int] = {}     # (region, cpu): micro-ops
    for (region, window, cpu), path in sorted(files.items()):
        meta, rows = read(path)
        units = meta["units_per_cycle"]
        measured = int(rows["micro_ops"].sum())
        period = periods[(region, window, cpu)] + unmeasured.pop((region, cpu), 0)
        if not measured:
            unmeasured[(region, cpu)] = period
        if measured > period:
            # The window is part of its period: the extension's count and
            # gem5's statistic disagree on what a micro-op is.
            raise HotlineError(f"{path}: the window committed {measured} micro-ops, its "
                               f"period only {period}; the counts of the cycle profile and "
                               "of gem5 disagree")
        weight = period / measured if measured else 0.0
        cycles = rows[list(schema.CYCLE_CAUSES)].sum(axis=1).astype("float64") / units
        micro_ops = rows["micro_ops"].astype("float64")
        per_window.append(pd.DataFrame({"window": [(region, window)] * len(rows),
                                        "pc": rows["pc"], "cycles": cycles,
                                        "micro_ops": micro_ops,
                                        "estimated": cycles * weight,
                                        "estimated_micro_ops": micro_ops * weight}))
        key = (region, window)
        totals[key] = totals.get(key, 0.0) + \
            weight * (meta["region_cycles"] - meta["halted_cycles"])
        work[key] = work.get(key, 0.0) + (period if measured else 0.0)
    if not per_window:
        return schema.conform(schema.empty(schema.SAMPLED_CYCLES), schema.SAMPLED_CYCLES,
                              "sampled_cycles")
    windows = sorted(totals)
    frame = pd.concat(per_window, ignore_index=True)

    pcs = np.sort(frame["pc"].unique())

    def by_window(column: str) -> np.ndarray:
        return frame.pivot_table(index="pc", columns="window", values=column, aggfunc="sum",
                                 fill_value=0.0).reindex(index=pcs, columns=windows,
                                                         fill_value=0.0).to_numpy()

    time, work_done = by_window("estimated"), by_window("estimated_micro_ops")
    share, half = _ratio(time, np.array([totals[w] for w in windows]))
    share = np.nan_to_num(share)
    op_share, op_half = _ratio(work_done, np.array([work[w] for w in windows]))
    cpi, cpi_half = _ratio(time, work_done)
    measured = frame.groupby("pc")[["cycles", "micro_ops"]].sum().reindex(pcs)
    table = pd.DataFrame({
        "run": run_id, "pc": pcs.astype("uint64"), "windows": len(windows),
        "cycles": measured["cycles"].to_numpy(), "share": share,
        "share_low": share - np.nan_to_num(half), "share_high": share + np.nan_to_num(half),
        "micro_ops": measured["micro_ops"].to_numpy().astype("int64"),
        "micro_op_share": op_share, "micro_op_share_low": op_share - op_half,
        "micro_op_share_high": op_share + op_half,
        "cycles_per_micro_op": cpi, "cycles_per_micro_op_low": cpi - cpi_half,
        "cycles_per_micro_op_high": cpi + cpi_half,
        "counted_micro_ops": np.nan if counted is None
        else counted.reindex(pcs, fill_value=0).to_numpy(dtype="float64")})
    table = with_code(table, "pc", "", objects)
    return schema.conform(table, schema.SAMPLED_CYCLES, "sampled_cycles")
