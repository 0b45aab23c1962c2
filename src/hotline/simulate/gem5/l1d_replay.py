"""Each L1D miss's access and cause, from a replay of the traces in tick order.

gem5's classic caches do not say why a line was missing, and below the L1D a
packet names only its line.  The traces around each L1D say both:

  core -> L1D   every access of the core (requests only): the instruction,
                the address it touched
  L1D -> L2     every miss of the L1D (a demand request fetching a line), every
                line it gives up (WritebackDirty, WritebackClean, CleanEvict),
                and every request that takes a line from the other cores'
                caches so that this core may write it (TAKES)

Replayed together, all cores in tick order (an access before the miss it
causes at the same tick), they give each L1D miss:

  the access    the latest access of the same core, PC and line at or before
                the miss: its address names the field (page->flags, ...)
  the cause     as docs/causes.md defines it, the first of these that applies:
    compulsory  the core had not accessed the line before in the replay (the
                measuring run restores with empty caches, so that is the
                line's first access since the region's start, not since boot)
    capacity    the shadow, a fully associative LRU cache with as many lines
                as the L1D fed the core's accesses, does not hold the line
    coherence   another core's TAKES request came for the line while this
                core's L1D held it, and this core has not fetched it since;
                that core and the request's PC are the thief
    conflict    otherwise
  An upgrade stays "upgrade".

Only a line this L1D held can be taken from it: one the L1D had already
evicted when another core wrote it is "capacity" or "conflict", whatever
the core's L2 held.  A CPU without a core trace has no shadow: a line taken
from its L1D is "coherence" however long ago.  Misses below the L1D keep
cause "" (upgrades excepted): the traces do not show every request into the
L2 (instruction misses and page walks are not traced).
"""

import heapq
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from hotline.simulate.gem5.packet_trace import CMD, FLAG_UNCACHEABLE, read_trace

# Requests with which a core's L1D asks for a line to write: the other
# caches drop their copies (gem5's classic caches invalidate on them).
TAKES = {CMD[c] for c in ("ReadExReq", "UpgradeReq", "SCUpgradeReq", "WriteLineReq")}
GIVES_UP = {CMD[c] for c in ("WritebackDirty", "WritebackClean", "CleanEvict")}
# Requests that bring a line into the L1D (when cacheable).
FILLS = TAKES | {CMD[c] for c in ("ReadSharedReq", "ReadCleanReq")}

# The streams, in their order at equal ticks: an access before its misses.
ACCESS, L1D, L2 = 0, 1, 2
LEVELS = {"L1D": L1D, "L2": L2}


@dataclass
class Found:
    """What the replay says about one miss."""
    address: int | None = None                  # the access's, if the core trace showed it
    cause: str = ""
    thief: tuple[int, int] | None = None        # (cpu, pc) of the write that took the line


@dataclass
class _Core:
    lines: int                                  # the L1D's, for the shadow
    traced: bool                                # a core trace feeds the shadow
    seen: set = field(default_factory=set)
    shadow: OrderedDict = field(default_factory=OrderedDict)   # fully associative LRU
    held: set = field(default_factory=set)      # lines in the L1D
    stolen: dict = field(default_factory=dict)  # line -> thief (cpu, pc)
    last: dict = field(default_factory=dict)    # (pc, line) -> Found, for wanted pairs

    def access(self, pc: int, address: int, line: int, wanted: bool) -> None:
        if wanted:
            thief = None
            if line not in self.seen:
                cause = "compulsory"
            elif line not in self.shadow:
                # Lost to the core's own accesses, whatever another core did.
                cause = "capacity"
            elif line in self.stolen:
                cause, thief = "coherence", self.stolen[line]
            else:
                cause = "conflict"
            self.last[(pc, line)] = Found(address, cause, thief)
        self.seen.add(line)
        self.shadow[line] = None
        self.shadow.move_to_end(line)
        if len(self.shadow) > self.lines:
            self.shadow.popitem(last=False)


def replay(misses: dict[int, dict[tuple, list]], core_traces: dict[int, Path],
           requests: dict[tuple[int, str], Path], l1d_lines: int,
           line_bytes: int) -> dict[int, dict[tuple, Found]]:
    """Per CPU, what the replay found for each wanted miss.  `misses` names
    them, per CPU, by (level, tick, pc, line) (level "L1D" or "L2");
    `requests` are the request traces below each (cpu, level).  An L2 miss
    gets its access only: its cause is not the replay's to tell.  CPUs
    without a core trace get no addresses and only coherence causes."""
    cpus = sorted({cpu for cpu, _ in requests} | set(core_traces))
    cores = {cpu: _Core(l1d_lines, cpu in core_traces) for cpu in cpus}
    wanted = {cpu: {(pc, line) for _, _, pc, line in misses.get(cpu, {})} for cpu in cpus}
    found: dict[int, dict] = {cpu: {} for cpu in cpus}
    streams = [_stream(path, ACCESS, cpu) for cpu, path in core_traces.items()] + \
        [_stream(path, LEVELS[level], cpu) for (cpu, level), path in requests.items()]
    for tick, stream, cpu, p in heapq.merge(*streams, key=lambda e: e[:3]):
        core = cores[cpu]
        line = p.addr - p.addr % line_bytes
        if stream == ACCESS:
            if p.HasField("pc"):
                core.access(p.pc, p.addr, line, (p.pc, line) in wanted[cpu])
            continue
        key = ("L1D" if stream == L1D else "L2", tick, p.pc, line) if p.HasField("pc") else None
        if key in misses.get(cpu, {}):
            last = core.last.get((p.pc, line))
            if stream == L2:
                found[cpu][key] = Found(last.address if last else None)
            else:
                found[cpu][key] = last or _without_access(core, line)
        if stream == L2:
            continue
        if p.cmd in GIVES_UP:
            core.held.discard(line)
            continue
        if p.cmd not in FILLS or p.flags & FLAG_UNCACHEABLE:
            continue
        core.held.add(line)
        core.stolen.pop(line, None)
        if p.cmd in TAKES:
            for other in cpus:
                if other != cpu and line in cores[other].held:
                    cores[other].held.discard(line)
                    cores[other].stolen[line] = (cpu, p.pc if p.HasField("pc") else 0)
    return found


def _without_access(core: _Core, line: int) -> Found:
    """A miss whose access the core trace did not show (no core trace, or
    an access without a PC): the cause from what the L1D side shows."""
    if line in core.stolen and (line in core.shadow or not core.traced):
        return Found(None, "coherence", core.stolen[line])
    return Found()


def _stream(path: Path, order: int, cpu: int) -> Iterator[tuple]:
    _, packets = read_trace(path)
    for p in packets:
        yield p.tick, order, cpu, p
