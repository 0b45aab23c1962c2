"""Gathered results cut down to what the notebooks of analysis/ read, for
committing them (analysis/smoke-results/, see its PROVENANCE.md): the
notebooks give the same outputs on the slim tables as on the full ones.

  misses        summed over cpu, pc, kind and source_line, which no notebook
                and no measure in this package reads (they read the miss's
                run, space, function and offset, data object and field,
                level and cause); every row of every level is kept
  instructions  only the instructions of the functions with at least
                LISTED_SHARE of their run's L1 stall cycles (the functions
                a listing is made for: pte_chain_add's is 0.6% at the
                least), and only the columns listing.py reads
  cycles        (gem5 O3) summed over region, cpu and source_line, which no
                notebook and no claim reads of it (the claims take the
                regions' lengths from region_cycles); and, outside the
                functions with at least CYCLES_LISTED_SHARE of their run's
                cycles (the chain functions, whose instructions C2 and C4
                read, are 2.8% at the least on O3 cores),
                over the function's instructions too (user code, without a
                symbol, as one function), at its first instruction: the
                claims read the instructions of the chain functions and the
                cycles of every function, of the kernel and of user space;
                the instructions in the inlined table keep their own rows
  sampled_cycles  (gem5 O3, sampled) each function's instructions summed
                into one row at its first instruction (user code, without a
                symbol, as one function), which is what the claims and the
                notebooks read (C6's spin time: the spin-waits' cycles and
                the kernel's); the sums of cycles, micro-ops and shares are
                exact, their 95% intervals are not sums and are left NaN
                (`hotline annotate --sampled` reads a run's own table, whole;
                2026-11-28: ten sampled runs of the LRU writers were 11.5 MB
                whole)
  coherence     summed over pc and thief_pc, which no notebook reads (rmap
                reads the stolen line's function and offset, and the
                thief's): the addresses of user code, which has no symbol,
                are lost with them (2026-11-28: the seed scale's five
                repeats took 5.1 MB whole, 4.3 MB so)
  gem5_misses_raw  left out: misses.parquet holds the same misses
                attributed, which is what the notebooks and claims read
  code          made here for results without an instructions table (gem5's):
                the disassembly of the chain functions in each run's kernel,
                where C2 and C4 find the chain lock (claims.common.lock_offsets),
                so that the slim results need no kernel build (a merge of
                slim and gathered results makes it for the gathered runs:
                their kernels' builds must be in the cache then)
  inlined       made here for gathered results with a cycle profile: the
                instructions of each run's profile that are in a function
                whose inlined copies C9 counts (claims.common.
                INLINED_FUNCTIONS: folio_unlock, inlined into
                filemap_map_pages), and of those the ones in its zone
                lookup (ZONE_LOOKUP), from its kernel's debug information,
                so that the slim results need no kernel build (made for
                the gathered runs of a merge, as code is)
  other tables  as gathered

Several sources are merged first (merge(): every table's rows of all of
them, as one gathering of all their runs would have written it), so that
new runs can join results committed before them: the committed directory
may be one of the sources and the target.  A run in two sources is
refused; with --replace it is taken from the last source that has it.

With --claims, for results that only the claims page shows (a further
column of it), misses are cut further to what the claims read: the L1
rows (stall cycles, cost.l1_stalls; C4's L1D misses), and none of the
runs of workloads whose claims read no misses (claims.Needs.misses).

With --spec SPEC, only the runs that experiment spec plans are kept of
every source: the committed directory of a spec that has changed (a
workload made longer) loses the runs of its earlier version as the new
ones join it.

Every table is written again with zstd (level 19).  Slimming slim tables
changes nothing.  The command slims, then executes every notebook against
copies of both directories and compares every output of every cell (with
--claims: checks every claim on both and compares each verdict, figure,
reason and control); it fails if one differs, and then leaves the target as
it was: the slim tables are made and compared in a scratch folder first.

    .venv/bin/python -m hotline.analysis.slim FULL_RESULTS_DIR... SLIM_RESULTS_DIR \
        [--claims] [--replace] [--spec SPEC]
"""

import re
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hotline import outputs, sealed
from hotline.analysis.claims import CLAIMS
from hotline.analysis.claims.common import (
    INLINED_FUNCTIONS, KERNEL_START, ZONE_LOOKUP, inline_chains, kernel_code)
from hotline.analysis.cost import l1_stalls
from hotline.analysis.results import Results
from hotline.errors import HotlineError, guarded
from hotline.results import schema

MISSES_SUMMED_OVER = ["cpu", "pc", "kind", "source_line"]
COHERENCE_SUMMED_OVER = ["pc", "thief_pc"]
CYCLES_SUMMED_OVER = ["region", "cpu", "source_line"]
LISTED_SHARE = 0.001
# The first 24 of claims-o3-tiny's 45 runs made 3.8 MB of cycles at
# LISTED_SHARE (the 45 about 7 MB, over the repository's 5 MB a file); at
# this share the 45 make 3.1 MB, every notebook's outputs the same.
CYCLES_LISTED_SHARE = 0.005
INSTRUCTION_COLUMNS = ["run", "pc", "kind", "bytes", "accesses", "symbol", "offset"]


def workloads_without_misses() -> set[str]:
    """The workloads no claim reads the misses of (claims.Needs.misses)."""
    needs = [need for claim in CLAIMS.values() for need in claim.needs]
    return {n.workload for n in needs} - {n.workload for n in needs if n.misses}


def summed_over(table: pd.DataFrame, over: list[str], counted: list[str]) -> pd.DataFrame:
    """The table's rows that differ only in the columns `over` as one, their
    `counted` columns summed; those columns gone."""
    keys = [c for c in table.columns if c not in over and c not in counted]
    return table.groupby(keys, as_index=False, sort=True, dropna=False)[counted].sum()


def slim_misses(misses: pd.DataFrame) -> pd.DataFrame:
    return summed_over(misses, MISSES_SUMMED_OVER, ["count", "cycles"])


def slim_coherence(coherence: pd.DataFrame) -> pd.DataFrame:
    return summed_over(coherence, COHERENCE_SUMMED_OVER, ["count"])


def claims_misses(misses: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of slim misses that the claims read."""
    unread = runs.loc[runs["workload"].isin(workloads_without_misses()), "run_id"]
    return l1_stalls(misses[~misses["run"].isin(unread)]).reset_index(drop=True)


def listed_functions(misses: pd.DataFrame) -> pd.DataFrame:
    """(run, symbol) of every kernel function with at least LISTED_SHARE of
    its run's L1 stall cycles."""
    stalls = l1_stalls(misses)
    per_function = stalls[stalls["symbol"] != ""].groupby(["run", "symbol"])["cycles"].sum()
    total = stalls.groupby("run")["cycles"].sum()
    share = per_function / total.reindex(per_function.index.get_level_values("run")).to_numpy()
    return share[share >= LISTED_SHARE].index.to_frame(index=False)


def functions(rows: pd.DataFrame):
    """A cycle profile's rows grouped by function: a function is its symbol
    in its space, so code without a symbol is summed apart in the kernel
    and in user space."""
    return rows.groupby([rows["run"], rows["symbol"], rows["pc"] >= KERNEL_START], sort=False)


def slim_cycles(cycles: pd.DataFrame, inlined: pd.DataFrame | None = None) -> pd.DataFrame:
    """The cycle profile slimmed (the module's docstring says how); the
    instructions of `inlined` (run, pc) keep their own rows."""
    keys = ["run", "pc", "symbol", "offset"]
    counted = [c for c in cycles.columns if c not in keys and c not in CYCLES_SUMMED_OVER]
    per_insn = cycles.groupby(keys, as_index=False, sort=True, dropna=False)[counted].sum()
    share = functions(per_insn)["cycles"].transform("sum") / \
        per_insn.groupby("run")["cycles"].transform("sum")
    listed = (per_insn["symbol"] != "") & (share >= CYCLES_LISTED_SHARE)
    if inlined is not None and len(inlined):
        kept = pd.MultiIndex.from_arrays([inlined["run"].astype(str),
                                          inlined["pc"].astype("uint64")])
        listed |= pd.MultiIndex.from_arrays([per_insn["run"].astype(str),
                                             per_insn["pc"].astype("uint64")]).isin(kept)
    rest = functions(per_insn[~listed])
    summed = pd.concat([rest[keys].first(), rest[counted].sum()], axis=1)
    return pd.concat([per_insn[listed], summed.reset_index(drop=True)],
                     ignore_index=True).sort_values(["run", "pc"], ignore_index=True)


SAMPLED_SUMMED = ["cycles", "share", "micro_ops", "micro_op_share", "counted_micro_ops"]


def slim_sampled_cycles(sampled: pd.DataFrame) -> pd.DataFrame:
    by_function = functions(sampled.sort_values(["run", "pc"], ignore_index=True))
    slim = pd.concat([by_function[["run", "pc", "symbol", "offset", "windows"]].first(),
                      by_function[SAMPLED_SUMMED].sum(min_count=1)],
                     axis=1).reset_index(drop=True)
    slim["cycles_per_micro_op"] = slim["cycles"] / slim["micro_ops"]
    slim["source_line"] = ""
    for column in (c for c in schema.SAMPLED_CYCLES if c not in slim.columns):
        slim[column] = float("nan")         # an interval, which does not sum
    return schema.conform(slim.sort_values(["run", "pc"], ignore_index=True),
                          schema.SAMPLED_CYCLES, "sampled_cycles")


def slim_instructions(instructions: pd.DataFrame, misses: pd.DataFrame) -> pd.DataFrame:
    kept = instructions.merge(listed_functions(misses), on=["run", "symbol"], how="inner",
                              sort=False)
    return kept[INSTRUCTION_COLUMNS]


def kernel_inlined(results: Results, cycles: pd.DataFrame) -> pd.DataFrame:
    """The inlined table (results/schema.py): the kernel instructions of
    each run's cycle profile that are in one of INLINED_FUNCTIONS, compiled
    there or inlined (one addr2line per run), and of those the ones in
    ZONE_LOOKUP (C9's word read)."""
    rows = []
    for run, mine in cycles.groupby("run", sort=True):
        chains = inline_chains(results, str(run), mine["pc"].unique())
        rows += [{"run": run, "pc": pc, "function": function}
                 for pc, chain in sorted(chains.items()) if set(chain) & set(INLINED_FUNCTIONS)
                 for function in (*INLINED_FUNCTIONS, ZONE_LOOKUP) if function in chain]
    return schema.conform(pd.DataFrame(rows, columns=list(schema.INLINED)), schema.INLINED,
                          "inlined")


def slim(source: Path, target: Path, claims_only: bool = False) -> dict[str, tuple[int, int]]:
    """Every table of the gathered results in source, slimmed, into target
    (which may be source), with claims_only to what the claims read;
    {table: (rows before, rows after)}."""
    _check_gathered(source)
    tables = {p.stem: pq.read_table(p) for p in sorted(Path(source).glob("*.parquet"))}
    slimmed = dict(tables)
    if "misses" in tables:
        misses = tables["misses"].to_pandas()
        kept = slim_misses(misses)
        if claims_only:
            kept = claims_misses(kept, tables["runs"].to_pandas())
        slimmed["misses"] = _table(kept)
        if "instructions" in tables:
            slimmed["instructions"] = _table(
                slim_instructions(tables["instructions"].to_pandas(), misses))
    if "cycles" in tables:
        cycles = tables["cycles"].to_pandas()
        # Made for gathered results, as code is (slim ones have code): slim
        # results made before the table existed are left without it.
        if "inlined" not in tables and "code" not in tables:
            slimmed["inlined"] = _table(kernel_inlined(Results(Path(source)), cycles))
        inlined = slimmed["inlined"].to_pandas() if "inlined" in slimmed else None
        slimmed["cycles"] = _table(slim_cycles(cycles, inlined))
    if "sampled_cycles" in tables:
        slimmed["sampled_cycles"] = _table(
            slim_sampled_cycles(tables["sampled_cycles"].to_pandas()))
    if "coherence" in tables:
        slimmed["coherence"] = _table(slim_coherence(tables["coherence"].to_pandas()))
    slimmed.pop("gem5_misses_raw", None)
    if "instructions" not in tables and "code" not in tables:
        slimmed["code"] = _table(kernel_code(Results(Path(source))))
    target = outputs.make_dir(Path(target))
    compression = {"compression": "zstd", "compression_level": 19}
    for name in sorted(slimmed):
        if name != "runs":
            with outputs.replacing(target / f"{name}.parquet") as partial:
                pq.write_table(slimmed[name], partial, **compression)
    for left_out in (p for p in target.glob("*.parquet") if p.stem not in slimmed):
        left_out.unlink()       # a table slimming leaves out, from an earlier slimming
    # runs.parquet last, sealed, as gathering writes it.
    sealed.write_index(target, "runs.parquet", slimmed["runs"], **compression)
    return {name: (tables[name].num_rows if name in tables else 0, slimmed[name].num_rows)
            for name in slimmed}


def merge(sources: list[Path], target: Path, replace: bool = False) -> None:
    """The gathered results of every source in target, as one: each
    table's rows of all of them (a column that one source's table lacks,
    such as those slimming sums over, is null in its rows), runs.parquet
    last and sealed.  A run in two sources is refused, or with replace
    taken from the last source that has it (runs made again, say with
    more repeats, replacing those committed)."""
    read = []
    for source in sources:
        _check_gathered(source)
        read.append({p.stem: pq.read_table(p) for p in sorted(Path(source).glob("*.parquet"))})
    run_ids = [set(t["runs"].column("run_id").to_pylist()) for t in read]
    tables: dict[str, list[pa.Table]] = {}
    for i, source_tables in enumerate(read):
        later = set().union(*run_ids[i + 1:])
        if (twice := sorted(run_ids[i] & later)) and not replace:
            raise HotlineError(f"run {twice[0]} is in more than one of "
                               f"{', '.join(map(str, sources))}: merge results of different "
                               "runs (or, to take it from the last, --replace)")
        for name, table in source_tables.items():
            column = "run_id" if name == "runs" else "run"
            if later and column in table.column_names:
                table = table.filter(pc.invert(pc.is_in(table[column],
                                                        pa.array(sorted(later)))))
            tables.setdefault(name, []).append(table)
    # The code and inlined tables are made by slimming, from the kernels'
    # builds, for gathered results: merged with slim ones, which have them,
    # they are made here for the gathered sources' runs (whose kernels'
    # builds must be in the cache), and kept as they are for the rest.
    if any("code" in t for t in read):
        for i, source_tables in enumerate(read):
            if "code" not in source_tables:
                made = _made_tables(sources[i], source_tables, set().union(*run_ids[i + 1:]))
                for name, table in made.items():
                    tables.setdefault(name, []).append(table)
    for made in ("code", "inlined"):
        if len(tables.get(made, [])) < len(sources):
            tables.pop(made, None)      # slimming makes it again, for every run
    merged = {name: pa.concat_tables(parts, promote_options="permissive")
              for name, parts in tables.items()}
    target = outputs.make_dir(Path(target))
    for name in sorted(merged):
        if name != "runs":
            with outputs.replacing(target / f"{name}.parquet") as partial:
                pq.write_table(merged[name], partial)
    sealed.write_index(target, "runs.parquet", merged["runs"])


def _made_tables(source: Path, tables: dict[str, pa.Table], later: set[str]) -> dict:
    """The code table (and, with a cycle profile, the inlined table) that
    slimming makes, for the runs of the gathered results in source that no
    later source replaces."""
    results = Results(Path(source))
    runs = set(results.ok["run_id"]) - later
    made = {}
    if "instructions" not in tables:
        made["code"] = _table(kernel_code(results, runs))
    if "cycles" in tables:
        cycles = tables["cycles"].to_pandas()
        made["inlined"] = _table(kernel_inlined(results, cycles[cycles["run"].isin(runs)]))
    return made


def runs_of_spec(spec_path: Path, results: Path, target: Path) -> None:
    """The gathered results in results with only the runs the experiment
    spec at spec_path plans, in target: a committed directory whose spec
    has changed (a workload made longer, say) without the runs of its
    earlier version."""
    from hotline.experiment.planning import load_spec, plan
    _check_gathered(results)
    planned = pa.array(sorted({run.run_id for run in plan(load_spec(Path(spec_path)))}))
    target = outputs.make_dir(Path(target))
    runs = pq.read_table(Path(results) / "runs.parquet")
    for path in sorted(Path(results).glob("*.parquet")):
        if path.stem != "runs":
            table = pq.read_table(path)
            if "run" in table.column_names:
                table = table.filter(pc.is_in(table["run"], planned))
            with outputs.replacing(target / path.name) as partial:
                pq.write_table(table, partial)
    sealed.write_index(target, "runs.parquet", runs.filter(pc.is_in(runs["run_id"], planned)))


def _check_gathered(source: Path) -> None:
    """source's tables are a gathered experiment's, as its seal lists them;
    one line saying what is not otherwise."""
    if not (Path(source) / "runs.parquet").is_file():
        raise HotlineError(f"{source} has no runs.parquet: give a gathered results directory")
    if problem := sealed.index_breach(source, "runs.parquet"):
        raise HotlineError(f"{problem}; slim the results as they were gathered (./hotline "
                           "run SPEC gathers them anew)")


def _table(frame: pd.DataFrame) -> pa.Table:
    """As gathering writes tables: no index, no pandas metadata."""
    return pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)


def notebook_outputs(results_dir: Path) -> dict[str, list]:
    """{notebook: every output of every code cell} of the notebooks executed
    against a copy of results_dir, with what differs between two executions
    of the same notebook on the same results taken out: the directory's path,
    and a pandas Styler's random table id and address."""
    import nbformat

    from hotline.analysis.notebooks import analyse

    def same_every_time(text: str) -> str:
        return re.sub(r"T_[0-9a-f]{5}|at 0x[0-9a-f]+", "ID", text.replace(str(copy), "RESULTS"))

    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "results"
        shutil.copytree(results_dir, copy)
        outputs = {}
        for name, page in analyse(copy).items():
            executed = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
            outputs[name] = [[same_every_time(o.text) if o.output_type == "stream" else
                              {k: same_every_time(str(v)) for k, v in o.get("data", {}).items()}
                              for o in cell.get("outputs", [])]
                             for cell in executed.cells if cell.cell_type == "code"]
    return outputs


def claim_checks(results_dir: Path) -> dict[str, list[str]]:
    """{claim: its verdict, figure, reason and control} checked on results_dir."""
    from hotline.analysis.claims import check_all
    return {c.claim: [c.verdict, c.measured, c.reason,
                      f"{c.control.design}: {c.control.verdict}" if c.control else ""]
            for c in check_all(Results(results_dir))}


def main(argv: list[str]) -> int:
    claims_only, replace = "--claims" in argv, "--replace" in argv
    argv = [a for a in argv if a not in ("--claims", "--replace")]
    spec = None
    if "--spec" in argv:
        at = argv.index("--spec")
        spec, argv = argv[at + 1:at + 2], argv[:at] + argv[at + 2:]
        if not spec:
            print("slim: --spec needs the experiment spec whose runs to keep", file=sys.stderr)
            return 2
    if len(argv) < 2:
        print(__doc__.rsplit("\n\n", 1)[-1].strip(), file=sys.stderr)
        return 2
    sources, target = [Path(a) for a in argv[:-1]], Path(argv[-1])
    with tempfile.TemporaryDirectory() as scratch:
        if spec:
            kept = [Path(scratch) / f"spec{i}" for i in range(len(sources))]
            for source, copy in zip(sources, kept):
                if status := guarded(lambda: runs_of_spec(Path(spec[0]), source, copy)):
                    return status
            sources = kept
        source = sources[0]
        if len(sources) > 1:
            source = Path(scratch) / "merged"
            if status := guarded(lambda: merge(sources, source, replace)):
                return status
        return _slim_and_compare(source, target, claims_only)


def install(trial: Path, target: Path) -> None:
    """The tables of the slimmed directory trial in target, as they are,
    their seal and runs.parquet last (the seal lists every table's bytes,
    which a copy keeps); target's tables that trial lacks removed first."""
    target = outputs.make_dir(Path(target))
    tables = {p.name for p in trial.glob("*.parquet")}
    (target / "runs.parquet").unlink(missing_ok=True)   # not valid while the others change
    for left_out in (p for p in target.glob("*.parquet") if p.name not in tables):
        left_out.unlink()
    for name in sorted(tables - {"runs.parquet"}) + [sealed.INDEX_SEAL, "runs.parquet"]:
        with outputs.replacing(target / name) as partial:
            shutil.copyfile(trial / name, partial)


def _slim_and_compare(source: Path, target: Path, claims_only: bool) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        trial = Path(scratch) / "slim"
        rows = {}
        if status := guarded(lambda: rows.update(slim(source, trial, claims_only))):
            return status
        for name, (before, after) in rows.items():
            print(f"{name}.parquet: {before} rows -> {after}")
        compare = claim_checks if claims_only else notebook_outputs
        full, slimmed = compare(source), compare(trial)
        differing = 0
        for name, cells in full.items():
            same = cells == slimmed[name]
            differing += not same
            what = "verdict, figure, reason and control" if claims_only else \
                f"{sum(map(len, cells))} outputs of {len(cells)} code cells"
            print(f"{name}: {what}: {'the same' if same else 'DIFFERENT'} on the slim results")
        if differing:
            print(f"slim: {target} left as it was: the slim tables change what is read of them",
                  file=sys.stderr)
            return 1
        return guarded(lambda: install(trial, target))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
