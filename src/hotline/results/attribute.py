"""Attribution: raw misses (cpu, pc, kind, data address, level, cause, count,
cycles), from any backend, become the misses table (schema.MISSES) with the
instruction's symbol, offset and source line and the data's object and field,
all from the run's own kernel build; raw coherence misses by thief (cpu,
pc, data, thief cpu, thief pc, count) become the coherence table
(schema.COHERENCE), and raw reads after partial writes (cpu, store pc, load
pc, count) the rapw table (schema.RAPW)."""

from pathlib import Path

import pandas as pd

from hotline.results import schema
from hotline.results.objects import KERNEL_START, ObjectMap

RAW_COLUMNS = ("cpu", "pc", "kind", "data", "level", "cause", "count", "cycles")


def code_locations(pcs, objects: ObjectMap) -> pd.DataFrame:
    """symbol, offset and source_line of each distinct pc."""
    pcs = sorted({int(pc) for pc in pcs})
    kernel = [pc for pc in pcs if pc >= KERNEL_START]
    lines = objects.symbolizer.source_lines(kernel)
    rows = []
    for pc in pcs:
        function = objects.symbolizer.function(pc) if pc >= KERNEL_START else None
        rows.append((pc, function.name if function else "",
                     pc - function.start if function else 0, lines.get(pc, "")))
    return pd.DataFrame(rows, columns=["pc", "symbol", "offset", "source_line"]).astype(
        {"pc": "uint64"})


def data_locations(raw: pd.DataFrame, objects: ObjectMap) -> pd.DataFrame:
    """object and field of each distinct (kind, data)."""
    rows = []
    for kind, data in raw[["kind", "data"]].drop_duplicates().itertuples(index=False):
        where = ("text", "") if kind == "fetch" else objects.locate(int(data))
        rows.append((kind, data, *where))
    return pd.DataFrame(rows, columns=["kind", "data", "object", "field"]).astype(
        {"data": "uint64"})


def _require_columns(raw: pd.DataFrame) -> None:
    missing = [c for c in RAW_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"raw misses lack column(s) {missing}")


def attribute(raw: pd.DataFrame, kernel_dir: Path, run_id: str,
              guest_log_text: str) -> pd.DataFrame:
    _require_columns(raw)
    return _attribute(raw, ObjectMap.for_kernel(kernel_dir, guest_log_text), run_id)


def attribute_with(raw: pd.DataFrame, objects: ObjectMap, run_id: str) -> pd.DataFrame:
    """attribute(), with the run's object map already made (it runs nm)."""
    _require_columns(raw)
    return _attribute(raw, objects, run_id)


def _attribute(raw: pd.DataFrame, objects: ObjectMap, run_id: str) -> pd.DataFrame:
    raw = raw.astype({"pc": "uint64", "data": "uint64"})
    table = (raw.merge(code_locations(raw["pc"], objects), on="pc", how="left")
                .merge(data_locations(raw, objects), on=["kind", "data"], how="left"))
    table = objects.name_members(table)
    table["run"] = run_id
    table["space"] = (table["pc"] >= KERNEL_START).map({True: "kernel", False: "user"})
    # Misses that differ only in the data address within one field are one row.
    keys = [c for c in schema.MISSES if c not in ("count", "cycles")]
    table = table.groupby(keys, as_index=False, sort=True)[["count", "cycles"]].sum()
    return schema.conform(table, schema.MISSES, "misses")


def with_code(frame: pd.DataFrame, pc_column: str, prefix: str,
               objects: ObjectMap) -> pd.DataFrame:
    """frame with symbol, offset and source_line of its pc_column, named with prefix."""
    code = code_locations(frame[pc_column], objects).rename(
        columns={"pc": pc_column, "symbol": f"{prefix}symbol", "offset": f"{prefix}offset",
                 "source_line": f"{prefix}source_line"})
    return frame.merge(code, on=pc_column, how="left")


def coherence_table(stolen: pd.DataFrame, objects: ObjectMap, run_id: str) -> pd.DataFrame:
    """The coherence table of raw coherence misses by thief: both
    instructions symbolized, the data named (the data of a coherence miss
    is never an instruction fetch's)."""
    stolen = stolen.astype({"pc": "uint64", "data": "uint64", "thief_pc": "uint64"}) \
        .assign(kind="read")
    stolen = objects.name_members(
        stolen.merge(data_locations(stolen, objects), on=["kind", "data"], how="left"))
    stolen = with_code(with_code(stolen, "pc", "", objects), "thief_pc", "thief_", objects)
    stolen["run"] = run_id
    keys = [c for c in schema.COHERENCE if c != "count"]
    table = stolen.groupby(keys, as_index=False, sort=True)["count"].sum()
    return schema.conform(table, schema.COHERENCE, "coherence")


def rapw_table(raw: pd.DataFrame, objects: ObjectMap, run_id: str) -> pd.DataFrame:
    """The rapw table of raw reads after partial writes: both instructions
    symbolized."""
    raw = raw.astype({"store_pc": "uint64", "load_pc": "uint64"})
    table = with_code(with_code(raw, "store_pc", "store_", objects), "load_pc", "load_", objects)
    table["run"] = run_id
    table = table.sort_values(["cpu", "store_pc", "load_pc"], ignore_index=True)
    return schema.conform(table, schema.RAPW, "rapw")
