"""Run directories made by hand for tests, as experiment.execute() leaves
them: the tables first, then a manifest that lists each with its size and
content hash (sealed.describe), which done.damage() checks."""

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa

from hotline import sealed


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
