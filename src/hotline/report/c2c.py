"""Shared cache lines, perf c2c style: every data line that took coherence
misses or upgrades, with, per offset, the instructions that missed on it
(reads, writes, locked RMWs), the CPUs that ran them, and the writes that
took the line away from them.

Where the tables place a line (results tables, results/schema.py):

- struct page: by field (layout.json's offsets); the lines of all pages are
  one line here, "struct page+0x0", since the question is which fields
  share a line, not which page (struct page is 64 bytes and the vmemmap
  array starts on a page, so with the 32- and 64-byte lines of the system
  specs a field's place in its line is its offset in struct page modulo
  the line);
- kernel image objects and the dynamic objects a variant announces: field
  "+0xOFF" from the object's start, whose address (System.map, the run's
  kernel log) gives the line's address; objects that share a line are one
  line, as in perf c2c.  The plugin keeps only the line of a dynamic
  object's access (docs/hotline-cache-format.md), so their offsets are
  line starts;
- "kernel-other" and "user": the tables keep no address, so each is one
  row standing for all its lines.

The offset column is the byte's place in its cache line (not in its
object): two objects at different offsets of one line are false sharing.
The line is the run's (its system spec's [caches] line_bytes).

The coherence table names the victim's line, not the thief's byte: a write
that took a line is shown with the field it usually touches (the most
frequent object.field of its own misses in that line, which for false
sharing is another object's or field's; else on the victim's object), when
it missed.
"""

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from hotline.results.members import SEPARATOR, Members
from hotline.results.objects import describe

SHARING_CAUSES = ("coherence", "upgrade")
WRITES = ("write", "rmw")
PAGE = "struct page"


@dataclass(frozen=True)
class Place:
    line: str          # the line's name: its address, or "struct page+0x0", or the object
    offset: int | None  # byte offset within the line (None: not known)


def _where(symbol: str, offset: int, pc: int) -> str:
    return f"{symbol}+{offset:#x}" if symbol else f"{pc:#x} (user)"


def _cpus(values) -> str:
    return ",".join(str(c) for c in sorted(set(int(v) for v in values)))


class SharedLines:
    """The shared lines of one run.

    misses, coherence: the run's results tables (schema columns).
    page_fields: struct page's (name, offset, size); line_bytes: the line size.
    starts: data object name -> start address (static and dynamic objects).
    text: pc -> instruction text, for the listings (optional).
    page_members: every member of struct page's unions, for the offsets of
    the names results/members.py gives (optional)."""

    def __init__(self, misses: pd.DataFrame, coherence: pd.DataFrame,
                 page_fields: list[tuple[str, int, int]], line_bytes: int,
                 starts: dict[str, int], text: Callable[[int], str] | None = None,
                 page_members: Members | None = None):
        self.line_bytes = line_bytes
        self.page_offsets = {name: offset for name, offset, _ in page_fields}
        self.page_members = page_members
        self.page_fields = page_fields
        self.starts = starts
        self.text = text or (lambda pc: "")
        self._places: dict[tuple[str, str], Place] = {}
        events = misses[(misses["level"] == "L1D") & misses["cause"].isin(SHARING_CAUSES)]
        self.events = self._placed(events.groupby(
            ["cpu", "pc", "symbol", "offset", "kind", "object", "field", "cause"],
            as_index=False)["count"].sum())
        self.thefts = self._placed(coherence.groupby(
            ["object", "field", "thief_cpu", "thief_pc", "thief_symbol", "thief_offset"],
            as_index=False)["count"].sum())
        # What each instruction touches, from all its misses: pc ->
        # [(object, field)], most missed first.
        touched = misses.groupby(["pc", "object", "field"], as_index=False)["count"].sum()
        touched = touched.sort_values(["count", "object", "field"],
                                      ascending=[False, True, True], kind="stable")
        self.touched: dict[int, list[tuple[str, str]]] = {}
        for pc, obj, field in zip(touched["pc"], touched["object"], touched["field"]):
            self.touched.setdefault(pc, []).append((obj, field))

    @classmethod
    def of_run(cls, run) -> "SharedLines":
        from hotline.report import tables as rt
        t = run.tables
        return cls(t.misses, t.coherence, rt.page_layout(run.layout), run.line_bytes,
                   run.object_starts, run.disassembly.at, Members(run.layout["fields"]))

    def place(self, obj: str, field: str) -> Place:
        key = (obj, field)
        if key not in self._places:
            self._places[key] = self._place(obj, field)
        return self._places[key]

    def _page_offset(self, field: str) -> int | None:
        """Where a struct page field the tables name starts in struct page."""
        offset = self.page_offsets.get(field)
        if offset is None and self.page_members is not None:
            offset = self.page_members.offset_of(field)   # a union's member
        if offset is None and field.startswith("+"):
            offset = int(field[1:], 0)
        return offset

    def _place(self, obj: str, field: str) -> Place:
        lb = self.line_bytes
        if obj == PAGE:
            offset = self._page_offset(field)
            if offset is None:
                return Place(PAGE, None)
            return Place(f"{PAGE}+{offset // lb * lb:#x}", offset % lb)
        if not field.startswith("+"):
            return Place(obj, None)
        offset = int(field[1:], 0)
        start = self.starts.get(obj)
        if start is None:   # not in the symbol table: as if line-aligned
            return Place(f"{obj}+{offset // lb * lb:#x}", offset % lb)
        return Place(f"{(start + offset) // lb * lb:#x}", (start + offset) % lb)

    def _placed(self, frame: pd.DataFrame) -> pd.DataFrame:
        places = [self.place(o, f) for o, f in zip(frame["object"], frame["field"])]
        return frame.assign(line=[p.line for p in places],
                            byte=[p.offset if p.offset is not None else -1 for p in places],
                            data=[describe(o, f) for o, f in zip(frame["object"], frame["field"])])

    def _line_fields(self, line: str, events: pd.DataFrame) -> str:
        if line.startswith(f"{PAGE}+"):
            # struct page's fields in the line, each by the members its
            # misses were attributed to (lru's bytes are compound_head to
            # most code), most first, or by its own name (where none was, or
            # only the union as a whole: "lru | buddy_list | ...").
            first = int(line.split("+")[1], 0)
            missed = events.groupby("field")["count"].sum().sort_values(ascending=False,
                                                                        kind="stable")
            members = [f for f in missed.index if SEPARATOR not in f]
            starts = {f: self._page_offset(f) for f in members}
            names = []
            for name, offset, size in self.page_fields:
                if offset < first + self.line_bytes and offset + size > first:
                    inside = [f for f in members
                              if starts[f] is not None and offset <= starts[f] < offset + size]
                    names += inside or [name]
            names += [f for f in members if f not in names]
            return ", ".join(names)
        data = events.groupby("data")["count"].sum().sort_values(ascending=False, kind="stable")
        return ", ".join(data.index)

    def lines(self) -> pd.DataFrame:
        """One row per line, most coherence misses + upgrades first: its
        objects and fields, coherence misses, upgrades, how many reading and
        writing instructions missed on it, the CPUs that did, and the write
        that took it most often."""
        rows = []
        for line, events in self.events.groupby("line", sort=False):
            thefts = self.thefts[self.thefts["line"] == line]
            thief = thefts.groupby(["thief_symbol", "thief_offset", "thief_pc"])["count"].sum()
            top = thief.sort_values(ascending=False, kind="stable")
            rows.append({
                "line": line,
                "fields": self._line_fields(line, events),
                "coherence": int(events.loc[events["cause"] == "coherence", "count"].sum()),
                "upgrade": int(events.loc[events["cause"] == "upgrade", "count"].sum()),
                "reading insns": events.loc[events["kind"] == "read", "pc"].nunique(),
                "writing insns": events.loc[events["kind"].isin(WRITES), "pc"].nunique(),
                "CPUs": _cpus(events["cpu"]),
                "taken most by": (f"{_where(*top.index[0])} ({int(top.iloc[0])})"
                                  if len(top) else ""),
            })
        table = pd.DataFrame(rows, columns=["line", "fields", "coherence", "upgrade",
                                            "reading insns", "writing insns", "CPUs",
                                            "taken most by"])
        table["total"] = table["coherence"] + table["upgrade"]
        return (table.sort_values(["total", "line"], ascending=[False, True], kind="stable")
                .drop(columns="total").reset_index(drop=True))

    def offsets(self, line: str, top: int | None = None) -> pd.DataFrame:
        """The line offset by offset: each instruction that missed on it
        (kind, CPUs, coherence misses, upgrades), and the writes that took
        it (their CPUs and how often); with top, only the top rows by
        events, still in offset order."""
        events = self.events[self.events["line"] == line]
        split = events.pivot_table(index=["byte", "data", "pc", "symbol", "offset", "kind"],
                                   columns="cause", values="count", aggfunc="sum",
                                   fill_value=0).reindex(columns=list(SHARING_CAUSES),
                                                         fill_value=0)
        cpus = events.groupby("pc")["cpu"].agg(_cpus)
        rows = [{"offset": _offset(byte), "data": data, "instruction": _where(symbol, off, pc),
                 "text": self.text(pc), "kind": kind, "CPUs": cpus[pc],
                 "coherence": int(r["coherence"]), "upgrade": int(r["upgrade"]),
                 "took the line": 0, "_byte": byte, "_n": int(r.sum())}
                for (byte, data, pc, symbol, off, kind), r in split.iterrows()]
        thefts = self.thefts[self.thefts["line"] == line]
        for (pc, symbol, off), group in thefts.groupby(["thief_pc", "thief_symbol",
                                                        "thief_offset"]):
            usual = self._usual(pc, group["object"].iloc[0], line)
            place = self.place(*usual) if usual else None
            byte = place.offset if place is not None and place.offset is not None else -1
            rows.append({"offset": _offset(byte),
                         "data": describe(*usual) if usual else "",
                         "instruction": _where(symbol, off, pc), "text": self.text(pc),
                         "kind": "write (thief)", "CPUs": _cpus(group["thief_cpu"]),
                         "coherence": 0, "upgrade": 0, "took the line": int(group["count"].sum()),
                         "_byte": byte, "_n": int(group["count"].sum())})
        table = pd.DataFrame(rows, columns=["offset", "data", "instruction", "text", "kind",
                                            "CPUs", "coherence", "upgrade", "took the line",
                                            "_byte", "_n"])
        table["_byte"] = table["_byte"].where(table["_byte"] >= 0, 1 << 62)
        if top is not None:
            table = table.sort_values("_n", ascending=False, kind="stable").head(top)
        return (table.sort_values(["_byte", "_n", "instruction"], ascending=[True, False, True],
                                  kind="stable")
                .drop(columns=["_byte", "_n"]).reset_index(drop=True))

    def _usual(self, pc: int, obj: str, line: str) -> tuple[str, str] | None:
        """What a write that took `line` (an access to obj) usually writes:
        the object and field its own misses touched most in that line (a
        false-sharing write is to another object or field of the line),
        else in obj; None if it missed on neither."""
        mine = self.touched.get(pc, [])
        here = [(o, f) for o, f in mine if self.place(o, f).line == line]
        same = [(o, f) for o, f in mine if o == obj]
        return (here or same or [None])[0]


def _offset(byte: int) -> str:
    return f"{byte:#x}" if byte >= 0 else "?"
