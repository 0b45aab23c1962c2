"""Which data object and field a kernel virtual address belongs to:

- struct page: the vmemmap array (layout.json of the build: vmemmap_base,
  sizeof(struct page) and its fields; a union's first-declared member names
  the bytes it overlaps);
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
    kernel-other."""
    if not field:
        return obj
    return f"{obj}{field}" if field.startswith("+") else f"{obj}.{field}"


def announced_objects(guest_log: str) -> list[DynamicObject]:
    return [DynamicObject(name, int(start, 16), int(size, 16))
            for name, start, size in ANNOUNCEMENT.findall(guest_log)]


class ObjectMap:
    def __init__(self, layout: dict, symbolizer: Symbolizer, dynamic: list[DynamicObject]):
        self.page_size = layout["sizeof"]
        self.vmemmap_base = int(layout["symbols"]["vmemmap_base"], 16)
        self.page_fields = sorted((f["offset"], f["offset"] + f["size"], f["name"])
                                  for f in layout["fields"] if f["primary"])
        self.symbolizer = symbolizer
        self.dynamic = dynamic

    @classmethod
    def for_kernel(cls, kernel_dir: Path, guest_log: str) -> "ObjectMap":
        layout = json.loads(read_text(kernel_dir / "layout.json"))
        return cls(layout, Symbolizer(kernel_dir / "vmlinux"), announced_objects(guest_log))

    def page_field(self, offset: int) -> str:
        for start, end, name in self.page_fields:
            if start <= offset < end:
                return name
        return f"+{offset}"

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
