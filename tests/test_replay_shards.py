"""bench/replay_shards.c, the cache model sharded by cache set: on a stream
written here, every hit and miss per level is the one model's, with one
shard or several; the counts of a tiny stream are those worked out by hand
below; and a number of shards the geometry cannot keep independent is
refused in one line."""

import random
import re
import struct
import subprocess
from pathlib import Path

import pytest

from hotline import paths
from tests.conftest import require_tools

# Tiny caches, so that a few accesses fill them: 64-byte lines; the L1D has
# 2 sets of 2 ways (4 lines), the L1I 8 sets, the L2 4 sets of 2 ways, the
# inclusive L3 8 sets.  Two shards at most: the L1D has 2 sets.
TINY = ["cpus=2", "line=64", "l1i=1024:2:1", "l1d=256:2:1", "l2=512:2:10", "l3=1024:2:30",
        "inclusion=inclusive", "memory=100", "peer=60", "sb=4:64"]
ROW = re.compile(r"^(l1i|l1d|l2|l3)\s+(\S+)\s+(\d+)\s+(\d+)\s+[+-]\d+$")
TOTAL = re.compile(r"^(partial-writes|miss-cycles|accesses)\s+(\d+)\s+(\d+)\s+[+-]\d+$")


def block(core: int, start: int, end: int, insns: int) -> bytes:
    """plugins/hotline-cache/trace-event.h's struct trace_event, read by
    bench/trace-file.h: type, core, store, locked, size, pc, vaddr, paddr;
    a block's pc is its start, its vaddr its end, its size its instructions."""
    return struct.pack("<BBBBIQQQ", ord("B"), core, 0, 0, insns, start, end, 0)


def access(core: int, store: int, paddr: int, size: int = 8, locked: int = 0,
           pc: int = 0x401000) -> bytes:
    return struct.pack("<BBBBIQQQ", ord("A"), core, store, locked, size, pc,
                       0x7F0000000000 + paddr, paddr)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    require_tools("gcc")
    out = tmp_path_factory.mktemp("replay_shards") / "replay_shards"
    repo = paths.REPO
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread",
                    "-I", str(repo / "plugins" / "cachemodel"),
                    "-I", str(repo / "plugins" / "hotline-cache"), "-I", str(repo / "bench"),
                    "-o", str(out), str(repo / "bench" / "replay_shards.c"),
                    str(repo / "plugins" / "cachemodel" / "cachemodel.c")], check=True)
    return out


def replayed(program: Path, tmp_path: Path, stream: bytes, shards: int, *options: str) -> dict:
    """The totals of the one model and of `shards` shards: {(level,
    outcome): (one, sharded)}, and the same for partial-writes, miss-cycles
    and accesses (level "")."""
    trace = tmp_path / "t.trace"
    trace.write_bytes(stream)
    done = subprocess.run([str(program), str(trace), str(shards), *options],
                          capture_output=True, text=True, check=True)
    counts = {}
    for line in done.stdout.splitlines():
        if m := ROW.match(line):
            counts[m[1], m[2]] = (int(m[3]), int(m[4]))
        elif m := TOTAL.match(line):
            counts["", m[1]] = (int(m[2]), int(m[3]))
    assert counts, done.stdout
    return counts


def refused(program: Path, tmp_path: Path, *args: str, stream: bytes = access(0, 0, 0)) -> str:
    trace = tmp_path / "t.trace"
    trace.write_bytes(stream)
    done = subprocess.run([str(program), str(trace), *args], capture_output=True, text=True)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.startswith("replay_shards: ") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


L0, L1 = 0, 64                      # two data lines: shard 0 and shard 1
CODE = 0x401000                     # a user block over two lines (0x10040, 0x10041)


def test_a_tiny_stream_counts_as_worked_out_by_hand(program, tmp_path):
    stream = b"".join([
        block(0, CODE, CODE + 70, 3),   # 2 fetch lines: compulsory everywhere, memory (2 x 100)
        block(0, CODE, CODE + 70, 3),   # again: 2 L1I hits (the MRU line, the one before it)
        access(0, 0, L0),       # 1 CPU 0 reads line 0: compulsory x3, memory (100), Exclusive
        access(0, 0, L0),       # 2 again: an L1D hit
        access(0, 0, L1),       # 3 line 1: compulsory x3, memory (100)
        access(1, 1, L0),       # 4 CPU 1 writes line 0: compulsory in its L1D and L2, an L3
                                #   hit (30); CPU 0's copies go, marked stolen
        access(0, 0, L0),       # 5 CPU 0 reads it: coherence in L1D and L2, an L3 hit, the
                                #   data from CPU 1's Modified copy (60); both now Shared
        access(0, 1, L0, 4),    # 6 CPU 0 writes 4 bytes: an upgrade of L1D and L2 (60);
                                #   CPU 1's copies go, marked stolen
        access(0, 0, L0, 8),    # 7 reads 8 bytes over the 4 just written: an L1D hit, and a
                                #   read after a partial write
        access(0, 0, L0 + 60),  # 8 8 bytes across lines 0 and 1: both L1D hits
        access(1, 0, L0),       # 9 CPU 1 reads line 0: coherence in L1D and L2, an L3 hit,
                                #   from CPU 0's Modified copy (60)
    ])
    expected = {
        ("l1i", "compulsory"): 2, ("l1i", "hit"): 2,
        ("l1d", "compulsory"): 3, ("l1d", "hit"): 3, ("l1d", "coherence"): 2,
        ("l1d", "upgrade"): 1,
        ("l2", "not-reached"): 5, ("l2", "compulsory"): 5, ("l2", "coherence"): 2,
        ("l2", "upgrade"): 1,
        ("l3", "not-reached"): 6, ("l3", "compulsory"): 4, ("l3", "hit"): 3,
        ("", "partial-writes"): 1, ("", "miss-cycles"): 2 * 100 + 100 + 100 + 30 + 60 + 60 + 60,
        ("", "accesses"): 13,
    }
    counts = replayed(program, tmp_path, stream, 2, *TINY)
    assert {k: one for k, (one, _) in counts.items()} == expected
    assert {k: sharded for k, (_, sharded) in counts.items()} == expected


def random_stream(seed: int, events: int) -> bytes:
    """Four cores over a few dozen lines (so that lines are shared, written,
    pushed out and taken back), blocks of user and kernel code, accesses of
    1 to 8 bytes, some across lines, some locked read-modify-writes."""
    r = random.Random(seed)
    out = []
    code = [(0xFFFFFFFF81000000 + r.randrange(1 << 12) * 4, r.randrange(1, 8)) for _ in range(40)]
    code += [(0x400000 + r.randrange(1 << 12) * 4, r.randrange(1, 8)) for _ in range(20)]
    for _ in range(events):
        core = r.randrange(4)
        start, insns = r.choice(code)
        out.append(block(core, start, start + insns * 4, insns))
        for _ in range(r.randrange(3)):
            paddr = r.randrange(48) * 64 + r.randrange(64)
            size = r.choice([1, 2, 4, 8])
            pc = start + r.randrange(insns) * 4
            if r.random() < 0.05:       # a locked RMW: its read, then its write
                out.append(access(core, 0, paddr, size, 1, pc))
                out.append(access(core, 1, paddr, size, 1, pc))
            else:
                out.append(access(core, r.randrange(2), paddr, size, 0, pc))
    return b"".join(out)


@pytest.mark.parametrize("shards", [1, 2, 4])
def test_shards_give_the_one_models_hits_and_misses(program, tmp_path, shards):
    """Hits and misses are decided per set, and every core's caches of a set
    are in one shard: at each level the same hits, the same misses in all,
    the same compulsory misses and upgrades, and the same latencies.  (Which
    of coherence, conflict and capacity a miss is, and the reads after a
    partial write, may differ: the shadows and store buffers are split.)"""
    options = ["cpus=4", "line=64", "l1i=2048:2:1", "l1d=1024:2:1", "l2=4096:4:10",
               "l3=16384:4:30", "inclusion=inclusive", "memory=100", "peer=60", "sb=8:16"]
    counts = replayed(program, tmp_path, random_stream(shards, 20000), shards, *options)
    for level in ("l1i", "l1d", "l2", "l3"):
        def misses(i, level=level):
            return sum(v[i] for (lv, o), v in counts.items()
                       if lv == level and o not in ("hit", "not-reached"))
        assert misses(0) == misses(1) > 0
        for outcome in ("hit", "not-reached", "compulsory", "upgrade"):
            one, sharded = counts.get((level, outcome), (0, 0))
            assert one == sharded, (level, outcome)
    assert counts["l1d", "upgrade"][0] > 0 and counts["l1d", "coherence"][0] > 0
    for total in ("miss-cycles", "accesses"):
        assert counts["", total][0] == counts["", total][1]


def test_shards_the_geometry_cannot_keep_apart_are_refused(program, tmp_path):
    assert "power of two" in refused(program, tmp_path, "3", *TINY)
    assert "power of two" in refused(program, tmp_path, "0", *TINY)
    assert "2 sets" in refused(program, tmp_path, "4", *TINY)      # the L1D's
    assert "2 sets" in refused(program, tmp_path, "2", "shard_bit=1", *TINY)


def test_bad_arguments_are_refused(program, tmp_path):
    refused(program, tmp_path, "two", *TINY)
    refused(program, tmp_path, "2", "l1d=32k")
    refused(program, tmp_path, "2", "l1d=256:2:1", "color=red")
    refused(program, tmp_path, "2", "l1d=3000:2:1")                # not whole sets
    assert "core 1" in refused(program, tmp_path, "2", "cpus=1", stream=access(1, 0, 0))
