"""A folder of tables sealed by a listing of each table's size and content
hash, written when the tables were made: a run's directory (its manifest's
"files") and a gathered experiment (runs.parquet's metadata).  Whoever
reuses the tables later checks them against the listing first, so that a
table damaged in the middle (its Parquet footer intact), truncated, swapped
for another run's or added by hand is refused, not read as a result."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hotline import outputs
from hotline.errors import first_line
from hotline.hashing import hash_file


def describe(directory: Path, exclude: tuple[str, ...] = ()) -> dict[str, dict]:
    """{file name: {bytes, sha256}} of every table (*.parquet) in directory
    but those named in exclude."""
    return {p.name: {"bytes": p.stat().st_size, "sha256": hash_file(p)}
            for p in sorted(Path(directory).glob("*.parquet")) if p.name not in exclude}


def breach(directory: Path, files: dict, exclude: tuple[str, ...] = ()) -> str | None:
    """What in directory differs from the listing `files` (describe()'s), or
    None: a table not listed, one missing, of another size, of other
    content, or not readable as Parquet at all."""
    directory = Path(directory)
    for table in sorted(directory.glob("*.parquet")):
        if table.name not in files and table.name not in exclude:
            return f"{table}: not one of the tables that were made there (not listed)"
    for name, facts in sorted(files.items()):
        table = directory / name
        facts = facts if isinstance(facts, dict) else {}
        try:
            size = table.stat().st_size
            if size != facts.get("bytes"):
                return (f"{table}: {size} bytes where {facts.get('bytes')} were written: "
                        "changed since")
            if hash_file(table) != facts.get("sha256"):
                return f"{table}: its content is not what was written (sha256 differs)"
            pq.read_schema(table)
        except FileNotFoundError:
            return f"{table}: missing (listed as made)"
        except (OSError, pa.ArrowException) as e:
            return f"{table}: not a readable Parquet table ({first_line(e)})"
    return None


# A gathered experiment's seal: runs.parquet, written last, lists in its
# schema's metadata the tables beside it.
INDEX_SEAL = b"hotline.files"


def write_index(directory: Path, name: str, table: pa.Table, **write_options) -> Path:
    """The index `name` (runs.parquet) of the tables in directory, sealed
    with their listing; written last, so that when it is there they are."""
    files = describe(directory, exclude=(name,))
    metadata = {**(table.schema.metadata or {}),
                INDEX_SEAL: json.dumps(files, sort_keys=True).encode()}
    with outputs.replacing(Path(directory) / name) as partial:
        pq.write_table(table.replace_schema_metadata(metadata), partial, **write_options)
    return Path(directory) / name


def index_breach(directory: Path, name: str) -> str | None:
    """What makes the tables beside the index `name` not those it was
    written with (breach()), or that it has no seal at all, or None."""
    path = Path(directory) / name
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as e:
        return f"{path}: not a readable Parquet table ({first_line(e)})"
    if INDEX_SEAL not in metadata:
        return f"{path}: lists no table with its size and content hash (gathered by an " \
               "older hotline)"
    try:
        files = json.loads(metadata[INDEX_SEAL])
    except ValueError:
        return f"{path}: its list of tables is damaged"
    return breach(directory, files, exclude=(name,))
