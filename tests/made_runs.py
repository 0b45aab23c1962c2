"""Run directories made by hand for tests, as experiment.execute() leaves
them: the tables first, then a manifest that lists each with its size and
content hash (sealed.describe), which done.damage() checks.  The sweep's
stand-in steps (sweep_stand_in.py) import it too: it imports nothing of
the tests."""

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa

from hotline import sealed
from hotline.experiment import load_spec, plan, run_conditions
from hotline.specs import load_system


def write_run(directory: Path, manifest: dict, tables: dict[str, pd.DataFrame]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_parquet(directory / f"{name}.parquet", index=False)
    manifest = {"run_id": directory.name, **manifest, "files": sealed.describe(directory)}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def write_gathered(directory: Path, runs: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> Path:
    """A gathered experiment as sweep/gather.py leaves it: the tables, then
    runs.parquet sealed with their sizes and hashes."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_parquet(directory / f"{name}.parquet", index=False)
    sealed.write_index(directory, "runs.parquet", pa.Table.from_pandas(runs, preserve_index=False))
    return directory


def inputs_of(run, spec) -> dict:
    """The part of a run's manifest "inputs" that a sweep compares with the
    run it plans (experiment.other_conditions), as execute() records it."""
    conditions = run_conditions(run, spec, load_system(run.system))
    return {"guest_image": {"root": conditions.pop("root")}, **conditions}


def planned_inputs(spec_path: Path, run_id: str) -> dict:
    """inputs_of the run of that id the spec plans."""
    spec = load_spec(spec_path)
    (run,) = [r for r in plan(spec) if r.run_id == run_id]
    return inputs_of(run, spec)
