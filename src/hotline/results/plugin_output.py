"""Reading hotline-cache.out (format: docs/hotline-cache-format.md) into
DataFrames, one per record type, addresses as integers."""

from pathlib import Path

import pandas as pd

OUTCOMES = ("-", "hit", "compulsory", "capacity", "conflict", "coherence", "upgrade")
RECORDS = {
    "roi": ["cpu", "instructions"],
    "insn": ["pc", "kind", "bytes", "accesses", "cycles",
             *(f"{level}_{o}" for level in ("l1", "l2", "l3") for o in OUTCOMES)],
    "miss": ["cpu", "pc", "kind", "data", "l1", "l2", "l3", "count", "cycles"],
    "stolen": ["cpu", "pc", "data", "thief_cpu", "thief_pc", "count"],
    "rapw": ["cpu", "store_pc", "load_pc", "count"],
}
HEX = {"pc", "data", "thief_pc", "store_pc", "load_pc"}
TEXT = {"kind", "bytes", "l1", "l2", "l3"}
FORMAT = "# hotline-cache 2"


class FormatError(ValueError):
    pass


def read(path: Path) -> dict[str, pd.DataFrame]:
    rows: dict[str, list[list[str]]] = {name: [] for name in RECORDS}
    with open(path) as f:
        header = f.readline().rstrip("\n")
        if not header.startswith(FORMAT):
            raise FormatError(f"{path}: not a hotline-cache version 2 output "
                              f"(first line {header[:40]!r})")
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            columns = RECORDS.get(fields[0])
            if columns is None or len(fields) != len(columns) + 1:
                raise FormatError(f"{path}:{number}: malformed record {line[:60]!r}")
            rows[fields[0]].append(fields[1:])
    frames = {}
    for name, columns in RECORDS.items():
        frame = pd.DataFrame(rows[name], columns=columns, dtype=object)
        for column in columns:
            if column in HEX:
                frame[column] = frame[column].map(lambda v: int(v, 16)).astype("uint64")
            elif column not in TEXT:
                frame[column] = frame[column].astype("int64")
        frames[name] = frame
    frames["options"] = header[len(FORMAT):].split()
    return frames
