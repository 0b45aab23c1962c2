"""The tables hotline's gem5 extension writes (configs/gem5/extras/: the
miss profile, the cycle profile, the retire counts): a first line
"# hotline WHAT VERSION: key=value ...", then comma-separated rows under a
line of column names.  Each reader says what it expects of its table; this
reads one and refuses, in one line naming the file, what is not that."""

import io
from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError
from hotline.inputs import read_text

TABLE_LIMIT = 16 << 30
REBUILD = "hotline and its gem5 extension differ; rebuild gem5 with this checkout's " \
          "configs/gem5/extras"


def read(path: Path, magic: str, what: str, fields: tuple[str, ...], columns: list[str],
         dtype) -> tuple[dict[str, int], pd.DataFrame]:
    """The table's header fields named in `fields` (integers) and its rows,
    typed by dtype (a type, or one per column); refused if its first line
    is not magic, a field is missing, a field or a row does not parse, or
    its columns are not `columns`."""
    # A long region's miss profile can pass read_text's bound for text
    # files; these are the extension's own, in the run's directory.
    header, _, body = read_text(path, limit=TABLE_LIMIT).partition("\n")
    if not header.startswith(magic):
        raise HotlineError(f"{path}: not a hotline {what} (first line {header[:40]!r})")
    try:
        given = dict(field.split("=", 1) for field in header[len(magic):].split())
        meta = {name: int(given[name]) for name in fields}
        rows = pd.read_csv(io.StringIO(body), dtype=dtype)
    except (ValueError, KeyError) as e:
        raise HotlineError(f"{path}: damaged {what} ({e}); run it again") from None
    if list(rows.columns) != list(columns):
        raise HotlineError(f"{path}: columns {list(rows.columns)}, not {list(columns)}: "
                           f"{REBUILD}")
    return meta, rows
