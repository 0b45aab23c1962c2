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
- data: packets below a cache carry the line's address, not the access's, so
  a miss names a line, not a field (see physical_map for which lines can be
  named at all).
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


def data_address(kind: str, pc: int, paddr: int, physical: PhysicalMap) -> int:
    if kind == "fetch" or pc < USER_SPACE_END:
        return 0
    return physical.virtual(paddr)


def aggregate(monitors: list[Monitor], regions: list[tuple[int, int | None]],
              physical: PhysicalMap, clock_hz: float) -> tuple[pd.DataFrame, Summary]:
    """The raw misses frame of the packets inside the regions, and a summary."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])   # key: [count, ticks]
    summary = Summary()
    last_end = max((end for _, end in regions if end is not None), default=None)
    open_ended = any(end is None for _, end in regions)
    tick_freq = 10**12  # gem5's default; each trace's header says
    for monitor in monitors:
        header, packets = read_trace(monitor.requests)
        tick_freq = header.tick_freq
        outstanding: dict[tuple[int, int], deque] = defaultdict(deque)
        for p in packets:
            if last_end is not None and not open_ended and p.tick >= last_end:
                break  # a trace is in tick order: nothing later is inside a region
            if not in_regions(p.tick, regions):
                continue
            kind = classify(p.cmd, p.flags)
            if kind is None:
                if p.cmd in WRITEBACKS:
                    summary.writebacks += 1
                elif p.cmd in PREFETCHES or p.flags & FLAG_PREFETCH:
                    summary.prefetches += 1
                elif p.flags & FLAG_UNCACHEABLE:
                    summary.uncacheable += 1
                else:
                    name = _cmd_name(p.cmd)
                    summary.other[name] = summary.other.get(name, 0) + 1
                continue
            if not p.HasField("pc"):
                summary.without_pc += 1
                continue
            cause = "upgrade" if p.cmd in UPGRADES else ""
            key = (monitor.cpu, p.pc, kind, data_address(kind, p.pc, p.addr, physical),
                   monitor.level, cause)
            counts[key][0] += 1
            summary.misses += 1
            outstanding[(p.addr, p.pkt_id)].append((p.tick, key))
        if monitor.responses is not None and outstanding:
            _match_responses(monitor.responses, outstanding, counts, summary)
    rows = [(*key, count, round(ticks * clock_hz / tick_freq) if ticks else 0)
            for key, (count, ticks) in counts.items()]
    frame = pd.DataFrame(rows, columns=list(RAW)).astype(RAW)
    return frame.sort_values(["cpu", "level", "pc", "kind", "data"]).reset_index(drop=True), \
        summary


def _match_responses(path: Path, outstanding: dict, counts: dict, summary: Summary) -> None:
    """Add each response's latency to the oldest outstanding request of the
    same line and requestor that it follows."""
    _, responses = read_trace(path)
    left = sum(len(q) for q in outstanding.values())
    for r in responses:
        queue = outstanding.get((r.addr, r.pkt_id))
        if not queue or queue[0][0] > r.tick:
            continue
        tick, key = queue.popleft()
        counts[key][1] += r.tick - tick
        summary.matched_responses += 1
        left -= 1
        if not left:
            break


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
