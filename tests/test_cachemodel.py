"""The C cache model on synthetic access streams whose outcomes are worked
out by hand in each test (geometry, then the derivation), and against a
second, deliberately simple model written here in Python."""

import random
import subprocess
import sys
from collections import Counter

import pandas as pd
import pytest

from hotline import specs
from hotline.simulate.qemu.cachemodel import CacheModel
from hotline.simulate.qemu.cache_tables import raw_misses
from hotline.errors import HotlineError
from tests.conftest import require_tools

LINE = 64


@pytest.fixture(autouse=True)
def compiler():
    require_tools("gcc")


def small(cores=1, **kw):
    """L1s: 1 KiB, 2-way: 16 lines in 8 sets.  L2: 4 KiB, 4-way: 64 lines in
    16 sets.  Latencies 1 / 10 / 30 (L3) / 200 (memory) / 60 (peer)."""
    return CacheModel(cores=cores, l1i=(1, 2, 1), l1d=(1, 2, 1), l2=(4, 4, 10),
                      memory_latency=200, peer_latency=60, **kw)


def sweep(model, lines, passes, core=0, kind="load", base=0):
    """Outcomes per pass: a Counter of (l1, l2) for each pass."""
    result = []
    for _ in range(passes):
        result.append(Counter((a.l1, a.l2) for a in
                              (model.access(core, kind, base + i * LINE) for i in range(lines))))
    return result


def test_sweep_within_l1_misses_once_then_hits():
    # 16 lines = the L1's capacity: the first pass misses everything in both
    # levels (compulsory), every later pass hits in L1.
    first, second, third = sweep(small(), 16, 3)
    assert first == {("compulsory", "compulsory"): 16}
    assert second == third == {("hit", "not-reached"): 16}


def test_sweep_over_l1_under_l2_is_capacity_in_l1():
    # 32 lines cycled through a 16-line LRU L1: each set (2 ways) sees 4 lines
    # in turn, so LRU always evicts the one needed next: every access misses
    # in L1.  A fully associative 16-line LRU misses a cyclic 32-line sweep
    # too: capacity.  32 lines fit the 64-line L2: hits after the first pass.
    first, second = sweep(small(), 32, 2)
    assert first == {("compulsory", "compulsory"): 32}
    assert second == {("capacity", "hit"): 32}


def test_sweep_over_l2_is_capacity_in_both():
    # 128 lines > the L2's 64: from the second pass on, every access misses
    # in both levels, and a fully associative cache of either size would too.
    _, second = sweep(small(), 128, 2)
    assert second == {("capacity", "capacity"): 128}


def test_three_lines_in_one_two_way_set_are_conflicts():
    # Lines 0, 8 and 16 all map to L1 set 0 (8 sets); a 2-way LRU set cycled
    # over 3 lines misses every time, a 16-line fully associative cache would
    # hold all three: conflict.  The L2 (16 sets) puts them in sets 0, 8, 0:
    # no conflict there, so L2 hits.
    model = small()
    lines = [0, 8, 16]
    first = [model.access(0, "load", l * LINE) for l in lines]
    assert [(a.l1, a.l2) for a in first] == [("compulsory", "compulsory")] * 3
    again = [model.access(0, "load", l * LINE) for l in lines * 3]
    assert [(a.l1, a.l2) for a in again] == [("conflict", "hit")] * 9
    assert {a.source for a in again} == {"l2"} and {a.cycles for a in again} == {10}


def test_a_line_used_again_after_another_is_the_newest_of_its_set():
    # Lines 1, 9 and 17 map to L1 set 1 (2-way).  1, 9, then 1 again: the
    # set's newest line is 1, so 17 evicts 9, and 1 still hits.  9 then
    # misses in the L1 and hits the L2; a 16-line fully associative cache
    # would still hold it: conflict.
    model = small()
    got = [model.access(0, "load", l * LINE) for l in [1, 9, 1, 17, 1, 9]]
    assert [(a.l1, a.l2) for a in got] == [
        ("compulsory", "compulsory"), ("compulsory", "compulsory"), ("hit", "not-reached"),
        ("compulsory", "compulsory"), ("hit", "not-reached"), ("conflict", "hit")]
    assert model.check() is None


def test_going_back_to_the_line_before_the_last_moves_it_to_the_front_of_the_shadow():
    # 0, 1, 0: the third access goes back to the line before the last (the
    # model's shortcut for it, struct core's prev).  The L1's 16-line shadow
    # then holds 0 before 1.  Fifteen new lines follow: 9 and 17 take set 1's
    # two ways from 1, thirteen others fill sets 2 to 7; the shadow, over its
    # 16 lines, lets go of its oldest, 1.  So 1 misses in the L1 where a
    # fully associative cache of its size would miss too: capacity, and the
    # L2 (64 lines) still has it.  Had the third access left 0 behind 1 in
    # the shadow, 0 would have gone instead, and 1 would read as conflict.
    model = small()
    got = [model.access(0, "load", l * LINE) for l in [0, 1, 0]]
    assert [(a.l1, a.l2) for a in got] == [("compulsory", "compulsory")] * 2 + \
        [("hit", "not-reached")]
    for l in [9, 17, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 18]:
        model.access(0, "load", l * LINE)
    again = model.access(0, "load", 1 * LINE)
    assert (again.l1, again.l2) == ("capacity", "hit")
    assert model.check() is None


def test_an_older_l1_hit_moves_the_line_to_the_front_of_the_shadow():
    # 0, 1, 2, 0: the fourth access hits a line that is neither the last nor
    # the one before (the model goes to it through the way's shadow node,
    # struct way's node).  The shadow then holds, oldest first, 1, 2, 0.
    # Fourteen new lines follow (9 and 17 take set 1's two ways from 1;
    # 3-8 and 10-15 fill the other sets' free ways), 17 lines in all for the
    # 16-line shadow, which lets go of its oldest, 1.  So 1 misses in the L1
    # where a fully associative cache of its size would miss too: capacity.
    # Had the hit left 0 where it was, 0 would have gone from the shadow
    # instead, and 1 would read as conflict.
    model = small()
    got = [model.access(0, "load", l * LINE) for l in [0, 1, 2, 0]]
    assert [(a.l1, a.l2) for a in got] == [("compulsory", "compulsory")] * 3 + \
        [("hit", "not-reached")]
    for l in [9, 17, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15]:
        model.access(0, "load", l * LINE)
    again = model.access(0, "load", 1 * LINE)
    assert (again.l1, again.l2) == ("capacity", "hit")
    assert model.check() is None


def test_a_downgraded_line_before_the_last_is_upgraded_when_written_again():
    # CPU 0 writes 0, then 1: 0 is its line before the last, Modified.  CPU 1
    # reads 0, which takes CPU 0's copy down to Shared.  CPU 0's next write
    # to 0 must ask for it again (upgrade, invalidating CPU 1's copy), and
    # CPU 1's next read finds its copy stolen by CPU 0.
    model = small(cores=2)
    model.access(0, "store", 0)
    model.access(0, "store", LINE)
    model.access(1, "load", 0)
    write = model.access(0, "store", 0, pc=7)
    assert (write.l1, write.l2) == ("upgrade", "upgrade")
    read = model.access(1, "load", 0)
    assert (read.l1, read.stolen_by, read.stolen_by_pc) == ("coherence", 0, 7)
    assert model.check() is None


def test_a_line_the_l1d_kept_after_the_l2s_shadow_let_it_go_is_stolen_from_the_l1d():
    # Core 0 reads line 0 (L1D set 0, L2 set 0), then fetches the first 64
    # lines of 1-79 that are not in L2 set 0 (all but 16, 32, 48 and 64).
    # They pass through the L1I and the L2: the L2's 64-line shadow lets line
    # 0 go, while the L2's set 0 and the L1D keep it, and so does the L1D's
    # shadow, which saw none of them.  Core 1's write takes it from both
    # caches.  Core 0's read again: the L1D's shadow still holds it, so a
    # coherence miss of the L1D; the L2's does not, so a capacity miss of
    # the L2.  (Hits in the L1D never reach the L2's shadow: whether the L2's
    # shadow holds a line says nothing of the L1D's mark.)
    m = small(cores=2)
    m.access(0, "load", 0)
    for n in [n for n in range(1, 80) if n % 16][:64]:
        m.access(0, "ifetch", n * LINE)
    m.access(1, "store", 0, pc=0x77)
    again = m.access(0, "load", 0)
    assert (again.l1, again.l2, again.stolen_by, again.stolen_by_pc) == \
        ("coherence", "capacity", 1, 0x77)
    assert m.check() is None


def test_a_fetch_of_the_last_fetched_line_is_a_hit_without_a_lookup():
    # cm_fetch_hits, the plugin's shortcut for a block that runs again: yes
    # only for the line the core fetched last, while it is still in its L1I;
    # threaded (test_cachemodel_threads.py runs this again so), never.
    m = small(cores=2)
    shortcut = not m.threaded
    a, b = 0x1000, 0x1000 + LINE
    assert not m.fetch_hits(0, a)                   # nothing fetched yet
    assert m.access(0, "ifetch", a).l1 == "compulsory"
    assert m.fetch_hits(0, a) == m.fetch_hits(0, a + 8) == shortcut   # anywhere in the line
    assert not m.fetch_hits(0, b) and not m.fetch_hits(1, a)  # another line, another core
    m.access(0, "load", b)                          # data accesses leave the L1I alone
    assert m.fetch_hits(0, a) == shortcut
    m.access(0, "ifetch", b)
    assert not m.fetch_hits(0, a) and m.fetch_hits(0, b) == shortcut
    m.access(1, "store", b)                         # code written by another core
    assert not m.fetch_hits(0, b)
    assert m.access(0, "ifetch", b).l1 == "coherence"


def test_mesi_between_two_cores():
    m = small(cores=2)
    x = 0x1000
    a = m.access(0, "load", x)                      # core 0: Exclusive
    assert (a.l1, a.source, a.cycles) == ("compulsory", "memory", 200)
    b = m.access(1, "load", x)                      # both Shared; clean data from memory
    assert (b.l1, b.source) == ("compulsory", "memory")
    assert m.access(0, "load", x).l1 == "hit"
    up = m.access(0, "store", x, pc=0xAAA)          # write to Shared: upgrade, core 1 invalidated
    assert (up.l1, up.cycles) == ("upgrade", 60)
    assert m.access(0, "store", x).l1 == "hit"      # Modified now: plain hit
    stolen = m.access(1, "load", x)                 # core 1's copy was stolen by core 0
    assert (stolen.l1, stolen.l2) == ("coherence", "coherence")
    assert (stolen.stolen_by, stolen.stolen_by_pc) == (0, 0xAAA)
    assert (stolen.source, stolen.cycles) == ("peer", 60)   # core 0 had it Modified
    assert m.access(0, "load", x).l1 == "hit"       # core 0 kept it, Shared


def test_exclusive_line_is_written_without_upgrade():
    m = small(cores=2)
    m.access(0, "load", 0)                          # Exclusive: nobody else has it
    assert m.access(0, "store", 0).l1 == "hit"


def test_four_cores_one_writer():
    m = small(cores=4)
    x = 0x2000
    for core in range(4):
        m.access(core, "load", x)                   # Shared in all four
    assert m.access(2, "store", x, pc=0x22).l1 == "upgrade"
    readers = [m.access(core, "load", x) for core in (0, 1, 3)]
    assert [(r.l1, r.stolen_by, r.stolen_by_pc) for r in readers] == [("coherence", 2, 0x22)] * 3
    # Only the first reader finds the line Modified in core 2; after that it
    # is Shared everywhere and clean data comes from memory (no L3 here).
    assert [r.source for r in readers] == ["peer", "memory", "memory"]


def test_ping_pong_coherence_misses():
    # N alternating stores to one line by cores 0 and 1: each core's first
    # store is compulsory, every later one finds its copy stolen by the other.
    m = small(cores=2)
    n = 100
    outcomes = Counter()
    for i in range(n):
        a = m.access(i % 2, "store", 0x3000, pc=0x100 + i % 2)
        outcomes[a.l1] += 1
        if a.l1 == "coherence":
            assert (a.stolen_by, a.stolen_by_pc) == (1 - i % 2, 0x100 + 1 - i % 2)
    assert outcomes == {"compulsory": 2, "coherence": n - 2}


def test_false_sharing_is_the_same_line():
    # Two counters 8 bytes apart share one line; the cores take turns to
    # increment their own (a load, then a store).  The load finds the line
    # taken by the other core's store and brings it back Shared; the store
    # must then upgrade it.
    m = small(cores=2)
    kinds = Counter()
    for i in range(50):
        core = i % 2
        kinds[("load", m.access(core, "load", 0x4000 + 8 * core).l1)] += 1
        kinds[("store", m.access(core, "store", 0x4000 + 8 * core).l1)] += 1
    # Round 0: core 0 loads (compulsory, Exclusive) and stores (hit).
    # Round 1: core 1 loads (compulsory, Shared), stores (upgrade).
    # Every later round: the load is a coherence miss and the store an upgrade.
    assert kinds == {("load", "compulsory"): 2, ("load", "coherence"): 48,
                     ("store", "hit"): 1, ("store", "upgrade"): 49}


@pytest.mark.parametrize("inclusion, hit_after", [("inclusive", False), ("non-inclusive", True)])
def test_l3_inclusion_back_invalidates(inclusion, hit_after):
    # L3: 1 KiB direct-mapped = 16 sets.  Lines A = 0 and B = 16 share L3
    # set 0.  Core 0 reads A, core 1 reads B: the L3 evicts A.  An inclusive
    # L3 takes A out of core 0's caches too; a non-inclusive one does not.
    m = CacheModel(cores=2, l1i=(1, 2, 1), l1d=(1, 2, 1), l2=(4, 4, 10), l3=(1, 1, 30),
                   inclusion=inclusion)
    assert m.access(0, "load", 0).l3 == "compulsory"
    assert m.access(1, "load", 16 * LINE).l3 == "compulsory"
    again = m.access(0, "load", 0)
    assert (again.l1 == "hit") == hit_after
    if not hit_after:
        # Core 0's L1 and L2 would still hold A if fully associative.
        assert (again.l1, again.l2, again.l3) == ("conflict", "conflict", "conflict")


def test_exclusive_l3_holds_only_private_victims():
    # L2 (4 KiB, 4-way, 16 sets): lines 0, 16, 32, 48, 64 share L2 set 0; the
    # fifth evicts line 0 into the exclusive L3 (16 KiB), which memory never
    # fills.  Reading line 0 again hits the L3 and moves it back up.
    m = CacheModel(cores=1, l1i=(1, 2, 1), l1d=(1, 2, 1), l2=(4, 4, 10), l3=(16, 4, 30),
                   inclusion="exclusive")
    for line in (0, 16, 32, 48, 64):
        assert m.access(0, "load", line * LINE).l3 == "compulsory"   # not filled from memory
    back = m.access(0, "load", 0)
    assert (back.l2, back.l3, back.source, back.cycles) == ("conflict", "hit", "l3", 30)
    assert m.access(0, "load", 0).l1 == "hit"


def test_access_across_a_line_boundary_touches_both_lines():
    m = small()
    a = m.access(0, "load", LINE - 4, size=8)       # bytes 60..67: lines 0 and 1
    assert (a.l1, a.source) == ("compulsory", "memory")
    assert m.access(0, "load", 0).l1 == "hit"
    assert m.access(0, "load", LINE).l1 == "hit"


def test_read_after_partial_write():
    m = small(store_buffer_entries=4, store_buffer_window=10)
    m.access(0, "store", 0x101, size=1, pc=0x51, icount=1)     # byte 1 of the word at 0x100
    hit = m.access(0, "load", 0x100, size=8, pc=0x52, icount=2)
    assert hit.partial_write_store_pc == 0x51
    # A load inside the store's bytes forwards: no event.
    m.access(0, "store", 0x200, size=8, pc=0x61, icount=3)
    assert m.access(0, "load", 0x202, size=4, icount=4).partial_write_store_pc is None
    # The youngest overlapping store decides: a covering store after the byte.
    m.access(0, "store", 0x301, size=1, pc=0x71, icount=5)
    m.access(0, "store", 0x300, size=8, pc=0x72, icount=6)
    assert m.access(0, "load", 0x300, size=8, icount=7).partial_write_store_pc is None
    # Out of the window (10 instructions) or pushed out of the 4 entries: gone.
    m.access(0, "store", 0x401, size=1, pc=0x81, icount=10)
    assert m.access(0, "load", 0x400, size=8, icount=21).partial_write_store_pc is None
    m.access(0, "store", 0x501, size=1, pc=0x91, icount=30)
    for i in range(4):
        m.access(0, "store", 0x1000 + 64 * i, size=8, icount=31 + i)
    assert m.access(0, "load", 0x500, size=8, icount=35).partial_write_store_pc is None
    # A locked RMW's store counts as a store of its own size (lock andb).
    m.access(0, "rmw", 0x601, size=1, pc=0xA1, icount=40)
    assert m.access(0, "load", 0x600, size=8, icount=41).partial_write_store_pc == 0xA1
    # Another core's stores are not this core's store buffer.
    m2 = small(cores=2)
    m2.access(1, "store", 0x101, size=1, icount=1)
    assert m2.access(0, "load", 0x100, size=8, icount=2).partial_write_store_pc is None


def test_impossible_geometry_is_refused():
    with pytest.raises(HotlineError, match="power of two"):
        CacheModel(cores=1, l1i=(1, 2, 1), l1d=(1.5, 2, 1), l2=(4, 4, 10))
    with pytest.raises(HotlineError, match="cores"):
        CacheModel(cores=0, l1i=(1, 2, 1), l1d=(1, 2, 1), l2=(4, 4, 10))


def test_caches_larger_than_the_memory_given_are_refused_in_one_line():
    """Eight 1 GiB L2s (their ways and shadows some 3 GiB of address space)
    in a process allowed 4 GiB: cm_new returns NULL, having freed what it
    had, and the binding says so."""
    script = """
import resource, sys
from hotline.errors import HotlineError
from hotline.simulate.qemu.cachemodel import CacheModel
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
try:
    CacheModel(cores=8, l1i=(1, 2, 1), l1d=(1, 2, 1), l2=(1 << 20, 16, 10))
except HotlineError as e:
    print(e)
    sys.exit(0)
sys.exit("made")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "cache model: not memory enough for these caches on this host\n"


class ReferenceCache:
    """Set-associative LRU as lists, most recent last."""

    def __init__(self, size_kib, assoc):
        self.sets = size_kib * 1024 // LINE // assoc
        self.assoc = assoc
        self.data = [[] for _ in range(self.sets)]

    def has(self, line):
        return line in self.data[line % self.sets]

    def touch(self, line):
        s = self.data[line % self.sets]
        s.remove(line)
        s.append(line)

    def insert(self, line):
        s = self.data[line % self.sets]
        victim = s.pop(0) if len(s) == self.assoc else None
        s.append(line)
        return victim

    def drop(self, line):
        s = self.data[line % self.sets]
        if line in s:
            s.remove(line)


class ReferenceFullyAssociative:
    def __init__(self, lines):
        self.lines, self.order = lines, []

    def access(self, line):
        present = line in self.order
        if present:
            self.order.remove(line)
        elif len(self.order) == self.lines:
            self.order.pop(0)
        self.order.append(line)
        return present


class ReferenceCore:
    """One core's caches, each with its shadow and the lines it has seen, and
    the causes of docs/causes.md, section 1, as they are written there."""

    def __init__(self, l1i=(1, 2), l1d=(1, 2), l2=(4, 4)):
        """Each cache as (size_kib, assoc); the default is small()'s."""
        self.caches = {"l1i": ReferenceCache(*l1i), "l1d": ReferenceCache(*l1d),
                       "l2": ReferenceCache(*l2)}
        self.shadows = {level: ReferenceFullyAssociative(c.sets * c.assoc)
                        for level, c in self.caches.items()}
        self.seen = {"l1i": set(), "l1d": set(), "l2": set()}
        self.state = {}       # line: "M", "E" or "S"; absent: Invalid
        # (line, level): (core, pc) of the first write that took the line from
        # that cache while it held it, until the cache takes it back.
        self.stolen = {}

    def look(self, level, line):
        """A demand access of the cache: whether it is the first, and whether
        the shadow held the line before it."""
        first = line not in self.seen[level]
        self.seen[level].add(line)
        return first, self.shadows[level].access(line)

    def classify(self, level, first, shadow_hit, line):
        if first:
            return "compulsory", None
        if (line, level) in self.stolen and shadow_hit:
            return "coherence", self.stolen[line, level][0]
        return ("conflict" if shadow_hit else "capacity"), None

    def fill(self, level, line):
        """The cache takes the line in: it is no longer stolen from it."""
        self.stolen.pop((line, level), None)
        return self.caches[level].insert(line)

    def taken(self, line, writer, pc):
        """Another core's write takes the line from every cache that holds it."""
        for level, cache in self.caches.items():
            if cache.has(line):
                self.stolen.setdefault((line, level), (writer, pc))
                cache.drop(line)
        self.state.pop(line, None)


class ReferenceModel:
    """The same policies as the C model, written as plainly as possible:
    private L1I/L1D inclusive in a private L2 that carries the MESI state,
    no L3, only modified lines supplied by peers."""

    def __init__(self, cores, **geometry):
        self.cores = [ReferenceCore(**geometry) for _ in range(cores)]

    def invalidate_others(self, writer, line, pc):
        for i, c in enumerate(self.cores):
            if i != writer and line in c.state:
                c.taken(line, writer, pc)

    def access(self, core, kind, line, pc):
        me, write = self.cores[core], kind in ("store", "rmw")
        l1 = "l1i" if kind == "ifetch" else "l1d"
        first, shadow_hit = me.look(l1, line)
        if me.caches[l1].has(line):
            me.caches[l1].touch(line)
            if write and me.state[line] == "S":
                # The L2 holds it Shared too: the write asks it, an upgrade
                # at both levels.
                me.look("l2", line)
                me.caches["l2"].touch(line)
                self.invalidate_others(core, line, pc)
                me.state[line] = "M"
                return "upgrade", "upgrade", None
            if write:
                me.state[line] = "M"
            return "hit", "not-reached", None
        out1, stolen_by = me.classify(l1, first, shadow_hit, line)
        first, shadow_hit = me.look("l2", line)
        if me.caches["l2"].has(line):
            me.caches["l2"].touch(line)
            out2 = "hit"
            if write and me.state[line] == "S":
                self.invalidate_others(core, line, pc)
                out2 = "upgrade"
            if write:
                me.state[line] = "M"
            me.fill(l1, line)
            return out1, out2, stolen_by
        out2, stolen_by_l2 = me.classify("l2", first, shadow_hit, line)
        stolen_by = stolen_by if stolen_by is not None else stolen_by_l2
        peers = [c for i, c in enumerate(self.cores) if i != core and line in c.state]
        if not write:
            for c in peers:
                c.state[line] = "S"
        else:
            self.invalidate_others(core, line, pc)
        victim = me.fill("l2", line)
        if victim is not None:
            me.caches["l1i"].drop(victim)
            me.caches["l1d"].drop(victim)
            del me.state[victim]
        me.state[line] = "M" if write else "S" if peers else "E"
        me.fill(l1, line)
        return out1, out2, stolen_by


from hypothesis import given, settings, strategies as st  # noqa: E402

KINDS = ["ifetch", "load", "store", "rmw"]
ACCESSES = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(KINDS), st.integers(0, 47)),
                    max_size=400)


def agrees_with_the_reference(cores, accesses):
    """Each access's outcome is the reference model's, and the model stays
    consistent (cm_check) after every one."""
    model, reference = small(cores=cores), ReferenceModel(cores)
    for i, (core, kind, line) in enumerate(accesses):
        core %= cores
        # A fetch the plugin's shortcut calls a hit is one, and asking
        # changes nothing that the accesses after it could show.
        shortcut = kind == "ifetch" and model.fetch_hits(core, line * LINE)
        got = model.access(core, kind, line * LINE, pc=i)
        assert (got.l1, got.l2, got.stolen_by) == reference.access(core, kind, line, i), i
        assert got.l1 == "hit" or not shortcut, i
        assert model.check() is None, (i, model.check())


@settings(max_examples=200, deadline=None)
@given(cores=st.integers(1, 4), accesses=ACCESSES)
def test_agrees_with_the_reference_model(cores, accesses):
    agrees_with_the_reference(cores, accesses)


# Few lines, so that a core goes back and forth between lines of other sets
# (0, 1, 2, 9) and of one set (0 and 8; 1, 9 and 17, more than its 2 ways)
# while other cores write and read those lines away.
FEW_LINES = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(KINDS),
                               st.sampled_from([0, 1, 2, 8, 9, 17])), max_size=300)


@settings(max_examples=200, deadline=None)
@given(cores=st.integers(1, 4), accesses=FEW_LINES)
def test_alternating_lines_agree_with_the_reference_model(cores, accesses):
    agrees_with_the_reference(cores, accesses)


# More lines than the L2's 64, and streams long enough to go through them,
# so that the shadows let lines go while they are marked stolen (the C model
# then drops the marks; the reference model keeps every mark and asks the
# shadow).
MANY_LINES = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(KINDS), st.integers(0, 127)),
                      min_size=200, max_size=600)


@settings(max_examples=100, deadline=None)
@given(cores=st.integers(2, 4), accesses=MANY_LINES)
def test_lines_beyond_the_shadows_agree_with_the_reference_model(cores, accesses):
    agrees_with_the_reference(cores, accesses)


def test_a_long_stream_agrees_with_the_reference_model():
    # Four cores: a fifth of the accesses fetch one of 96 code lines, which
    # goes through the L2's shadow and not the L1D's; the rest read and write
    # 12 lines of the core's own, 8 lines all share, or any of 192.  So lines
    # are taken from caches that hold them, and stay marked while a cache's
    # shadow holds them, or go with it, the L1D's and the L2's marks apart.
    rng = random.Random(7)
    accesses = []
    for _ in range(20000):
        core, pick = rng.randrange(4), rng.random()
        if pick < 0.2:
            accesses.append((core, "ifetch", 200 + rng.randrange(96)))
        else:
            line = (100 + 12 * core + rng.randrange(12) if pick < 0.7 else
                    rng.randrange(8) if pick < 0.9 else rng.randrange(192))
            accesses.append((core, rng.choice(["load", "store", "rmw"]), line))
    agrees_with_the_reference(4, accesses)


# ---- docs/causes.md, section 3: the microbenchmarks -----------------------
#
# skylake-4core's caches: 64-byte lines, L1D 32 KiB 8-way (64 sets, 512
# lines), L2 256 KiB 4-way (1024 sets, 4096 lines), an inclusive 8 MiB L3.
# Page k is lines 64k .. 64k+63: one line in every L1D set, in L2 sets
# 64(k mod 16) .. 64(k mod 16)+63.  The sweep S, pages 3-18, is 1024 lines,
# twice the L1D, and puts at most two pages in an L2 set (pages k and k+16),
# so nothing leaves an L2 in any of them; nor the L3, of 131072 lines.

T, U, V = [0], [1], [2]
S = list(range(3, 19))
PAGE_LINES = 64


def skylake():
    """The C model with skylake-4core's caches, and the reference model with
    its L1s and L2 (the L3 holds every line here, and the reference has none)."""
    system = specs.load_system("skylake-4core")
    c = system.caches
    assert c.line_bytes == LINE
    level = lambda cache: (cache.size_kib, cache.assoc, cache.latency_cycles)
    model = CacheModel(cores=system.cpus, line_bytes=c.line_bytes, l1i=level(c.l1i),
                       l1d=level(c.l1d), l2=level(c.l2), l3=level(c.l3) if c.l3 else None,
                       inclusion=c.inclusion, memory_latency=system.latency.memory_cycles,
                       peer_latency=system.latency.cache_to_cache_cycles,
                       store_buffer_entries=system.store_buffer.entries,
                       store_buffer_window=system.store_buffer.window_instructions)
    geometry = {name: (getattr(c, name).size_kib, getattr(c, name).assoc)
                for name in ("l1i", "l1d", "l2")}
    return model, ReferenceModel(system.cpus, **geometry)


def run_benchmark(steps):
    """Runs the steps, each (cpu, "load" or "store", pages): one 8-byte access
    to each line of each page in order, step i's at pc i.  Each access's
    outcomes and thief are the reference model's too.  Per step, its CPU's
    (L1D outcomes, L2 outcomes, thieves as {(cpu, step): misses})."""
    model, reference = skylake()
    per_step = []
    for number, (cpu, kind, pages) in enumerate(steps, 1):
        l1, l2, thieves = Counter(), Counter(), Counter()
        for line in (page * PAGE_LINES + i for page in pages for i in range(PAGE_LINES)):
            got = model.access(cpu, kind, line * LINE, pc=number)
            assert (got.l1, got.l2, got.stolen_by) == \
                reference.access(cpu, kind, line, number), (number, line)
            l1[got.l1] += 1
            l2[got.l2] += 1
            if got.stolen_by is not None:
                thieves[got.stolen_by, got.stolen_by_pc] += 1
        assert model.check() is None, number
        per_step.append((l1, l2, thieves))
    return per_step


def by_cpu_and_level(steps, outcomes):
    """The whole run's misses (hits and not-reached left out) per (cpu, level)."""
    total = {}
    for (cpu, _, _), (l1, l2, _) in zip(steps, outcomes):
        for level, counts in (("L1D", l1), ("L2", l2)):
            for outcome, n in counts.items():
                if outcome not in ("hit", "not-reached"):
                    total.setdefault((cpu, level), Counter())[outcome] += n
    return total


def test_benchmark_a_coherence_without_capacity_pressure():
    # 1: CPU0 reads T, first at both levels.  2: CPU1 writes T, first at
    # both; CPU0's L1D and L2 held T, and their shadows hold it (64 lines
    # each): marked at both.  3: CPU0 reads T again: each shadow still holds
    # it, so a coherence miss at both levels, the thief CPU1 at step 2.
    steps = [(0, "load", T), (1, "store", T), (0, "load", T)]
    assert run_benchmark(steps) == [
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"coherence": 64}, {"coherence": 64}, {(1, 2): 64}),
    ]


def test_benchmark_b_capacity_without_another_core():
    # 1: T, first at both levels.  2: S, first at both.  3: T again: each L1D
    # set took 16 newer lines for its 8 ways, and the L1D's 512-line shadow
    # 1024 newer lines: a capacity miss; the L2 kept T (T and page 16 in its
    # sets, of four ways): a hit.
    steps = [(0, "load", T), (0, "load", S), (0, "load", T)]
    assert run_benchmark(steps) == [
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"compulsory": 1024}, {"compulsory": 1024}, {}),
        ({"capacity": 64}, {"hit": 64}, {}),
    ]


def test_benchmark_c_taken_and_swept_is_capacity_of_the_l1d_coherence_of_the_l2():
    # The benchmark that tells the rules apart: a mark for the caches that
    # held the line, and no coherence miss once the cache's shadow let the
    # line go.
    #  1: CPU0 reads T and U: first at both levels.
    #  2: CPU1 writes T: first at both; T leaves CPU0's L1D and L2, both
    #     marked (both shadows hold T).
    #  3: CPU0 reads S: first at both.  Each L1D set holds U and seven sweep
    #     pages when the eighth (page 10) comes: U leaves the L1D, not the
    #     L2.  The L1D's shadow lets T and U go (1024 newer lines), and T's
    #     L1D mark with it; the L2's holds all 1152 lines.
    #  4: CPU0 reads V: first at both.
    #  5: CPU1 writes U (in CPU0's L2 only: marked there) and V (in CPU0's
    #     L1D and L2, whose shadows hold it: marked at both).
    #  6: CPU0 reads V: the L1D's shadow holds V (V and the sweep's last 7
    #     pages are its 512 lines), coherence at both levels.  Then T and U:
    #     the L1D's shadow has neither (T's mark went with it, U was never
    #     marked there), capacity; the L2's holds both, coherence.  The L2's
    #     coherence misses name the write that took the line from the L2.
    steps = [(0, "load", T + U), (1, "store", T), (0, "load", S), (0, "load", V),
             (1, "store", U + V), (0, "load", V), (0, "load", T), (0, "load", U)]
    outcomes = run_benchmark(steps)
    assert outcomes == [
        ({"compulsory": 128}, {"compulsory": 128}, {}),
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"compulsory": 1024}, {"compulsory": 1024}, {}),
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"compulsory": 128}, {"compulsory": 128}, {}),
        ({"coherence": 64}, {"coherence": 64}, {(1, 5): 64}),
        ({"capacity": 64}, {"coherence": 64}, {(1, 2): 64}),
        ({"capacity": 64}, {"coherence": 64}, {(1, 5): 64}),
    ]
    # The doc's whole-run counts (CPU1's L2 besides).
    assert by_cpu_and_level(steps, outcomes) == {
        (0, "L1D"): {"compulsory": 1216, "coherence": 64, "capacity": 128},
        (0, "L2"): {"compulsory": 1216, "coherence": 192},
        (1, "L1D"): {"compulsory": 192},
        (1, "L2"): {"compulsory": 192},
    }


def test_benchmark_d_an_upgrade_is_a_miss_of_the_l1d_and_of_the_l2():
    # 1: CPU0 reads T: first at both, Exclusive.  2: CPU1 reads T: first at
    # both; both Shared.  3: CPU0 writes T: its L1D and L2 hold T Shared, an
    # upgrade at both levels; T leaves CPU1's L1D and L2, both marked.
    # 4: CPU1 reads T: coherence at both levels, the thief CPU0 at step 3.
    steps = [(0, "load", T), (1, "load", T), (0, "store", T), (1, "load", T)]
    assert run_benchmark(steps) == [
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"compulsory": 64}, {"compulsory": 64}, {}),
        ({"upgrade": 64}, {"upgrade": 64}, {}),
        ({"coherence": 64}, {"coherence": 64}, {(0, 3): 64}),
    ]


def test_an_upgrade_becomes_a_miss_row_of_the_l1d_and_of_the_l2():
    # The results table (cache_tables.raw_misses) from the plugin's miss
    # record of an upgrade as the model gives it: one row at each level.
    m = small(cores=2)
    m.access(0, "load", 0)
    m.access(1, "load", 0)
    up = m.access(0, "store", 0, pc=0x40)
    record = pd.DataFrame({"cpu": [0], "pc": [0x40], "kind": ["write"], "data": [0],
                           "l1": [up.l1], "l2": [up.l2], "l3": [up.l3], "count": [1],
                           "cycles": [up.cycles]})
    rows = raw_misses(record)
    assert sorted(zip(rows["level"], rows["cause"])) == [("L1D", "upgrade"), ("L2", "upgrade")]
