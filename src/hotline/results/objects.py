"""Which data object and field a kernel virtual address belongs to:

- struct page: the vmemmap array (layout.json of the build: vmemmap_base,
  sizeof(struct page) and its fields; where a union's members overlap the
  byte, the member the instruction's source names, members.py);
- dynamic objects a kernel variant announces at boot, one line each in the
  kernel log (docs/kernel-counters.md):
      hotline-object: name=IDENT start=0xHEX size=0xHEX
- static kernel objects: the symbol table (address and size);
- anything else in the kernel: "kernel-other"; below the kernel's half of
  the address space: "user".
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from hotline.inputs import read_text
from hotline.kernel.source_text import SourceText
from hotline.results.members import SEPARATOR, Members, member_from_source
from hotline.results.symbols import Symbolizer

KERNEL_START = 0xffff800000000000
VMEMMAP_BYTES = 1 << 40     # the vmemmap region with 4-level paging
ANNOUNCEMENT = re.compile(
    r"hotline-object: name=(\w+) start=0x([0-9a-fA-F]+) size=0x([0-9a-fA-F]+)")


@dataclass(frozen=True)
class DynamicObject:
    name: str
    start: int
    size: int


def describe(obj: str, field: str) -> str:
    """An (object, field) pair as one name: struct page.flags, jiffies+0x0,
    struct page.(lru | compound_head), kernel-other."""
    if not field:
        return obj
    if SEPARATOR in field:
        return f"{obj}.({field})"
    return f"{obj}{field}" if field.startswith("+") else f"{obj}.{field}"


def announced_objects(guest_log: str) -> list[DynamicObject]:
    return [DynamicObject(name, int(start, 16), int(size, 16))
            for name, start, size in ANNOUNCEMENT.findall(guest_log)]


class ObjectMap:
    def __init__(self, layout: dict, symbolizer: Symbolizer, dynamic: list[DynamicObject],
                 kernel_dir: Path | None = None):
        self.page_size = layout["sizeof"]
        self.vmemmap_base = int(layout["symbols"]["vmemmap_base"], 16)
        self.page_members = Members(layout["fields"])
        self.symbolizer = symbolizer
        self.dynamic = dynamic
        # The build whose source names the members of unions (None: none).
        self.kernel_dir = kernel_dir

    @classmethod
    def for_kernel(cls, kernel_dir: Path, guest_log: str) -> "ObjectMap":
        layout = json.loads(read_text(kernel_dir / "layout.json"))
        return cls(layout, Symbolizer(kernel_dir / "vmlinux"), announced_objects(guest_log),
                   kernel_dir)

    def page_field(self, offset: int) -> str:
        """The member at this byte of struct page, or its union's members."""
        return self.page_members.name(offset)

    def source_texts(self, pcs) -> dict[int, list[str | None]]:
        """The source text of each kernel pc's lines, through the functions
        inlined at it, innermost first (None for a line without text)."""
        chains = self.symbolizer.inline_lines([int(pc) for pc in pcs])
        if self.kernel_dir is None:
            return {pc: [] for pc in chains}
        source = SourceText.of_build(self.kernel_dir)
        try:
            return {pc: [source.line(at) for at in chain] for pc, chain in chains.items()}
        finally:
            source.close()

    def name_members(self, frame, pc_column: str = "pc"):
        """frame with each struct page union in its field column narrowed to
        the member its instruction's source names (members.py)."""
        unions = (frame["object"] == "struct page") & frame["field"].str.contains(
            SEPARATOR, regex=False)
        if not unions.any():
            return frame
        texts = self.source_texts(frame.loc[unions, pc_column].unique())
        frame = frame.copy()
        frame.loc[unions, "field"] = [
            member_from_source(field, texts[int(pc)])
            for pc, field in zip(frame.loc[unions, pc_column], frame.loc[unions, "field"])]
        return frame

    def locate(self, address: int) -> tuple[str, str]:
        """(object, field) of a data address; 0 stands for user memory."""
        if address < KERNEL_START:
            return "user", ""
        if 0 <= address - self.vmemmap_base < VMEMMAP_BYTES:
            return "struct page", self.page_field((address - self.vmemmap_base) % self.page_size)
        for o in self.dynamic:
            if o.start <= address < o.start + o.size:
                return o.name, f"+{address - o.start:#x}"
        if symbol := self.symbolizer.data_object(address):
            return symbol.name, f"+{address - symbol.start:#x}"
        return "kernel-other", ""
