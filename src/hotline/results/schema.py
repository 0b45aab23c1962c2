"""The results tables' schemas.  Every backend produces these, one Parquet
file per table in the run directory; the notebooks and reports read only these.

misses.parquet, one row per (cpu, instruction, data field, level, cause):
  run          the run id
  cpu          the core that missed
  pc           guest virtual address of the instruction
  space        "kernel" or "user" (by the instruction's address)
  kind         "read", "write", "rmw" (one locked read-modify-write), "fetch"
  symbol       function containing pc (kernel symbols only; "" otherwise)
  offset       pc - symbol's start
  source_line  file:line of pc from the kernel's DWARF ("" if unknown)
  object       the data object: "struct page", a kernel symbol, a dynamic
               object a kernel variant announced, "kernel-other", "user", or
               "text" (instruction fetches)
  field        the field of the object ("flags", "_refcount", ...; "+OFFSET"
               inside a symbol; "" when not known)
  level        "L1I", "L1D", "L2", "L3"
  cause        "compulsory", "capacity", "conflict", "coherence", "upgrade"
               (CAUSES, defined in docs/causes.md); "" where the backend
               does not classify the miss (gem5's miss profile classifies
               every L1D and L2 miss)
  count        misses
  cycles       modelled stall cycles of these misses: count x the latency of
               whatever served them.  A miss at L1 that hits L2 and a miss at
               L2 are different rows with their own cycles: sum cycles within
               one level, never across levels.

The other tables, as the QEMU backend's hotline-cache writes them
(simulate/qemu/cache_tables.py); gem5 runs make misses, coherence, roi, and
with O3 cores rapw, cycles, region_cycles and drains; a table no run made reads as
empty with these columns (analysis/results.py):

instructions.parquet, one row per (instruction, access kind) executed: its
  bytes as run, accesses, cycles and misses at each level, symbol, offset and
  source line.
coherence.parquet, one row per (cpu, pc, object, field, thief cpu, thief pc):
  coherence misses, with both instructions symbolized.
rapw.parquet, one row per (cpu, store pc, load pc): reads after partial
  writes, both instructions symbolized.
roi.parquet, one row per cpu: instructions inside the regions of interest.
turns.parquet (QEMU, deterministic mode), one row per (cpu, bucket of turn
  lengths): the vCPU turns of shortest to longest instructions and the
  instructions in them (docs/interleaving.md).
cycles.parquet (gem5 O3), one row per (region, cpu, instruction): committed
  instructions and micro-ops, and the core's cycles charged to the
  instruction (cycles; configs/gem5/extras/cycle_profile.hh states the
  rule), split by what the core was doing (cycles_commit) or waiting for
  (cycles_load_l2 ... cycles_squash: CYCLE_CAUSES), and the samples a
  sampling profiler would have charged it (one every sample_period unhalted
  cycles): `samples` to the next instruction to commit (next-committing
  view), `skid_samples` to the instruction after the boundary at which a
  Pentium III's counter interrupt is taken (skid view; missing from
  profiles made before the extension had it), symbolized.
region_cycles.parquet (gem5 O3), one row per (region, cpu): the region's
  cycles and the halted ones among them (the rest add up to the cpu's
  cycles in cycles.parquet), and the sampled view's period.
drains.parquet (gem5 O3), one row per (region, cpu, barrier instruction,
  what it waited for, store instruction, data object and field): the
  cycles of the instruction's cycles_barrier (a fence's: x86 locked
  instructions are fenced micro-ops in gem5) spent waiting for it
  (waited_for, DRAIN_WAITS): the store holding the store queue's drain,
  by what served its write (store_l1d_hit: it did not miss in the L1D;
  store_l2, store_memory, store_peer: its L1D miss the L2, memory or
  another core's cache served), with its data's object and field; no
  older store left (no_store: the fence issuing and executing); or the
  fence not yet at the head of the reorder buffer (not_at_head).  A
  barrier instruction's rows add up to its cycles_barrier in
  cycles.parquet.  Both instructions symbolized (the store's store_pc,
  store_symbol, ...; 0 and "" where waited_for names no store).
sampled_cycles.parquet (gem5 O3, sampled simulation), one row per
  instruction the windows saw: the windows measured, its cycles and
  micro-ops in them (all cores); its share of the region's micro-ops
  (micro_op_share) and its cycles per micro-op (cycles_per_micro_op),
  each estimated over the windows with its 95% interval; the micro-ops the
  run itself counted for it on its atomic and O3 cores (counted_micro_ops;
  NaN where the run did not count them); and its share of the unhalted
  cycles in the windows (share), with the 95% interval (share_low,
  share_high), symbolized.
code.parquet (committed gem5 results only: analysis/slim.py), one row per
  instruction of the functions whose locks the claims find by their code
  (analysis.claims.common.CHAIN_FUNCTIONS), as the run's kernel
  disassembles: so that results kept without the kernel's build still
  locate them.
inlined.parquet (committed gem5 results only: analysis/slim.py), one row per
  (run, instruction of its cycle profile in the kernel) where a function
  whose inlined copies a claim counts (analysis.claims.common.
  INLINED_FUNCTIONS) is inlined or compiled, and where, inside those, the
  zone lookup that C9 reads the word in (ZONE_LOOKUP) is, as the kernel's
  debug information says: so that results kept without the kernel's build
  still find those copies.
"""

import pandas as pd

MISSES = {
    "run": "string", "cpu": "int16", "pc": "uint64", "space": "string", "kind": "string",
    "symbol": "string", "offset": "int64", "source_line": "string", "object": "string",
    "field": "string", "level": "string", "cause": "string", "count": "int64",
    "cycles": "int64",
}
INSTRUCTIONS = {
    "run": "string", "pc": "uint64", "kind": "string", "bytes": "string", "accesses": "int64",
    "cycles": "int64", "l1_misses": "int64", "l2_misses": "int64", "l3_misses": "int64",
    "symbol": "string", "offset": "int64", "source_line": "string",
}
COHERENCE = {
    "run": "string", "cpu": "int64", "pc": "uint64", "thief_cpu": "int64", "thief_pc": "uint64",
    "object": "string", "field": "string", "symbol": "string", "offset": "int64",
    "source_line": "string", "thief_symbol": "string", "thief_offset": "int64",
    "thief_source_line": "string", "count": "int64",
}
RAPW = {
    "run": "string", "cpu": "int64", "store_pc": "uint64", "load_pc": "uint64", "count": "int64",
    "store_symbol": "string", "store_offset": "int64", "store_source_line": "string",
    "load_symbol": "string", "load_offset": "int64", "load_source_line": "string",
}
ROI = {"run": "string", "cpu": "int64", "instructions": "int64"}
TURNS = {"run": "string", "cpu": "int64", "shortest": "int64", "longest": "int64",
         "turns": "int64", "instructions": "int64"}
# What a charged cycle went to, in the order of cycle_profile.hh's enum Cause
# (tests/test_cycle_profile.py checks them against its causeNames).
CYCLE_CAUSES = ("commit", "load_l2", "load_memory", "load_peer", "barrier", "store", "execute",
                "front_end", "mispredict", "squash")
CYCLES = {
    "run": "string", "region": "int64", "cpu": "int64", "pc": "uint64",
    "instructions": "int64", "micro_ops": "int64", "samples": "int64",
    "skid_samples": "Int64", "cycles": "float64",
    **{f"cycles_{cause}": "float64" for cause in CYCLE_CAUSES},
    "symbol": "string", "offset": "int64", "source_line": "string",
}
REGION_CYCLES = {"run": "string", "region": "int64", "cpu": "int64", "cycles": "int64",
                 "halted_cycles": "int64", "sample_period": "int64"}
# What a barrier's cycles waited for, in the order of cycle_profile.hh's
# enum Wait (tests/test_cycle_profile.py checks them against its waitNames).
DRAIN_WAITS = ("store_l1d_hit", "store_l2", "store_memory", "store_peer", "no_store",
               "not_at_head")
DRAINS = {"run": "string", "region": "int64", "cpu": "int64", "pc": "uint64",
          "waited_for": "string", "store_pc": "uint64", "object": "string",
          "field": "string", "cycles": "float64", "symbol": "string", "offset": "int64",
          "source_line": "string", "store_symbol": "string", "store_offset": "int64",
          "store_source_line": "string"}
SAMPLED_CYCLES = {"run": "string", "pc": "uint64", "windows": "int64", "cycles": "float64",
                  "share": "float64", "share_low": "float64", "share_high": "float64",
                  "micro_ops": "int64", "micro_op_share": "float64",
                  "micro_op_share_low": "float64", "micro_op_share_high": "float64",
                  "cycles_per_micro_op": "float64", "cycles_per_micro_op_low": "float64",
                  "cycles_per_micro_op_high": "float64", "counted_micro_ops": "float64",
                  "symbol": "string", "offset": "int64", "source_line": "string"}
CODE = {"run": "string", "symbol": "string", "offset": "int64", "pc": "uint64",
        "bytes": "string", "text": "string"}
INLINED = {"run": "string", "pc": "uint64", "function": "string"}
TABLES = {"misses": MISSES, "instructions": INSTRUCTIONS, "coherence": COHERENCE, "rapw": RAPW,
          "roi": ROI, "turns": TURNS, "cycles": CYCLES, "region_cycles": REGION_CYCLES,
          "sampled_cycles": SAMPLED_CYCLES, "drains": DRAINS, "code": CODE,
          "inlined": INLINED}
LEVELS = ("L1I", "L1D", "L2", "L3")
# The causes of a miss, spelled here only: the cache model's outcome names
# (plugins/cachemodel/cachemodel.c) and gem5's miss profile's cause names
# (configs/gem5/extras/miss_profile.cc) are checked against these
# (tests/test_cause_names.py).
CAUSES = ("compulsory", "capacity", "conflict", "coherence", "upgrade")
# What the report calls cause "": a miss the backend did not classify.
UNKNOWN_CAUSE = "cause unknown"
KINDS = ("read", "write", "rmw", "fetch")


def conform(frame: pd.DataFrame, schema: dict[str, str], table: str) -> pd.DataFrame:
    """The frame with exactly the schema's columns, in order and typed; a
    missing column is an error in the code that built the frame."""
    missing = [c for c in schema if c not in frame.columns]
    if missing:
        raise ValueError(f"{table} table lacks column(s) {missing}")
    return frame[list(schema)].astype(schema).reset_index(drop=True)


def empty(schema: dict[str, str]) -> pd.DataFrame:
    """A table with the schema's columns, typed, and no rows."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in schema.items()})
