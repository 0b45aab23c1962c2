"""The hotline-cache plugin's output of one run, as results tables in the
run directory:

  misses.parquet        schema.MISSES
  instructions.parquet  per (pc, kind): the instruction's bytes as executed,
                        accesses, misses at each level, cycles, with symbol
                        and source line
  coherence.parquet     per (cpu, pc, object, field, thief cpu, thief pc):
                        coherence misses, both instructions symbolized
  rapw.parquet          per (cpu, store pc, load pc): reads after partial writes
  roi.parquet           per cpu: instructions inside the regions of interest
  turns.parquet         per (cpu, turn length bucket): the vCPU turns of
                        deterministic mode (empty in parallel mode)
"""

from pathlib import Path

import pandas as pd

from hotline.results import schema
from hotline.results.attribute import attribute_with, coherence_table, rapw_table, with_code
from hotline.results.objects import ObjectMap
from hotline.simulate import guest_log
from hotline.simulate.qemu import plugin_output

OUTPUT = "hotline-cache.out"


def raw_misses(miss: pd.DataFrame) -> pd.DataFrame:
    """One row per level that missed: L1I or L1D by the access kind, then L2
    and L3 where the access went on missing (an upgrade is a miss of the L1D
    and of the L2: two rows).  The outcomes that are misses are the misses
    table's causes (test_plugin_contract checks them against the plugin's)."""
    parts = []
    for column, level in (("l1", None), ("l2", "L2"), ("l3", "L3")):
        part = miss[miss[column].isin(schema.CAUSES)].copy()
        part["level"] = level or part["kind"].map(lambda k: "L1I" if k == "fetch" else "L1D")
        part["cause"] = part[column]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)[
        ["cpu", "pc", "kind", "data", "level", "cause", "count", "cycles"]]


def instructions_table(insn: pd.DataFrame, objects, run_id: str) -> pd.DataFrame:
    table = pd.DataFrame({"run": run_id, "pc": insn["pc"], "kind": insn["kind"],
                          "bytes": insn["bytes"], "accesses": insn["accesses"],
                          "cycles": insn["cycles"]})
    for level in ("l1", "l2", "l3"):
        table[f"{level}_misses"] = sum(insn[f"{level}_{o}"] for o in schema.CAUSES)
    return with_code(table, "pc", "", objects).sort_values(["pc", "kind"], ignore_index=True)


def turns_table(turns: pd.DataFrame) -> pd.DataFrame:
    """The turns histogram with its buckets as instruction ranges: turns of
    shortest to longest instructions (inclusive)."""
    low = 2 ** turns["log2"].astype("int64")
    return pd.DataFrame({"cpu": turns["cpu"].astype("int64"), "shortest": low,
                         "longest": 2 * low - 1, "turns": turns["turns"],
                         "instructions": turns["instructions"]})


def write_tables(run_dir: Path, kernel_dir: Path, run_id: str) -> dict[str, Path]:
    frames = plugin_output.read(run_dir / OUTPUT)
    console = (run_dir / guest_log.FILE).read_text(errors="replace")
    objects = ObjectMap.for_kernel(kernel_dir, console)

    tables = {
        "misses": attribute_with(raw_misses(frames["miss"]), objects, run_id),
        "instructions": instructions_table(frames["insn"], objects, run_id),
        "coherence": coherence_table(frames["stolen"], objects, run_id),
        "rapw": rapw_table(frames["rapw"], objects, run_id),
        "roi": frames["roi"],
        "turns": turns_table(frames["turns"]),
    }
    written = {}
    for name, table in tables.items():
        if "run" not in table.columns:
            table = table.assign(run=run_id)[["run", *table.columns]]
        path = run_dir / f"{name}.parquet"
        table.to_parquet(path, index=False)
        written[name] = path
    return written
