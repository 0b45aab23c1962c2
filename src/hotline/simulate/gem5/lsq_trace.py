"""Reads after partial writes, from the O3 CPU's LSQUnit debug trace.

When a load overlaps an older store in the store queue that does not cover
it, gem5's O3 LSQ cannot forward: it reschedules the load until the store
has written the cache (LSQUnit::read in gem5 v24.0's src/cpu/o3/lsq_unit.cc,
the PartialAddrRangeCoverage case, counted in the rescheduledLoads stat
together with strictly ordered loads).  Its debug trace says so:

    TICK: UNIT: Load-store forwarding mis-match. Store idx S to load addr A

where UNIT is the core's LSQ unit (board.processor.cores0.core.iew.lsq.thread0
for core 0).  Neither PC is on that line, so each unit's trace is followed:

    Inserting load PC (PC=>NPC).(U=>NU), idx:I [sn:N]    load entry I+1 is PC
    Inserting store PC (PC=>NPC).(U=>NU), idx:I [sn:N]   store entry I+1 is PC
    Read called, load idx: I, store idx: ..., ...        load entry I+1 reads

(the insert lines print the queue's tail before it grows, and "Read called"
prints the load's index minus one, so both show I for entry I+1; the
mis-match line prints the store's own index S).  LSQUnit::read prints "Read
called" and then, with no other line of that unit in between, the mis-match.
A replayed load is reported each time it is replayed.

hotline's config turns the LSQUnit flag on only inside regions of interest,
and gem5 writes the trace into a named pipe that hotline reads while gem5
runs (PipeReader): the flag prints every load and store the LSQ inserts,
hundreds of bytes per instruction (660 MB gzip'd for 12 million), of which
only the counts are kept.
"""

import errno
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path

import pandas as pd

PARTIAL = {"cpu": "int16", "store_pc": "uint64", "load_pc": "uint64", "count": "int64"}

_PREFIX = re.compile(r"^\s*\d+: (\S+): (.*)$")
_INSERT = re.compile(r"^Inserting (load|store) PC \((0x[0-9a-fA-F]+)=>.*idx:(-?\d+) \[sn:")
_READ = re.compile(r"^Read called, load idx: (-?\d+),")
_MISMATCH = re.compile(r"^Load-store forwarding mis-match\. Store idx (-?\d+) to load addr")
_CPU = re.compile(r"\.processor\.cores(\d*)\.core\.")


def _cpu(unit: str) -> int:
    m = _CPU.search(unit)
    return int(m.group(1) or 0) if m else -1


# gem5's queue indices are absolute (base/circular_queue.hh: a 64-bit index
# that only grows, taken modulo the capacity on access), so an entry is
# forgotten once this many more have been inserted behind it: no LSQ holds
# that many, and the tables stay small.  While every entry was kept, the
# process reading an O3 smoke fork storm's trace grew by some 65 MB a minute
# (5.8 GB after 52 minutes; its growth since the change was not measured).
HORIZON = 1 << 12


def count_partial_overlaps(lines) -> pd.DataFrame:
    """Replays of loads that partially overlap an older store, per (cpu, store
    PC, load PC); a PC hotline could not find is 0 (never inserted in the
    trace, or inserted HORIZON entries before the one now inserted)."""
    loads: dict[str, dict[int, int]] = {}
    stores: dict[str, dict[int, int]] = {}
    reading: dict[str, int] = {}
    counts: Counter = Counter()
    for line in lines:
        m = _PREFIX.match(line)
        if not m:
            continue
        unit, message = m.groups()
        if (i := _INSERT.match(message)) is not None:
            entries = (loads if i.group(1) == "load" else stores).setdefault(unit, {})
            entry = int(i.group(3)) + 1
            entries[entry] = int(i.group(2), 16)
            entries.pop(entry - HORIZON, None)
        elif (r := _READ.match(message)) is not None:
            reading[unit] = int(r.group(1)) + 1
        elif (x := _MISMATCH.match(message)) is not None:
            load_pc = loads.get(unit, {}).get(reading.get(unit, -1), 0)
            store_pc = stores.get(unit, {}).get(int(x.group(1)), 0)
            counts[(_cpu(unit), store_pc, load_pc)] += 1
    rows = [(*key, n) for key, n in sorted(counts.items())]
    return pd.DataFrame(rows, columns=list(PARTIAL)).astype(PARTIAL)


# What count_partial_overlaps reads, found without a regular expression.
_WANTED = ("Inserting", "Read called", "mis-match")


class PipeReader:
    """A named pipe at `path` for gem5's debug output (--debug-file), read
    on a thread of its own while gem5 writes it, keeping only the lines
    count_partial_overlaps reads.  finish() after gem5 has exited returns
    the counts (or raises what the reading raised)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        os.mkfifo(path)
        self.path = path
        self._opened = threading.Event()
        self._result: pd.DataFrame | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._read, name="lsq-trace", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            with open(self.path, errors="replace") as f:   # blocks until gem5 opens it
                self._opened.set()
                self._result = count_partial_overlaps(
                    line for line in f if any(w in line for w in _WANTED))
        except BaseException as e:      # handed to finish()
            self._error = e

    def finish(self) -> pd.DataFrame:
        # gem5 ended without opening the pipe: be the writer that closes it,
        # so that the reading thread's open returns and it reads an empty
        # trace.  Opening the write end without blocking fails (ENXIO) while
        # no reader has the pipe open: the thread may not have reached its
        # open yet (threads start late on a loaded machine), so try again
        # until it has, or has ended.
        while not self._opened.is_set() and self._thread.is_alive():
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
            time.sleep(0.01)
        self._thread.join()
        self.path.unlink(missing_ok=True)
        if self._error is not None:
            raise self._error
        return self._result
