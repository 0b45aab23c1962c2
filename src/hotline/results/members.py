"""Which member of a union an access to struct page touched.

struct page is mostly unions: the bytes at offset 8 are `lru` to the page
cache, `compound_head` to every PageTail()/page_folio() test, `buddy_list`
to the page allocator, and more.  The bytes say nothing of which one the
code meant; the code does.  So the member is named from the instruction:
from its source line, and outwards through the functions inlined at it
(addr2line -i), the first line that names exactly one of the members that
overlap the byte, as `->member` or `.member` (what perf's data-type
profiling reads from DWARF type flow, here from the text the compiler was
given).  Where no line does (the source is gone, or the member is reached
through a macro or a cast), the union is named as what it is: its members
that code names, "lru | buddy_list | ... | compound_head | ...".
"""

import re
from dataclasses import dataclass

SEPARATOR = " | "


def is_padding(name: str) -> bool:
    """Members that exist to hold bytes, never named by code (__filler,
    _pt_pad_1, _compound_pad_2)."""
    return name.startswith("_") and ("pad" in name or "filler" in name)


@dataclass(frozen=True)
class Member:
    name: str
    offset: int
    size: int


class Members:
    """The members of a struct overlapping each byte, from layout.json's
    fields (every alternative of every union, in declaration order)."""

    def __init__(self, fields: list[dict]):
        self.fields = [Member(f["name"], f["offset"], f["size"]) for f in fields
                       if f["size"] > 0]

    def at(self, offset: int) -> list[Member]:
        """The members holding byte `offset`, padding left out unless that is
        all there is."""
        here = [m for m in self.fields if m.offset <= offset < m.offset + m.size]
        named = [m for m in here if not is_padding(m.name)]
        return named or here

    def name(self, offset: int) -> str:
        """The byte's member, or its union as "a | b | ..." where several
        overlap it; "+OFFSET" where none does."""
        here = self.at(offset)
        return SEPARATOR.join(m.name for m in here) if here else f"+{offset}"

    def offset_of(self, name: str) -> int | None:
        """Where a name that name() gave starts (a union's: its first
        member's)."""
        first = name.split(SEPARATOR)[0]
        if first.startswith("+") and first[1:].isdigit():
            return int(first[1:])
        return next((m.offset for m in self.fields if m.name == first), None)


def named_in(line: str, candidates: list[str]) -> list[str]:
    """The candidates `line` names as members (->name or .name)."""
    return [c for c in candidates if re.search(rf"(?:->|\.)\s*{re.escape(c)}\b", line)]


def member_from_source(union: str, texts: list[str | None]) -> str:
    """The member of `union` (as Members.name gives it) that an access
    touched, from the source lines of its instruction, innermost first: the
    first line naming exactly one of the union's members; the union itself
    where none does."""
    candidates = union.split(SEPARATOR)
    if len(candidates) == 1:
        return union
    for text in texts:
        if text is None:
            continue
        named = named_in(text, candidates)
        if len(named) == 1:
            return named[0]
        if named:       # a line naming several cannot tell which was read
            break
    return union
