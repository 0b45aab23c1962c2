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

Where the run has core-side traces (a monitor between each core and its
L1D, requests only), a replay of them with the L1D's own traces
(l1d_replay) gives each miss the address of the access that took it, and
each L1D miss its cause (compulsory, capacity, conflict, coherence with the
thief's CPU and PC), as the QEMU model classifies them.  Without them a miss
names only its line, and has cause "" (an upgrade, a write to a line held
shared, is "upgrade" either way); L2 misses always have cause "".
Addresses are then reduced as the QEMU plugin reduces them
(docs/hotline-cache-format.md): a struct page to the same byte of pfn 0's,
the kernel image exact, any other kernel address to its line (see
physical_map for what can be named).

Requests without a PC (page-table walks, write-backs, prefetches,
uncacheable accesses) are not misses of an instruction: they are counted in
the summary, not in the frame.
"""

from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hotline.simulate.gem5 import l1d_replay
from hotline.simulate.gem5.packet_trace import (
    CMD, FLAG_INST_FETCH, FLAG_LOCKED_RMW, FLAG_PREFETCH, FLAG_UNCACHEABLE, read_trace,
)
from hotline.simulate.gem5.physical_map import USER_SPACE_END, PhysicalMap, data_key

RAW = {"cpu": "int16", "pc": "uint64", "kind": "string", "data": "uint64", "level": "string",
       "cause": "string", "count": "int64", "cycles": "int64"}
# The coherence misses by thief, as the QEMU plugin's stolen records.
STOLEN = {"cpu": "int64", "pc": "uint64", "data": "uint64", "thief_cpu": "int64",
          "thief_pc": "uint64", "count": "int64"}

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
    """The data key (physical_map.data_key) of a miss at physical address
    paddr."""
    if kind == "fetch" or pc < USER_SPACE_END:
        return 0
    return data_key(kind, pc, physical.virtual(paddr), physical, line_bytes)


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
    thief: tuple[int, int] | None = None     # (cpu, pc) of a coherence miss's thief


def aggregate(monitors: list[Monitor], regions: list[tuple[int, int | None]],
              physical: PhysicalMap, clock_hz: float,
              core_traces: dict[int, Path] | None = None,
              line_bytes: int = 64,
              l1d_lines: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, Summary]:
    """The raw misses frame of the packets inside the regions, the coherence
    misses by thief (STOLEN; empty without core traces), and a summary.
    core_traces: per CPU, the trace of its requests to its L1D, if recorded;
    l1d_lines: the L1D's lines, for the replay's causes."""
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
    if core_traces:
        _replay(misses, monitors, core_traces, line_bytes, l1d_lines, summary)

    def data(m: _Miss) -> int:
        return data_address(m.kind, m.pc, m.paddr, physical, line_bytes)

    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])   # key: [count, ticks]
    stolen: dict[tuple, int] = defaultdict(int)
    for m in misses:
        key = (m.cpu, m.pc, m.kind, data(m), m.level, m.cause)
        counts[key][0] += 1
        counts[key][1] += m.ticks
        if m.thief is not None:
            stolen[(m.cpu, m.pc, key[3], *m.thief)] += 1
    rows = [(*key, count, round(ticks * clock_hz / tick_freq) if ticks else 0)
            for key, (count, ticks) in counts.items()]
    frame = pd.DataFrame(rows, columns=list(RAW)).astype(RAW)
    thieves = pd.DataFrame([(*key, count) for key, count in stolen.items()],
                           columns=list(STOLEN)).astype(STOLEN)
    return frame.sort_values(["cpu", "level", "pc", "kind", "data"]).reset_index(drop=True), \
        thieves.sort_values(list(STOLEN)[:-1]).reset_index(drop=True), summary


def _replay(misses: list[_Miss], monitors: list[Monitor], core_traces: dict[int, Path],
            line_bytes: int, l1d_lines: int, summary: Summary) -> None:
    """Give each data miss of a CPU with a core trace its access's address,
    and each L1D miss its cause (l1d_replay)."""
    wanted: dict[int, dict[tuple, list[_Miss]]] = defaultdict(lambda: defaultdict(list))
    for m in misses:
        if m.cpu in core_traces and m.kind != "fetch":
            wanted[m.cpu][(m.level, m.tick, m.pc, m.paddr - m.paddr % line_bytes)].append(m)
    requests = {(mon.cpu, mon.level): mon.requests for mon in monitors
                if mon.level in l1d_replay.LEVELS}
    found = l1d_replay.replay(wanted, core_traces, requests, max(l1d_lines, 1), line_bytes)
    for cpu, by_key in wanted.items():
        for key, group in by_key.items():
            what = found[cpu].get(key) or l1d_replay.Found()
            for m in group:
                if what.address is not None:
                    m.paddr = what.address
                    summary.resolved += 1
                else:
                    summary.unresolved += 1
                if m.level == "L1D" and not m.cause and l1d_lines:
                    m.cause, m.thief = what.cause, what.thief


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
