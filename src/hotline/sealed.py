"""A folder of tables sealed by a listing of each table's size and content
hash, written when the tables were made: a run's directory (its manifest's
"files") and a gathered experiment (runs.seal.json, beside runs.parquet).  Whoever
reuses the tables later checks them against the listing first, so that a
table damaged in the middle (its Parquet footer intact), truncated, swapped
for another run's or added by hand is refused, not read as a result."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hotline import outputs
from hotline.errors import HotlineError, first_line
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


# A gathered experiment's seal: a listing of every table of the folder,
# the index `runs.parquet` among them, in a file beside them.  The index
# cannot list its own bytes, and a value changed inside it (a run's status,
# a workload's name) would otherwise be read as a result.
INDEX_SEAL = "runs.seal.json"


def write_index(directory: Path, name: str, table: pa.Table, **write_options) -> Path:
    """The index `name` (runs.parquet) of the tables in directory, and the
    seal listing them all with it.  The index is renamed into place last,
    after its seal: when it is there, so are the tables and the seal."""
    directory = Path(directory)
    files = describe(directory, exclude=(name,))
    with outputs.replacing(directory / name) as partial:
        pq.write_table(table, partial, **write_options)
        files[name] = {"bytes": partial.stat().st_size, "sha256": hash_file(partial)}
        outputs.write_text(directory / INDEX_SEAL, json.dumps(files, sort_keys=True, indent=1))
    return directory / name


def seal_index(directory: Path, name: str) -> Path:
    """The seal of an index and the tables beside it as they are now, for
    results whose bytes were checked some other way (a git commit)."""
    files = describe(directory)
    if name not in files:
        raise HotlineError(f"{Path(directory) / name}: missing; nothing to seal")
    return outputs.write_text(Path(directory) / INDEX_SEAL,
                              json.dumps(files, sort_keys=True, indent=1))


# A seal is a few hundred bytes a table: one larger than this is not one.
_SEAL_LIMIT = 1 << 20


def index_breach(directory: Path, name: str) -> str | None:
    """What makes the folder's tables, the index `name` among them, not
    those its seal lists (breach()), or that it has no readable seal, or
    None."""
    seal = Path(directory) / INDEX_SEAL
    regather = "gathered by an older hotline, or not by hotline"
    try:
        if not seal.is_file():
            return f"{seal}: missing, so nothing says the tables are those gathered ({regather})"
        if seal.stat().st_size > _SEAL_LIMIT:
            return f"{seal}: {seal.stat().st_size} bytes, too large to be a seal"
        files = json.loads(seal.read_text(encoding="utf-8"))
    except OSError as e:
        return f"{seal}: cannot be read ({e.strerror or e})"
    except ValueError:
        return f"{seal}: damaged (not the JSON listing it was written as)"
    if not isinstance(files, dict) or name not in files:
        return f"{seal}: does not list {name}"
    return breach(directory, files)
