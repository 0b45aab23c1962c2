"""hotline's gem5 miss profile (configs/gem5/extras/miss_profile.hh: one
table per region, counted inside gem5 from the caches' probe points) into
the raw misses frame (RAW) and the coherence misses by thief (STOLEN) that
hotline's attribution step takes from every backend.

Each table's first line says what the region held besides the misses (the
MSHR's hits, misses without an instruction, uncacheable accesses,
invalidations it could not explain, the L1D upgrades the core's own L2
granted, which are not misses, the deferred writes the L1D sent again,
which are, misses still in flight at the region's end); its rows are misses
per (cpu, level, pc, kind, the access's virtual address, cause, thief), with
their count and the ticks from miss to fill.  The causes are docs/causes.md's.

The access's virtual address becomes the miss's data key as the QEMU plugin
forms it (docs/hotline-cache-format.md): a struct page's byte the same byte
of pfn 0's struct page (vmemmap_base and the struct's size from the kernel's
layout.json), a kernel image address exact, any other kernel address its
line, and 0 for fetches and for user-space instructions (the extension keeps
no address for those).
"""

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError
from hotline.inputs import read_text
from hotline.results import schema
from hotline.simulate.gem5 import extension_table

# The raw misses frame, as attribution takes it (results/attribute.py).
RAW = {"cpu": "int16", "pc": "uint64", "kind": "string", "data": "uint64", "level": "string",
       "cause": "string", "count": "int64", "cycles": "int64"}
# The coherence misses by thief, as the QEMU plugin's stolen records.
STOLEN = {"cpu": "int64", "pc": "uint64", "data": "uint64", "thief_cpu": "int64",
          "thief_pc": "uint64", "count": "int64"}

USER_SPACE_END = 0x0000800000000000
KERNEL_IMAGE = 0xFFFFFFFF80000000
# Struct pages of a 4-level x86-64 kernel: vmemmap_base plus at most 1 TiB.
VMEMMAP_SPAN = 1 << 40

MAGIC = "# hotline miss profile 2:"
# What every version's first line begins with; a table of another version
# counts and classifies otherwise.
FAMILY = "# hotline miss profile "
COLUMNS = ["cpu", "level", "pc", "kind", "vaddr", "cause", "thief_cpu", "thief_pc", "count",
           "ticks"]
# The header's counts, summed over the regions into the run's summary.
COUNTS = ("mshr_hits", "without_pc", "uncacheable", "unexplained_invalidations",
          "own_l2_upgrades", "deferred_writes", "unfilled")
LEVELS = {"L1D", "L2"}


@dataclass(frozen=True)
class KernelLayout:
    """What naming a miss's data needs of the kernel: where its struct
    pages are (vmemmap) and how large one is."""
    vmemmap_base: int
    struct_page_size: int = 64


def kernel_layout(kernel_dir: Path) -> KernelLayout:
    """The layout of the kernel built in kernel_dir (its layout.json)."""
    path = kernel_dir / "layout.json"
    try:
        layout = json.loads(read_text(path))
        return KernelLayout(int(layout["symbols"]["vmemmap_base"], 16), int(layout["sizeof"]))
    except (OSError, KeyError, ValueError) as e:
        raise HotlineError(f"{path}: no vmemmap_base or sizeof ({e}); rebuild the kernel") \
            from None


def data_key(kind: str, pc: int, vaddr: int, layout: KernelLayout, line_bytes: int = 64) -> int:
    """The data key of a miss on kernel virtual address vaddr, as the QEMU
    plugin forms it: 0 for fetches and user space; a struct page's byte as
    the same byte of pfn 0's struct page; a kernel image address exactly;
    any other kernel address as its line."""
    if kind == "fetch" or pc < USER_SPACE_END:
        return 0
    if 0 <= vaddr - layout.vmemmap_base < VMEMMAP_SPAN:
        return layout.vmemmap_base + (vaddr - layout.vmemmap_base) % layout.struct_page_size
    if vaddr >= KERNEL_IMAGE:
        return vaddr
    return vaddr - vaddr % line_bytes


def read(path: Path) -> tuple[dict, pd.DataFrame]:
    """One region's table: its header's fields and its rows, refused with
    one line if it is not one."""
    try:
        meta, rows = extension_table.read(
            path, MAGIC, "miss profile", ("tick_frequency", "line_bytes", *COUNTS), COLUMNS, {
                "cpu": "int16", "level": "string", "pc": "uint64", "kind": "string",
                "vaddr": "uint64", "cause": "string", "thief_cpu": "int16",
                "thief_pc": "uint64", "count": "int64", "ticks": "uint64"})
    except HotlineError:
        _refuse_another_version(path)
        raise
    for column, known in (("level", LEVELS), ("kind", set(schema.KINDS)),
                          ("cause", set(schema.CAUSES))):
        unknown = set(rows[column].unique()) - known
        if unknown:
            raise HotlineError(f"{path}: unknown {column} {sorted(unknown)[0]!r}; "
                               f"{extension_table.REBUILD}")
    return meta, rows


def _refuse_another_version(path: Path) -> None:
    """Refuses, saying so, a table an extension of another version wrote."""
    try:
        with open(path, "rb") as f:
            first = f.readline(len(MAGIC)).decode("utf-8", "replace")
    except OSError:
        return
    if first.startswith(FAMILY) and not first.startswith(MAGIC):
        raise HotlineError(f"{path}: a miss profile of another version ({first!r}): "
                           f"{extension_table.REBUILD}") from None


def aggregate(paths: list[Path], layout: KernelLayout,
              clock_hz: float) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The raw misses frame (RAW) and the L1Ds' coherence misses by thief
    (STOLEN) of the regions' tables, and their header counts summed (with
    "misses")."""
    frames, summary = [], {key: 0 for key in ("misses", *COUNTS)}
    for path in paths:
        meta, rows = read(path)
        for key in COUNTS:
            summary[key] += meta[key]
        summary["misses"] += int(rows["count"].sum())
        line_bytes = meta["line_bytes"]
        rows["data"] = [data_key(kind, pc, vaddr, layout, line_bytes) for kind, pc, vaddr in
                        zip(rows["kind"], rows["pc"].tolist(), rows["vaddr"].tolist())]
        rows["cycles"] = rows["ticks"].astype("float64") * clock_hz / meta["tick_frequency"]
        frames.append(rows)
    rows = pd.concat(frames, ignore_index=True) if frames else \
        pd.DataFrame(columns=[*COLUMNS, "data", "cycles"])
    keys = ["cpu", "pc", "kind", "data", "level", "cause"]
    raw = rows.groupby(keys, as_index=False, sort=False).agg(count=("count", "sum"),
                                                             cycles=("cycles", "sum"))
    raw["cycles"] = raw["cycles"].round()
    raw = raw[list(RAW)].astype(RAW)
    # The coherence table is the L1Ds' (as the QEMU plugin's stolen records).
    stolen = rows[(rows["thief_cpu"] >= 0) & (rows["level"] == "L1D")].groupby(
        ["cpu", "pc", "data", "thief_cpu", "thief_pc"], as_index=False, sort=False)["count"].sum()
    stolen = stolen[list(STOLEN)].astype(STOLEN)
    return (raw.sort_values(["cpu", "level", "pc", "kind", "data"]).reset_index(drop=True),
            stolen.sort_values(list(STOLEN)[:-1]).reset_index(drop=True), summary)
