"""Every run of a spec in one place, for the notebooks: in the experiment's
results directory,

  runs.parquet   one row per planned run: what it was (variant, workload,
                 scale, parameters, system, repeat, mode, quantum, phase,
                 interleave), how it ended
                 (status ok / failed / not run, the failure's reason), where
                 its directory, guest log and step log are (relative to the
                 experiment's directory), its key, wall time, the guest's
                 summary and the whole manifest (both as JSON text)
  NAME.parquet   each results table (misses, instructions, ...) of the
                 successful runs, concatenated; its `run` column is runs'
                 `run_id`

runs.parquet is written last: when it is there, the tables beside it are
complete.
"""

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hotline import outputs, sealed
from hotline.console import say
from hotline.errors import HotlineError, first_line
from hotline.experiment import load_spec, other_conditions, plan, run_conditions
from hotline.hashing import hash_json, short
from hotline.specs import load_system
from hotline.records import manifest as run_record
from hotline.records.done import read_record, set_aside
from hotline.records.layout import INDEX
from hotline.simulate import get_backend


def index(spec_path: Path, out_dir: Path) -> pd.DataFrame:
    spec = load_spec(spec_path)
    backend = get_backend(spec.backend)
    rows = []
    for run in plan(spec):
        planned = short(hash_json(run_conditions(run, spec, load_system(run.system))))
        record = read_record(out_dir, run.run_id,
                             lambda manifest: other_conditions(manifest, planned)) or {}
        manifest = None
        if record.get("directory"):
            try:
                manifest = run_record.read(out_dir / record["directory"]).raw
            except HotlineError:
                pass  # a failed run's: its record says why it failed
        guest = (manifest or {}).get("guest") or {}
        # As the run had them (its manifest), not as the spec says them;
        # none for a setting the backend does not have.
        settings = ((manifest or {}).get("inputs") or {}).get("backend") or {}
        recorded = (lambda name: backend.recorded(settings, name)) if manifest else \
            (lambda name: None)
        rows.append({
            "run_id": run.run_id, "variant": run.variant, "workload": run.workload,
            "scale": run.scale, "params": json.dumps(dict(run.params), sort_keys=True),
            "system": run.system, "repeat": run.repeat, "mode": backend.mode(spec),
            # The vCPU turns' bound, the repeat's phase (0: none) and how the
            # model saw the turns (docs/specs.md).
            "quantum": recorded("quantum"), "phase": recorded("phase"),
            "interleave": recorded("interleave"),
            "backend": spec.backend,
            "status": record.get("status", "not run"), "failure": record.get("failure"),
            "wall_seconds": (manifest or {}).get("wall_seconds"),
            "key": (manifest or {}).get("key"), "created": (manifest or {}).get("created"),
            "path": record.get("directory"), "guest_log": record.get("guest_log"),
            "step_log": record.get("step_log"),
            "summary": json.dumps(guest.get("summary"), sort_keys=True)
            if guest.get("summary") is not None else None,
            "manifest": json.dumps(manifest, sort_keys=True) if manifest else None,
        })
    # Typed even where every value is missing (no failures: no reasons).
    text = ["run_id", "variant", "workload", "scale", "params", "system", "mode", "interleave",
            "backend",
            "status", "failure", "key", "created", "path", "guest_log", "step_log", "summary",
            "manifest"]
    return pd.DataFrame(rows).astype({**{c: "string" for c in text}, "repeat": "int64",
                                      "quantum": "Int64", "phase": "Int64",
                                      "wall_seconds": "float64"})


class _Damaged(Exception):
    """A run's table that could not be read while gathering."""
    def __init__(self, run_id: str, problem: str):
        super().__init__(problem)
        self.run_id, self.problem = run_id, problem


def concatenate(out_dir: Path, frame: pd.DataFrame) -> dict[str, int]:
    """Each table name found in the successful runs' directories, written as
    one file; {name: rows}.  Streamed run by run, so a sweep's tables need
    not fit in memory together."""
    sources: dict[str, list[tuple[str, Path]]] = {}
    for row in frame[frame["status"] == "ok"].itertuples():
        for path in sorted((out_dir / row.path).glob("*.parquet")):
            sources.setdefault(path.stem, []).append((row.run_id, path))
    written = {}
    for name, parts in sorted(sources.items()):
        schema = _unified_schema(name, parts)
        rows = 0
        with outputs.replacing(out_dir / f"{name}.parquet") as partial, \
                pq.ParquetWriter(partial, schema) as writer:
            for run_id, path in parts:
                try:
                    table = _with_run(pq.read_table(path), run_id)
                except (OSError, pa.ArrowException) as e:
                    raise _Damaged(run_id, f"{path}: not a readable Parquet table "
                                           f"({first_line(e)})") from None
                # A column another run's table has and this one lacks is null here.
                for field in schema:
                    if field.name not in table.column_names:
                        table = table.append_column(field, pa.nulls(table.num_rows, field.type))
                try:
                    writer.write_table(table.select(schema.names).cast(schema))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise HotlineError(f"{path}: its columns do not match the other runs' "
                                       f"{name} tables: {e}; run the experiment again "
                                       "with --rerun to make them all anew") from None
                rows += table.num_rows
        written[name] = rows
    return written


def _unified_schema(name: str, parts: list[tuple[str, Path]]) -> pa.Schema:
    """One schema for every run's table `name`: the union of their columns,
    each column's type wide enough for all of them."""
    schema = None
    for _, path in parts:
        own = _with_run(pq.read_schema(path), None).remove_metadata()
        try:
            schema = own if schema is None else pa.unify_schemas(
                [schema, own], promote_options="permissive")
        except pa.ArrowException as e:
            raise HotlineError(f"{path}: its columns do not match the other runs' {name} "
                               f"tables ({first_line(e)}); run the experiment again with "
                               "--rerun to make them all anew") from None
    return schema.remove_metadata()


def _with_run(item, run_id: str | None):
    """A table (or schema) with the run column first, as every results
    table has it; tables written without one get it here."""
    if "run" in (item.names if isinstance(item, pa.Schema) else item.column_names):
        return item
    if isinstance(item, pa.Schema):
        return pa.schema([pa.field("run", pa.string()), *item])
    return item.add_column(0, "run", pa.array([run_id] * item.num_rows, pa.string()))


def gather(spec_path: Path, out_dir: Path) -> pd.DataFrame:
    while True:
        frame = index(spec_path, out_dir)
        try:
            written = concatenate(out_dir, frame)
            break
        except _Damaged as e:
            # Gathered again without it; the next sweep makes it again.
            set_aside(out_dir, e.run_id, e.problem)
    # A table no run has any more is not left behind from an earlier gather.
    for stale in out_dir.glob("*.parquet"):
        if stale.stem not in written and stale.name != INDEX:
            stale.unlink()
    sealed.write_index(out_dir, INDEX, pa.Table.from_pandas(frame, preserve_index=False))
    counts = frame["status"].value_counts().to_dict()
    say(f"gathered {len(frame)} run(s) ({', '.join(f'{n} {s}' for s, n in counts.items())}) "
        f"into {out_dir / INDEX}" +
        "".join(f"; {name}.parquet {rows} rows" for name, rows in written.items()))
    return frame
