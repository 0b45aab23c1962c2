"""Reading hotline-cache.out (format: docs/hotline-cache-format.md) into
DataFrames, one per record type, addresses as integers.

The file names its own vocabulary: its header lists the plugin's names of
the access kinds and of the cache outcomes (spelled once, in C), the `insn`
record's outcome columns are named from that list, and every kind and
outcome in a record must be one of them.  Its last line counts the records
of each type: a file without it, or whose counts disagree with what it
holds, was cut short (a full disk, a killed QEMU) and is refused."""

import io
from pathlib import Path

import pandas as pd

VERSION = 4
MAGIC = "# hotline-cache "
# The fields of each record type after its name, in order; the `insn`
# record's outcome counts follow its fields here (insn_columns).
RECORDS = {
    "roi": ["cpu", "instructions"],
    "insn": ["pc", "kind", "bytes", "accesses", "cycles"],
    "miss": ["cpu", "pc", "kind", "data", "l1", "l2", "l3", "count", "cycles"],
    "stolen": ["cpu", "pc", "data", "thief_cpu", "thief_pc", "count"],
    "rapw": ["cpu", "store_pc", "load_pc", "count"],
    "turns": ["cpu", "log2", "turns", "instructions"],
}
LEVELS = ("l1", "l2", "l3")
HEX = {"pc", "data", "thief_pc", "store_pc", "load_pc"}
KIND_FIELDS = {"kind"}                # fields holding a name from the header's `kinds`
OUTCOME_FIELDS = set(LEVELS)          # fields holding a name from the header's `outcomes`
TEXT = {"bytes"} | KIND_FIELDS | OUTCOME_FIELDS
DECLARATIONS = ("kinds", "outcomes")
REDO = "redo the run (./hotline run SPEC --rerun)"


class FormatError(ValueError):
    pass


def insn_columns(outcomes: list[str]) -> list[str]:
    """The `insn` record's columns: its fields, then the count of each
    outcome at each level, as l1_hit, l2_compulsory, ..."""
    return [*RECORDS["insn"], *(f"{level}_{o}" for level in LEVELS for o in outcomes)]


def read(path: Path) -> dict[str, pd.DataFrame]:
    """The records of one output, a frame per type; also "options" (the
    plugin's options as given), "kinds" and "outcomes" (the header's
    names, in the plugin's enum order).

    Each record is kept as its line, and each type's lines parsed at once by
    pandas' CSV reader: a seed-scale output (1.2 GB) held as lists of field
    strings took 12.6 GB, and two runs ending together on a 24 GB host were
    killed for it."""
    rows: dict[str, list[str]] = {name: [] for name in RECORDS}
    with open(path) as f:
        header = f.readline()
        if not header.startswith(MAGIC) or header[len(MAGIC):].split()[:1] != [str(VERSION)]:
            raise FormatError(f"{path}: not a hotline-cache version {VERSION} output "
                              f"(first line {header.rstrip()[:40]!r})")
        options = header.split()[3:]
        declared = {}
        columns = dict(RECORDS)
        end = None
        seen = 0
        for number, line in enumerate(f, start=2):
            if not line.endswith("\n"):
                raise FormatError(f"{path}:{number}: cut short in the middle of a line; "
                                  f"the plugin's output is incomplete: {REDO}")
            if end is not None:
                raise FormatError(f"{path}:{number}: a line after the end marker "
                                  f"{line[:60]!r}: {REDO}")
            if line.startswith("#"):
                name, *values = line[1:].split() or [""]
                if name == "end":
                    end = _end_marker(path, number, line)
                    continue
                if seen or name not in DECLARATIONS or name in declared:
                    raise FormatError(f"{path}:{number}: unexpected header line {line[:60]!r}")
                declared[name] = values
                if name == "outcomes":
                    columns["insn"] = insn_columns(values)
                continue
            if not seen:
                _check_declared(path, declared)
            seen += 1
            kind, tab, record = line.partition("\t")
            names = columns.get(kind)
            if names is None or not tab or record.count("\t") != len(names) - 1:
                raise FormatError(f"{path}:{number}: malformed record {line[:60]!r}")
            rows[kind].append(record)
    if end is None:
        raise FormatError(f"{path}: no end marker: the plugin's output is incomplete "
                          f"(a full disk, or QEMU killed while writing it): {REDO}")
    _check_declared(path, declared)
    got = {name: len(records) for name, records in rows.items()}
    if end != got:
        wrong = ", ".join(f"{name} {end.get(name)} announced, {got.get(name)} read"
                          for name in sorted(set(end) | set(got)) if end.get(name) != got.get(name))
        raise FormatError(f"{path}: record counts disagree with the end marker ({wrong}): "
                          f"the plugin's output is damaged: {REDO}")
    frames = {name: _frame(path, rows[name], columns[name], declared) for name in RECORDS}
    frames["options"] = options
    frames.update(declared)
    return frames


def _check_declared(path: Path, declared: dict[str, list[str]]) -> None:
    lacking = [d for d in DECLARATIONS if d not in declared]
    if lacking:
        raise FormatError(f"{path}: the header does not name the {' and '.join(lacking)}")


def _end_marker(path: Path, number: int, line: str) -> dict[str, int]:
    """`# end roi=4 insn=12 ...`: the number of records of each type."""
    try:
        counts = {name: int(count) for name, count in
                  (field.split("=") for field in line.split()[2:])}
    except ValueError:
        counts = None
    if counts is None or set(counts) != set(RECORDS):
        raise FormatError(f"{path}:{number}: malformed end marker {line.rstrip()[:80]!r}")
    return counts


def _frame(path: Path, rows: list[str], columns: list[str],
           declared: dict[str, list[str]]) -> pd.DataFrame:
    """One record type's lines (without the type) as a frame: hex fields as
    integers, names checked against the header, counts as int64."""
    text = "".join(rows)
    rows.clear()        # the lines go before the frame is made: not both at once
    # Names as categories, then as objects that share the few strings (one
    # string a cell took most of the memory); hex as text, converted below.
    types = {c: "category" if c in TEXT - {"bytes"} else object if c in HEX or c in TEXT
             else "int64" for c in columns}
    frame = pd.read_csv(io.StringIO(text), sep="\t", header=None, names=columns, dtype=types,
                        na_filter=False, quoting=3, engine="c") if text else \
        pd.DataFrame([], columns=columns, dtype=object)
    del text
    for column in columns:
        if column in TEXT:
            frame[column] = frame[column].astype(object)
        if column in HEX:
            frame[column] = frame[column].map(lambda v: int(v, 16)).astype("uint64")
        elif column in KIND_FIELDS or column in OUTCOME_FIELDS:
            names = declared["kinds" if column in KIND_FIELDS else "outcomes"]
            unknown = set(frame[column]) - set(names)
            if unknown:
                raise FormatError(f"{path}: {column} {sorted(unknown)[0]!r} is none of the "
                                  f"header's {' '.join(names)}")
        elif column not in TEXT:
            frame[column] = frame[column].astype("int64")
    return frame


def disagreements(frames: dict) -> list[str]:
    """Where an output's counts do not add up, as sentences (none: they do).
    Per instruction and kind, the accesses are the sum of the outcomes at
    each level; and each outcome count is what the `miss` records hold for
    it, plus the L1 hits (a hit at L1, not reached beyond it).  This holds
    whatever the interleaving, so it is the check of a parallel-mode run."""
    insn, miss, outcomes = frames["insn"], frames["miss"], frames["outcomes"]
    key = ["pc", "kind"]
    wrong = []
    for level in LEVELS:
        total = insn[[f"{level}_{o}" for o in outcomes]].sum(axis=1)
        for row in insn[total != insn["accesses"]].head(3).itertuples():
            wrong.append(f"insn {row.pc:#x} {row.kind}: {row.accesses} accesses, but its "
                         f"{level} outcomes add up to {total[row.Index]}")
        from_misses = (miss.groupby([*key, level])["count"].sum().unstack(fill_value=0)
                       .reindex(columns=outcomes, fill_value=0))
        expected = from_misses.reindex(pd.MultiIndex.from_frame(insn[key]), fill_value=0)
        hits = insn.set_index(key)["l1_hit"]
        expected[outcomes[1] if level == "l1" else outcomes[0]] += hits
        counted = insn.set_index(key)[[f"{level}_{o}" for o in outcomes]]
        counted.columns = outcomes
        differ = (counted != expected).any(axis=1)
        for (pc, kind) in counted.index[differ][:3]:
            wrong.append(f"insn {pc:#x} {kind}: its {level} outcomes "
                         f"{counted.loc[(pc, kind)].tolist()} are not its miss records' "
                         f"{expected.loc[(pc, kind)].tolist()} and its L1 hits")
    orphans = set(miss.groupby(key).size().index) - set(insn.set_index(key).index)
    for pc, kind in sorted(orphans)[:3]:
        wrong.append(f"miss records of {pc:#x} {kind}, which has no insn record")
    return wrong
