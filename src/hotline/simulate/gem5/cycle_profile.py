"""hotline's gem5 cycle profile (configs/gem5/extras/cycle_profile.hh: one
table per core and region, written inside gem5, and its drain table beside
it) into the run's cycles.parquet, region_cycles.parquet and drains.parquet
(results/schema.py); or, of a sampled run (one table per core and window),
into sampled_cycles.parquet: each instruction's share of the cycles,
estimated with its 95% interval over the windows.

Each table's first line says how many units make a cycle and how many
cycles the region had, halted ones among them; its rows charge every other
cycle to one instruction, in units.  The drain table charges each
instruction's barrier cycles again, to what the fence waited for.  The
reader checks that both add up, exactly, before anything is made of them."""

from pathlib import Path

import numpy as np
import pandas as pd

from hotline.errors import HotlineError
from hotline.intervals import half_width
from hotline.results import schema
from hotline.results.attribute import with_code
from hotline.simulate.gem5 import extension_table

MAGIC = "# hotline cycle profile 3:"
COUNTS = ["pc", "instructions", "micro_ops", "samples", "skid_samples"]  # then units per cause
# Profiles made before the drain table (2) and before the skid view (1,
# without skid_samples): their tables have no drain table beside them.
MAGIC_2 = "# hotline cycle profile 2:"
MAGIC_1, COUNTS_1 = "# hotline cycle profile 1:", COUNTS[:4]

DRAIN_MAGIC = "# hotline drain profile 1:"
DRAIN_COLUMNS = ["barrier_pc", "waited_for", "store_pc", "vaddr", "units"]
DRAIN_TYPES = {"barrier_pc": "uint64", "waited_for": "string", "store_pc": "uint64",
               "vaddr": "uint64", "units": "uint64"}
# The drain table's name: the region table's after this (cycle_profile.cc,
# drainPrefix).
DRAIN_PREFIX = "drains."


def _version(path: Path) -> tuple[str, list[str], bool]:
    """The table's first line, its columns before the causes, and whether a
    drain table is beside it."""
    with open(path, "rb") as f:
        first = f.read(len(MAGIC))
    for magic, counts in ((MAGIC_1, COUNTS_1), (MAGIC_2, COUNTS)):
        if first == magic.encode():
            return magic, counts, False
    return MAGIC, COUNTS, True


def drain_path(path: Path) -> Path:
    """Where the drain table of the region table at path is."""
    return path.with_name(DRAIN_PREFIX + path.name)


def read(path: Path) -> tuple[dict, pd.DataFrame]:
    """One core's table of one region: its header's fields and its rows
    (pc, instructions, micro_ops, then units per cause), refused with one
    line if it is not one or does not add up.  Samples (the sampled view)
    are counted apart from the cycles."""
    magic, counts, _ = _version(path)
    meta, rows = extension_table.read(
        path, magic, "cycle profile",
        ("units_per_cycle", "region_cycles", "halted_cycles", "sample_period"),
        [*counts, *schema.CYCLE_CAUSES], "uint64")
    units, region, halted = meta["units_per_cycle"], meta["region_cycles"], meta["halted_cycles"]
    causes = list(schema.CYCLE_CAUSES)
    charged = int(rows[causes].to_numpy(dtype="uint64").sum()) if len(rows) else 0
    if charged + halted * units != region * units:
        raise HotlineError(f"{path}: {charged / units} cycles charged and {halted} halted, of "
                           f"{region}: the profile does not add up")
    return meta, rows


def read_drains(path: Path, meta: dict, rows: pd.DataFrame) -> pd.DataFrame | None:
    """The drain table beside the region table at path (meta and rows:
    read()'s of it): its rows (barrier_pc, waited_for, store_pc, vaddr,
    units); None for a profile made before drain tables.  Refused with one
    line if it is missing or damaged, names a wait this hotline does not
    know, or a barrier instruction's rows do not add up to its barrier
    units in the region table."""
    if not _version(path)[2]:
        return None
    at = drain_path(path)
    if not at.exists():
        raise HotlineError(f"{at}: missing beside {path.name}: run the experiment again")
    drain_meta, drains = extension_table.read(at, DRAIN_MAGIC, "drain profile",
                                              ("units_per_cycle",), DRAIN_COLUMNS, DRAIN_TYPES)
    units = meta["units_per_cycle"]
    if drain_meta["units_per_cycle"] != units:
        raise HotlineError(f"{at}: {drain_meta['units_per_cycle']} units a cycle, {path.name} "
                           f"{units}: {extension_table.REBUILD}")
    unknown = set(drains["waited_for"].unique()) - set(schema.DRAIN_WAITS)
    if unknown:
        raise HotlineError(f"{at}: unknown wait {sorted(unknown)[0]!r}; {extension_table.REBUILD}")
    barrier = {int(pc): int(n) for pc, n in rows.groupby("pc")["barrier"].sum().items() if n}
    waited = {int(pc): int(n) for pc, n in drains.groupby("barrier_pc")["units"].sum().items()}
    for pc in sorted(barrier.keys() | waited.keys()):
        if barrier.get(pc, 0) != waited.get(pc, 0):
            raise HotlineError(f"{at}: the fences at {pc:#x} waited {waited.get(pc, 0) / units:g} "
                               f"cycles by it and {barrier.get(pc, 0) / units:g} by "
                               f"{path.name}: the drain table does not add up")
    return drains


def _drain_table(frames: list[pd.DataFrame], objects) -> pd.DataFrame:
    """drains.parquet of the regions' drain rows: each store's data named
    (object and field, as the miss profile's are), summed over the
    addresses within one field, both instructions symbolized."""
    if not frames:
        return schema.conform(schema.empty(schema.DRAINS), schema.DRAINS, "drains")
    frame = pd.concat(frames, ignore_index=True)
    stores = frame["waited_for"].str.startswith("store_").to_numpy(dtype=bool)
    places = {int(v): objects.locate(int(v)) for v in frame.loc[stores, "vaddr"].unique()}
    named = [places[int(v)] if store else ("", "") for v, store in zip(frame["vaddr"], stores)]
    frame["object"] = [o for o, _ in named]
    frame["field"] = [f for _, f in named]
    frame = objects.name_members(frame, "store_pc")
    keys = ["run", "region", "cpu", "pc", "waited_for", "store_pc", "object", "field"]
    frame = frame.groupby(keys, as_index=False, sort=True)["cycles"].sum()
    frame = with_code(with_code(frame, "pc", "", objects), "store_pc", "store_", objects)
    return schema.conform(frame, schema.DRAINS, "drains")


def tables(files: dict[tuple[int, int], Path], objects, run_id: str) -> dict[str, pd.DataFrame]:
    """cycles, region_cycles and drains of every (region, cpu)'s table."""
    cycles, regions, drains = [], [], []
    for (region, cpu), path in sorted(files.items()):
        meta, rows = read(path)
        units = meta["units_per_cycle"]
        waited = read_drains(path, meta, rows)
        if waited is not None and len(waited):
            drains.append(pd.DataFrame({
                "run": run_id, "region": region, "cpu": cpu, "pc": waited["barrier_pc"],
                "waited_for": waited["waited_for"], "store_pc": waited["store_pc"],
                "vaddr": waited["vaddr"], "cycles": waited["units"].astype("float64") / units}))
        frame = pd.DataFrame({"run": run_id, "region": region, "cpu": cpu, "pc": rows["pc"],
                              "instructions": rows["instructions"].astype("int64"),
                              "micro_ops": rows["micro_ops"].astype("int64"),
                              "samples": rows["samples"].astype("int64"),
                              "skid_samples": rows["skid_samples"].astype("Int64")
                              if "skid_samples" in rows else pd.NA})
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
                schema.REGION_CYCLES)), schema.REGION_CYCLES, "region_cycles"),
            "drains": _drain_table(drains, objects)}


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


def sampled(files: dict[tuple[int, int, int], Path], objects, run_id: str,
            counted: pd.Series | None = None) -> pd.DataFrame:
    """sampled_cycles of every (region, window, cpu)'s table; counted: the
    run's own micro-ops per instruction (retire_count.py), if it counted
    them.

    The exact profile's share of an instruction is its cycles over the
    unhalted cycles of the region (all cores).  The windows begin at points
    spread evenly over the atomic cores' time, one micro-op a cycle, and
    each core measures the same number of micro-ops in each: every
    micro-op of the region is as likely to be measured as any other, and
    the windows are a sample of the region's micro-ops with their cycles.
    The estimate therefore pools them: an instruction's share of the
    micro-ops is its micro-ops in the windows over theirs, its cycles per
    micro-op its cycles over its micro-ops there, and its share of the time
    its cycles over the windows' unhalted ones; each the ratio estimator of
    a systematic sample of windows (all cores of a window together), with
    its 95% interval (_ratio).  (Each instruction's counted micro-ops times
    its cycles per micro-op would leave only the rate to estimate; tried
    on 2026-11-28, its narrower intervals left 9 of the tiny fork storm's
    top 20 exact shares outside, where these leave 1: docs/gem5.md.)

    A window is not weighted by the micro-ops its core ran since the last
    one (SMARTS's U / K, which these estimates used until 2026-11-28): a
    core that measured its micro-ops quickly runs on until the slowest core
    has measured its own, so fast windows stood for longer periods, and on
    the smoke fork storm 15 of the top 20 instructions' micro-op shares lay
    outside their intervals against the run's own count, fast code high
    (docs/gem5.md).  The unit is the micro-op because the atomic cores' time
    is: gem5's x86 `rep stosq` is one instruction for a whole page.  A core
    asleep through a window adds nothing to it, as it ran nothing at that
    point of the region; an instruction a window did not see has 0 cycles
    there."""
    per_window = []
    for (region, window, cpu), path in sorted(files.items()):
        meta, rows = read(path)
        cycles = rows[list(schema.CYCLE_CAUSES)].sum(axis=1).astype("float64") / \
            meta["units_per_cycle"]
        per_window.append(pd.DataFrame({"window": [(region, window)] * len(rows),
                                        "pc": rows["pc"], "cycles": cycles,
                                        "micro_ops": rows["micro_ops"].astype("float64")}))
    if not per_window:
        return schema.conform(schema.empty(schema.SAMPLED_CYCLES), schema.SAMPLED_CYCLES,
                              "sampled_cycles")
    windows = sorted({(region, window) for region, window, _ in files})
    frame = pd.concat(per_window, ignore_index=True)
    pcs = np.sort(frame["pc"].unique())

    def by_window(column: str) -> np.ndarray:
        return frame.pivot_table(index="pc", columns="window", values=column, aggfunc="sum",
                                 fill_value=0.0).reindex(index=pcs, columns=windows,
                                                         fill_value=0.0).to_numpy()

    time, work = by_window("cycles"), by_window("micro_ops")
    share, half = _ratio(time, time.sum(axis=0))
    share = np.nan_to_num(share)
    op_share, op_half = _ratio(work, work.sum(axis=0))
    cpi, cpi_half = _ratio(time, work)
    table = pd.DataFrame({
        "run": run_id, "pc": pcs.astype("uint64"), "windows": len(windows),
        "cycles": time.sum(axis=1), "share": share,
        "share_low": share - np.nan_to_num(half), "share_high": share + np.nan_to_num(half),
        "micro_ops": work.sum(axis=1).astype("int64"),
        "micro_op_share": op_share, "micro_op_share_low": op_share - op_half,
        "micro_op_share_high": op_share + op_half,
        "cycles_per_micro_op": cpi, "cycles_per_micro_op_low": cpi - cpi_half,
        "cycles_per_micro_op_high": cpi + cpi_half,
        "counted_micro_ops": np.nan if counted is None
        else counted.reindex(pcs, fill_value=0).to_numpy(dtype="float64")})
    table = with_code(table, "pc", "", objects)
    return schema.conform(table, schema.SAMPLED_CYCLES, "sampled_cycles")
