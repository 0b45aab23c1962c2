"""Misses per instruction from gem5's packet traces.

hotline's gem5 config puts a CommMonitor below each core's L1D and below each
core's L2 (configs/gem5/hotline_gem5/), each with one trace of the requests
that cross it and one of the responses.  A demand request leaving a cache is
that cache's miss (or upgrade); it carries the PC of the instruction that
caused it (the cache's miss packet keeps the CPU's request).  Its response,
matched by (line address, requestor) in order, gives the miss's latency as
seen from that boundary: ticks from request to response, turned into core
cycles.

The result is the raw frame of hotline's attribution step (columns RAW):
cpu, pc, kind, data (a guest virtual line address, 0 for fetches and for
user-space instructions), level (L1D or L2), cause, count, cycles.

What gem5 does not say, and hotline does not guess:
- cause: classic caches do not classify misses; only an upgrade (a write to a
  line held shared, an UpgradeReq) is known, as "upgrade"; every other
  miss has cause "" (no compulsory/capacity/conflict/coherence split).
- data: packets below a cache carry the line's address, not the access's.
  Where the run has core-side traces (a monitor between each core and its
  L1D, requests only), a miss's own address is that of the latest request
  of the same core, PC and line at or before the miss: the access that
  missed.  Without them a miss names its line.  Addresses are then reduced
  as the QEMU plugin reduces them (docs/hotline-cache-format.md): a struct
  page to the same byte of pfn 0's, the kernel image exact, any other
  kernel address to its line (see physical_map for what can be named).
- requests without a PC (page-table walks, write-backs, prefetches,
  uncacheable accesses) are not misses of an instruction: they are counted
  in the summary, not in the frame.
"""

from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hotline.simulate.gem5.packet_trace import (
    CMD, FLAG_INST_FETCH, FLAG_LOCKED_RMW, FLAG_PREFETCH, FLAG_UNCACHEABLE, read_trace,
)
from hotline.simulate.gem5.physical_map import PhysicalMap

RAW = {"cpu": "int16", "pc": "uint64", "kind": "string", "data": "uint64", "level": "string",
       "cause": "string", "count": "int64", "cycles": "int64"}
USER_SPACE_END = 0x0000800000000000
KERNEL_IMAGE = 0xFFFFFFFF80000000

READS = {CMD[c] for c in ("ReadReq", "ReadSharedReq", "ReadCleanReq", "LoadLockedReq",
                          "LockedRMWReadReq")}
WRITES = {CMD[c] for c in ("ReadExReq", "UpgradeReq", "SCUpgradeReq", "WriteLineReq",
                           "WriteReq", "StoreCondReq", "LockedRMWWriteReq", "SwapReq")}
UPGRADES = {CMD[c] for c in ("UpgradeReq", "SCUpgradeReq")}
WRITEBACKS = {CMD[c] for c in ("WritebackDirty", "WritebackClean", "WriteClean", "CleanEvict")}
PREFETCHES = {CMD[c] for c in ("SoftPFReq", "SoftPFExReq", "HardPFReq")}


@dataclass(frozen=True)
class Monitor:
    """One traced boundary: the core whose packets cross it and the level
    whose misses they are."""
    cpu: int
    level: str
    requests: Path
    responses: Path | None


@dataclass
class Summary:
    """What the traces held inside the regions, besides the misses."""
    misses: int = 0
    matched_responses: int = 0
    without_pc: int = 0
    writebacks: int = 0
    prefetches: int = 0
    uncacheable: int = 0
    resolved: int = 0       # misses given their access's own address (core-side trace)
    unresolved: int = 0     # misses whose access the core-side trace did not show
    other: dict[str, int] = field(default_factory=dict)


def in_regions(tick: int, regions: list[tuple[int, int | None]]) -> bool:
    return any(begin <= tick and (end is None or tick < end) for begin, end in regions)


def classify(cmd: int, flags: int) -> str | None:
    """The kind of a demand miss ("read", "write", "rmw", "fetch"), or None
    for a request that is not one."""
    if cmd in WRITEBACKS or cmd in PREFETCHES or flags & (FLAG_PREFETCH | FLAG_UNCACHEABLE):
        return None
    if cmd not in READS and cmd not in WRITES:
        return None
    if flags & FLAG_INST_FETCH:
        return "fetch"
    if flags & FLAG_LOCKED_RMW:
        return "rmw"
    return "write" if cmd in WRITES else "read"


def data_address(kind: str, pc: int, paddr: int, physical: PhysicalMap,
                 line_bytes: int = 64) -> int:
    """The data key of a miss at physical address paddr, as the QEMU plugin
    forms it: 0 for fetches and user space; a struct page's byte as the
    same byte of pfn 0's struct page; a kernel image address exactly; any
    other kernel address as its line."""
    if kind == "fetch" or pc < USER_SPACE_END:
        return 0
    vaddr = physical.virtual(paddr)
    if physical.in_vmemmap(vaddr):
        return physical.vmemmap_base + (vaddr - physical.vmemmap_base) % \
            physical.struct_page_size
    if vaddr >= KERNEL_IMAGE:
        return vaddr
    return vaddr - vaddr % line_bytes


@dataclass
class _Miss:
    cpu: int
    level: str
    pc: int
    kind: str
    cause: str
    tick: int
    paddr: int          # the line's, until the core-side trace names the access's
    ticks: int = 0      # latency, once its response is matched


def aggregate(monitors: list[Monitor], regions: list[tuple[int, int | None]],
              physical: PhysicalMap, clock_hz: float,
              core_traces: dict[int, Path] | None = None,
              line_bytes: int = 64) -> tuple[pd.DataFrame, Summary]:
    """The raw misses frame of the packets inside the regions, and a summary.
    core_traces: per CPU, the trace of its requests to its L1D, if recorded."""
    misses: list[_Miss] = []
    summary = Summary()
    tick_freq = 10**12  # gem5's default; each trace's header says
    for monitor in monitors:
        header, packets = read_trace(monitor.requests)
        tick_freq = header.tick_freq
        outstanding: dict[tuple[int, int], deque] = defaultdict(deque)
        for p in _inside(packets, regions):
            kind = classify(p.cmd, p.flags)
            if kind is None:
                _count_other(p, summary)
                continue
            if not p.HasField("pc"):
                summary.without_pc += 1
                continue
            miss = _Miss(monitor.cpu, monitor.level, p.pc, kind,
                         "upgrade" if p.cmd in UPGRADES else "", p.tick, p.addr)
            misses.append(miss)
            summary.misses += 1
            outstanding[(p.addr, p.pkt_id)].append(miss)
        if monitor.responses is not None and outstanding:
            _match_responses(monitor.responses, outstanding, summary)
    for cpu, path in (core_traces or {}).items():
        _resolve_addresses([m for m in misses if m.cpu == cpu and m.kind != "fetch"], path,
                           line_bytes, summary)
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])   # key: [count, ticks]
    for m in misses:
        key = (m.cpu, m.pc, m.kind, data_address(m.kind, m.pc, m.paddr, physical, line_bytes),
               m.level, m.cause)
        counts[key][0] += 1
        counts[key][1] += m.ticks
    rows = [(*key, count, round(ticks * clock_hz / tick_freq) if ticks else 0)
            for key, (count, ticks) in counts.items()]
    frame = pd.DataFrame(rows, columns=list(RAW)).astype(RAW)
    return frame.sort_values(["cpu", "level", "pc", "kind", "data"]).reset_index(drop=True), \
        summary


def _inside(packets, regions: list[tuple[int, int | None]]):
    """The packets inside the regions; a trace is in tick order, so reading
    stops after the last region's end."""
    last_end = max((end for _, end in regions if end is not None), default=None)
    open_ended = any(end is None for _, end in regions)
    for p in packets:
        if last_end is not None and not open_ended and p.tick >= last_end:
            return
        if in_regions(p.tick, regions):
            yield p


def _count_other(p, summary: Summary) -> None:
    if p.cmd in WRITEBACKS:
        summary.writebacks += 1
    elif p.cmd in PREFETCHES or p.flags & FLAG_PREFETCH:
        summary.prefetches += 1
    elif p.flags & FLAG_UNCACHEABLE:
        summary.uncacheable += 1
    else:
        name = _cmd_name(p.cmd)
        summary.other[name] = summary.other.get(name, 0) + 1


def _match_responses(path: Path, outstanding: dict, summary: Summary) -> None:
    """Add each response's latency to the oldest outstanding request of the
    same line and requestor that it follows."""
    _, responses = read_trace(path)
    left = sum(len(q) for q in outstanding.values())
    for r in responses:
        queue = outstanding.get((r.addr, r.pkt_id))
        if not queue or queue[0].tick > r.tick:
            continue
        miss = queue.popleft()
        miss.ticks += r.tick - miss.tick
        summary.matched_responses += 1
        left -= 1
        if not left:
            break


def _resolve_addresses(misses: list[_Miss], core_trace: Path, line_bytes: int,
                       summary: Summary) -> None:
    """Give each of one core's misses the address of the access that took
    it: the latest request from the core to its L1D with the same PC and
    line at or before the miss's tick.  Only (PC, line) pairs that missed
    are remembered while the core's trace streams by."""
    if not misses:
        return
    wanted = {(m.pc, m.paddr) for m in misses}
    misses = sorted(misses, key=lambda m: m.tick)
    last: dict[tuple[int, int], int] = {}
    i = 0
    _, requests = read_trace(core_trace)
    for r in requests:
        while i < len(misses) and misses[i].tick < r.tick:
            i = _resolve(misses, i, last, summary)
        if i == len(misses):
            break
        if not r.HasField("pc"):
            continue
        pair = (r.pc, r.addr - r.addr % line_bytes)
        if pair in wanted:
            last[pair] = r.addr
    while i < len(misses):
        i = _resolve(misses, i, last, summary)


def _resolve(misses: list[_Miss], i: int, last: dict, summary: Summary) -> int:
    m = misses[i]
    if (addr := last.get((m.pc, m.paddr))) is not None:
        m.paddr = addr
        summary.resolved += 1
    else:
        summary.unresolved += 1
    return i + 1


def _cmd_name(cmd: int) -> str:
    names = {v: k for k, v in CMD.items()}
    return names.get(cmd, f"cmd{cmd}")


def monitors(trace_dir: Path, cpus: int, l1d_name: str, l2_name: str) -> list[Monitor]:
    """The traced boundaries of a run, as hotline's config names their files."""
    found = []
    for cpu in range(cpus):
        for level, name in (("L1D", l1d_name), ("L2", l2_name)):
            stem = trace_dir / name.format(cpu=cpu)
            requests = stem.with_name(stem.name + ".req.trc.gz")
            responses = stem.with_name(stem.name + ".resp.trc.gz")
            found.append(Monitor(cpu, level, requests,
                                 responses if responses.exists() else None))
    return found
