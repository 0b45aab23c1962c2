"""The report's tables, computed from a run's results tables (results/)."""

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa

from hotline.errors import HotlineError, first_line
from hotline.results.members import Members
from hotline.results.objects import describe
from hotline.results.schema import CAUSES, CYCLE_CAUSES, UNKNOWN_CAUSE
from hotline.results.symbols import Symbolizer, disassemble_bytes

# address:<TAB>bytes<TAB>instruction, as objdump -w writes them
_OBJDUMP_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(.*)$")


PAGE = "struct page"    # the tables' name of the struct page array's objects

# The columns of each results table that the report reads.
COLUMNS = {
    "misses": ["cpu", "pc", "space", "kind", "symbol", "offset", "source_line", "object", "field",
               "level", "cause", "count", "cycles"],
    "instructions": ["pc", "bytes", "kind", "accesses"],
    "coherence": ["cpu", "pc", "symbol", "offset", "object", "field", "thief_cpu", "thief_pc",
                  "thief_symbol", "thief_offset", "count"],
    "rapw": ["store_pc", "store_symbol", "store_offset", "load_pc", "load_symbol",
             "load_offset", "count"],
    "roi": ["instructions"],
    # gem5 O3 with hotline's extension (results/schema.py CYCLES)
    "cycles": ["pc", "samples", "cycles", *(f"cycles_{c}" for c in CYCLE_CAUSES)],
}
# The types of the columns that are not integers, for an absent table's empty frame.
DTYPES = {"cycles": "float64", **{f"cycles_{c}": "float64" for c in CYCLE_CAUSES},
          "bytes": "string", "kind": "string", "symbol": "string", "object": "string",
          "field": "string",
          "thief_symbol": "string", "store_symbol": "string", "load_symbol": "string"}


def read_table(path: Path, columns: list[str], fix: str) -> pd.DataFrame:
    """A results table with (at least) `columns`, or a one-line error naming
    the file, what is wrong with it and `fix`."""
    try:
        table = pd.read_parquet(path)
    except FileNotFoundError:
        raise HotlineError(f"{path}: missing; {fix}") from None
    except (OSError, ValueError, pa.ArrowException) as e:
        raise HotlineError(f"{path}: not a readable Parquet table ({first_line(e)}); {fix}") \
            from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise HotlineError(f"{path}: lacks the column(s) {', '.join(missing)} (written by "
                           f"another version of hotline?); {fix}")
    return table


@dataclass
class RunTables:
    misses: pd.DataFrame
    instructions: pd.DataFrame
    coherence: pd.DataFrame
    rapw: pd.DataFrame
    roi: pd.DataFrame
    cycles: pd.DataFrame
    # The tables the run's backend does not make (gem5: instructions,
    # coherence, rapw; QEMU and gem5 without O3 cores: cycles), present here
    # empty so that every section can be
    # computed; the report says which it could not fill.
    absent: frozenset[str] = frozenset()

    @classmethod
    def read(cls, run_dir: Path, fix: str = "make the run again",
             made: "set[str] | None" = None) -> "RunTables":
        """The run's tables; `made`: the names its manifest lists (None: all)."""
        made = set(COLUMNS) if made is None else made
        return cls(*(read_table(run_dir / f"{name}.parquet", columns, fix) if name in made
                     else pd.DataFrame({c: pd.Series(dtype=DTYPES.get(c, "int64"))
                                        for c in columns})
                     for name, columns in COLUMNS.items()),
                   absent=frozenset(set(COLUMNS) - made))


def _where(symbol: str, offset: int, pc: int) -> str:
    return f"{symbol}+{offset:#x}" if symbol else f"{pc:#x} (user)"


class Disassembly:
    """Instruction text by pc, from the run's vmlinux, fetched per function.
    Where the bytes the guest ran differ from the file's (alternatives,
    paravirt calls and static keys are patched at boot), the text is that of
    the bytes run, marked with a '*'."""

    def __init__(self, symbolizer: Symbolizer, instructions: pd.DataFrame):
        self.symbolizer = symbolizer
        self.ran = dict(zip(instructions["pc"], instructions["bytes"]))
        self.known: dict[int, str] = {}

    def _text(self, pc: int, file_bytes: str, text: str) -> str:
        ran = self.ran.get(pc)
        if ran and not file_bytes.startswith(ran) and not ran.startswith(file_bytes):
            return "* " + disassemble_bytes(pc, ran)
        return text

    def function(self, name: str) -> dict[int, str]:
        symbol = self.symbolizer.function_named(name)
        if symbol is None:
            return {}
        listing = {pc: self._text(pc, code, text) for pc, (code, text) in
                   self.symbolizer.disassemble(symbol.start, symbol.start + symbol.size).items()}
        self.known.update(listing)
        return listing

    def at(self, pc: int) -> str:
        if pc not in self.known:
            function = self.symbolizer.function(pc)
            if function is not None:
                self.function(function.name)
            elif pc in self.ran:
                self.known[pc] = disassemble_bytes(pc, self.ran[pc])
        return self.known.get(pc, "")


def by_cause(frame: pd.DataFrame, index: str | list[str]) -> pd.DataFrame:
    """count per index with one column per cause, and a column UNKNOWN_CAUSE
    only if some misses have none (gem5's classic caches give a cause only
    to upgrades)."""
    split = frame.pivot_table(index=index, columns="cause", values="count", aggfunc="sum",
                              fill_value=0, observed=True)
    unknown = [UNKNOWN_CAUSE] if split.get("", pd.Series(dtype="int64")).any() else []
    return split.rename(columns={"": UNKNOWN_CAUSE}).reindex(columns=[*CAUSES, *unknown],
                                                            fill_value=0)


def cause_split(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """count per key: misses, then one column per cause (by_cause)."""
    split = by_cause(frame, keys)
    split.insert(0, "misses", split.sum(axis=1))
    return split.reset_index()


def top_instructions(t: RunTables, level: str, n: int, disasm: Disassembly) -> pd.DataFrame:
    """The n instructions with most data misses at `level`: where, source
    line, instruction, misses, % of all data misses at that level, and the
    cause split."""
    at_level = t.misses[(t.misses["level"] == level) & (t.misses["kind"] != "fetch")]
    total = at_level["count"].sum()
    split = cause_split(at_level, ["pc", "symbol", "offset", "source_line", "kind"])
    split = split.groupby(["pc", "symbol", "offset", "source_line"], as_index=False).agg(
        kind=("kind", lambda k: "/".join(sorted(set(k)))),
        **{c: (c, "sum") for c in split.columns if c not in ("pc", "symbol", "offset",
                                                              "source_line", "kind")})
    top = split.sort_values(["misses", "pc"], ascending=[False, True]).head(n)
    objects = at_level.groupby(["pc", "object", "field"], as_index=False)["count"].sum()
    main_object = (objects.sort_values("count", ascending=False).drop_duplicates("pc")
                   .set_index("pc"))
    rows = []
    for r in top.itertuples(index=False):
        data = main_object.loc[r.pc] if r.pc in main_object.index else None
        rows.append({
            "where": _where(r.symbol, r.offset, r.pc),
            "source line": r.source_line,
            "instruction": disasm.at(r.pc),
            "kind": r.kind,
            "data": "" if data is None else describe(data["object"], data["field"]),
            "misses": r.misses,
            "%": 100 * r.misses / total if total else 0.0,
            **{c: getattr(r, c) for c in CAUSES},
        })
    return pd.DataFrame(rows)


def top_functions(t: RunTables, level: str, n: int) -> list[str]:
    kernel = t.misses[(t.misses["level"] == level) & (t.misses["symbol"] != "")]
    totals = kernel.groupby("symbol")["count"].sum().sort_values(ascending=False, kind="stable")
    return list(totals.index[:n])


def function_listing(t: RunTables, name: str, disasm: Disassembly) -> pd.DataFrame:
    """The seeds' oprofile tables: every instruction of the function that
    missed the L1D or the L2, with its count, its share of the function's L1D
    misses, its data misses in the L2, the instruction, and what it missed on."""
    mine = t.misses[(t.misses["symbol"] == name) & t.misses["level"].isin(["L1D", "L2"])
                    & (t.misses["kind"] != "fetch")]
    listing = disasm.function(name)
    l1 = mine[mine["level"] == "L1D"].groupby("pc")["count"].sum()
    l2 = mine[mine["level"] == "L2"].groupby("pc")["count"].sum()
    total = l1.sum()
    rows = []
    for pc in sorted(set(l1.index) | set(l2.index)):
        at_pc = mine[(mine["pc"] == pc) & (mine["level"] == "L1D")]
        causes = at_pc.groupby("cause")["count"].sum().sort_values(ascending=False)
        data = at_pc.groupby(["object", "field"])["count"].sum().sort_values(ascending=False)
        note = []
        if len(data):
            note.append(describe(*data.index[0]))
        if len(causes):
            note.append(", ".join(f"{c} {v}" for c, v in causes.items()))
        rows.append({"address": f"{pc:x}", "L1D": int(l1.get(pc, 0)),
                     "%": 100 * l1.get(pc, 0) / total if total else 0.0,
                     "L2": int(l2.get(pc, 0)), "instruction": listing.get(pc, ""),
                     "annotation": "; ".join(note)})
    return pd.DataFrame(rows)


def page_fields(t: RunTables) -> pd.DataFrame:
    """Misses on struct page by field and level, with the L1D cause split."""
    page = t.misses[t.misses["object"] == "struct page"]
    by_level = page.pivot_table(index="field", columns="level", values="count", aggfunc="sum",
                                fill_value=0)
    by_level = by_level.reindex(columns=[c for c in ("L1D", "L2", "L3") if c in by_level.columns])
    causes = cause_split(page[page["level"] == "L1D"], ["field"]).set_index("field")
    table = by_level.join(causes.drop(columns="misses"), how="left").fillna(0).astype("int64")
    return table.sort_values("L1D", ascending=False).reset_index()


def field_instructions(t: RunTables, field: str, n: int, disasm: Disassembly) -> pd.DataFrame:
    """Which instructions miss the L1D on struct page's `field`, and why."""
    misses = t.misses[(t.misses["object"] == "struct page") & (t.misses["field"] == field)
                      & (t.misses["level"] == "L1D")]
    split = cause_split(misses, ["pc", "symbol", "offset", "source_line", "kind"])
    split = split.sort_values(["misses", "pc"], ascending=[False, True]).head(n)
    return pd.DataFrame([{
        "where": _where(r.symbol, r.offset, r.pc), "source line": r.source_line,
        "instruction": disasm.at(r.pc), "kind": r.kind, "misses": r.misses,
        **{c: getattr(r, c) for c in CAUSES}} for r in split.itertuples(index=False)])


def thieves(t: RunTables, field: str, n: int) -> pd.DataFrame:
    """Coherence misses on struct page's `field`: whose write took the line
    away, and the field that write touches.  The coherence table names the
    victim's line, not the thief's byte, so the write's field is the one its
    own misses on struct page touched most (as c2c's thieves; "" if it never
    missed there): a write to another field of the same line is false
    sharing inside struct page."""
    c = t.coherence[(t.coherence["object"] == "struct page") & (t.coherence["field"] == field)]
    pairs = c.groupby(["pc", "symbol", "offset", "thief_pc", "thief_symbol", "thief_offset"],
                      as_index=False)["count"].sum()
    pairs = pairs.sort_values(["count", "pc", "thief_pc"], ascending=[False, True, True]).head(n)
    page = t.misses[t.misses["object"] == PAGE]
    touched = (page.groupby(["pc", "field"], as_index=False)["count"].sum()
               .sort_values(["count", "field"], ascending=[False, True], kind="stable")
               .drop_duplicates("pc").set_index("pc")["field"])
    return pd.DataFrame([{
        "missed at": _where(r.symbol, r.offset, r.pc),
        "stolen by the write at": _where(r.thief_symbol, r.thief_offset, r.thief_pc),
        "the write's field": (describe(PAGE, touched[r.thief_pc])
                              if r.thief_pc in touched.index else ""),
        "misses": r.count} for r in pairs.itertuples(index=False)],
        columns=["missed at", "stolen by the write at", "the write's field", "misses"])


def partial_writes(t: RunTables, n: int, disasm: Disassembly) -> pd.DataFrame:
    pairs = t.rapw.groupby(["store_pc", "store_symbol", "store_offset", "load_pc", "load_symbol",
                            "load_offset"], as_index=False)["count"].sum()
    pairs = pairs.sort_values(["count", "store_pc", "load_pc"],
                              ascending=[False, True, True]).head(n)
    return pd.DataFrame([{
        "store": _where(r.store_symbol, r.store_offset, r.store_pc),
        "store instruction": disasm.at(r.store_pc),
        "load": _where(r.load_symbol, r.load_offset, r.load_pc),
        "load instruction": disasm.at(r.load_pc), "events": r.count}
        for r in pairs.itertuples(index=False)])


def totals(t: RunTables) -> pd.DataFrame:
    """Accesses and misses per level and space, with misses per 1000 instructions."""
    instructions = int(t.roi["instructions"].sum())
    misses = t.misses.groupby(["level", "space"], as_index=False)[["count", "cycles"]].sum()
    misses["per 1k instructions"] = 1000 * misses["count"] / max(instructions, 1)
    return misses.rename(columns={"count": "misses", "cycles": "stall cycles"})


def page_layout(layout: dict) -> list[tuple[str, int, int]]:
    """struct page's fields as the tables name them (a union's first-declared
    member), (name, offset, size) in offset order, from the build's layout.json."""
    return sorted(((f["name"], f["offset"], f["size"]) for f in layout["fields"] if f["primary"]),
                  key=lambda f: f[1])


def page_boxes(layout: dict, names) -> dict[str, str]:
    """The field of page_layout() that holds each of these struct page
    field names (a union's member, or the union named whole, in the union's
    first-declared field; results/members.py)."""
    members, boxes = Members(layout["fields"]), {}
    for name in names:
        offset = members.offset_of(name)
        boxes[name] = next((f for f, start, size in page_layout(layout)
                            if offset is not None and start <= offset < start + size), name)
    return boxes


def page_field_misses(t: RunTables) -> pd.DataFrame:
    """Misses on struct page by field, level and cause."""
    page = t.misses[t.misses["object"] == "struct page"]
    return page.groupby(["field", "level", "cause"], as_index=False)["count"].sum()


def thief_matrix(t: RunTables, field: str, cpus: int) -> pd.DataFrame:
    """Coherence misses on struct page's `field`, CPU x CPU: row the CPU
    that missed, column the CPU whose write took the line."""
    c = t.coherence[(t.coherence["object"] == "struct page") & (t.coherence["field"] == field)]
    matrix = c.pivot_table(index="cpu", columns="thief_cpu", values="count", aggfunc="sum",
                           fill_value=0)
    return matrix.reindex(index=range(cpus), columns=range(cpus), fill_value=0).astype("int64")


def function_profile(t: RunTables, name: str) -> tuple[pd.DataFrame, pd.Series]:
    """Where in function `name` its data misses fall: the L1D misses per
    offset split by cause (one column per cause), and the L2 misses per offset."""
    mine = t.misses[(t.misses["symbol"] == name) & (t.misses["kind"] != "fetch")]
    l1d = by_cause(mine[mine["level"] == "L1D"], "offset")
    l2 = mine[mine["level"] == "L2"].groupby("offset")["count"].sum()
    return l1d, l2


# A branch or call (after prefixes such as cs, bnd, notrack) to an address.
# A branch or call (after prefixes such as cs, bnd, notrack) to an address.
_BRANCH_TARGET = re.compile(r"^((?:[a-z0-9]+ )*(?:j[a-z]+|call[a-z]*|loop[a-z]*|xbegin)\s+)"
                            r"0x([0-9a-f]+)$")
_COMMENT_ADDRESS = re.compile(r"# 0x([0-9a-f]+)$")
_ADDRESS_BITS = (1 << 64) - 1


def _objdump_blobs(blobs: list[bytes]) -> list[list[tuple[int, str, str]]]:
    """(offset, bytes in hex, instruction) of each blob, disassembled as
    x86-64 code from its first byte, with one objdump."""
    with tempfile.TemporaryDirectory(prefix="hotline-objdump-") as tmp:
        names = []
        for i, blob in enumerate(blobs):
            names.append(f"{tmp}/{i}.bin")
            Path(names[-1]).write_bytes(blob)
        out = subprocess.run(["objdump", "-D", "-w", "-b", "binary", "-m", "i386:x86-64",
                              *names], capture_output=True, text=True, check=True).stdout
    listings: list[list[tuple[int, str, str]]] = [[] for _ in blobs]
    current = None
    for line in out.splitlines():
        if line.endswith("file format binary"):
            current = int(Path(line.split(":")[0]).stem)
            continue
        m = _OBJDUMP_LINE.match(line)
        if m and current is not None:
            listings[current].append((int(m.group(1), 16), m.group(2).replace(" ", ""),
                                      " ".join(m.group(3).split())))
    return listings


def _at(text: str, offset: int, pc: int) -> str:
    """objdump's text of an instruction disassembled at `offset` of a blob,
    with its pc-relative targets moved to where it really is, pc."""
    def moved(address: str) -> str:
        return f"{(int(address, 16) - offset + pc) & _ADDRESS_BITS:#x}"
    text = _BRANCH_TARGET.sub(lambda b: b.group(1) + moved(b.group(2)), text)
    return _COMMENT_ADDRESS.sub(lambda c: "# " + moved(c.group(1)), text)


def disassemble_many(code: dict[int, str]) -> dict[int, str]:
    """{pc: instruction text} for many instructions' bytes ({pc: hex}, one
    whole instruction each) with one objdump: the instructions are laid end
    to end and disassembled together, then the pc-relative targets (branch
    and call targets, the address objdump notes after a %rip operand) are
    moved from the blob's offsets to the real pcs.  An instruction whose
    bytes do not decode as exactly one instruction gets "" (the tables hold
    one instruction per pc, so that means damaged bytes)."""
    pcs = sorted(code)
    blob, starts = bytearray(), {}
    for pc in pcs:
        starts[len(blob)] = pc
        blob += bytes.fromhex(code[pc])
    text = {pc: "" for pc in pcs}
    if not blob:
        return text
    for offset, hexbytes, insn in _objdump_blobs([bytes(blob)])[0]:
        pc = starts.get(offset)
        if pc is not None and len(hexbytes) == len(code[pc]):
            text[pc] = _at(insn, offset, pc)
    return text


def disassemble_blocks(blocks: list[tuple[int, bytes]]) -> list[dict[int, str]]:
    """{pc: instruction text} of each block of code (start address, bytes),
    with one objdump for all of them."""
    listings = _objdump_blobs([code for _, code in blocks])
    return [{start + offset: _at(insn, offset, start + offset)
             for offset, _, insn in listing}
            for (start, _), listing in zip(blocks, listings)]
