"""bench/replay.c, the driver that measures the model without QEMU, still
builds against the plugin's source and replays a stream as the plugin would.
The stream is four accesses to one line by two CPUs; the outcomes are worked
out by hand below (skylake-4core's caches, inclusive L3)."""

import struct
import subprocess
from pathlib import Path

import pandas as pd

from hotline import paths
from hotline.simulate.qemu import plugin_output
from hotline.simulate.qemu.plugins import PLUGINS, plugin_sources
from tests.conftest import require_tools

OPTIONS = ["cpus=2", "line=64", "l1i=32768:8:4", "l1d=32768:8:4", "l2=262144:4:12",
           "l3=8388608:16:42", "inclusion=inclusive", "memory=250", "peer=60", "sb=56:64",
           "vmemmap=0xffffea0000000000", "page_size=64"]
LINE, READER, WRITER = 0x10000, 0x401000, 0x402000


def access(core: int, store: int, pc: int, vaddr: int = 0x7F0000, paddr: int = LINE) -> bytes:
    """bench/replay.c's struct event: type, core, store, locked, size, pc,
    vaddr, paddr (user data: kept as key 0)."""
    return struct.pack("<BBBBIQQQ", ord("A"), core, store, 0, 8, pc, vaddr, paddr)


def build_replay(tmp_path: Path) -> Path:
    require_tools("gcc")
    replay = tmp_path / "replay"
    sources = plugin_sources("hotline-cache")    # the plugin's, and the model's
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread",
                    *(f"-I{d}" for d in dict.fromkeys(s.parent for s in sources)),
                    "-I", str(PLUGINS), "-o", str(replay), str(paths.REPO / "bench" / "replay.c"),
                    *map(str, sources)], check=True)
    return replay


def test_replay_gives_the_outcomes_worked_out_by_hand(tmp_path):
    replay = build_replay(tmp_path)
    (tmp_path / "t.trace").write_bytes(b"".join([
        access(0, 0, READER),   # CPU 0 reads: compulsory at every level, from memory (250)
        access(0, 0, READER),   # again: an L1 hit
        access(1, 1, WRITER),   # CPU 1 writes: compulsory in its L1 and L2, an L3 hit (42);
                                # CPU 0's copies are invalidated
        access(0, 0, READER),   # CPU 0 reads: coherence in L1 and L2, from CPU 1's (60)
    ]))
    subprocess.run([str(replay), "t.trace", "out", *OPTIONS], cwd=tmp_path, check=True,
                   capture_output=True)
    frames = plugin_output.read(Path(tmp_path / "out"))
    misses = frames["miss"].sort_values(["cpu", "l1"]).reset_index(drop=True)
    expected = pd.DataFrame([
        (0, READER, "read", "coherence", "coherence", "hit", 1, 60),
        (0, READER, "read", "compulsory", "compulsory", "compulsory", 1, 250),
        (1, WRITER, "write", "compulsory", "compulsory", "hit", 1, 42),
    ], columns=["cpu", "pc", "kind", "l1", "l2", "l3", "count", "cycles"])
    assert misses[list(expected.columns)].astype(str).values.tolist() == \
        expected.astype(str).values.tolist()
    stolen = frames["stolen"]
    assert stolen[["cpu", "pc", "thief_cpu", "thief_pc", "count"]].values.tolist() == \
        [[0, READER, 1, WRITER, 1]]
    insns = frames["insn"].set_index("pc")
    assert insns.loc[READER, "accesses"] == 3 and insns.loc[READER, "l1_hit"] == 1


KERNEL_DATA = 0xFFFF888000000000    # the direct map: a miss's data key is its line
LINES = 100_000


def test_every_miss_tuple_survives_the_tables_growing(tmp_path):
    """The plugin's tuple tables start at 2^16 buckets and double as they
    fill.  CPU 0 reads 100,000 kernel lines once each at one instruction,
    then again at another: 200,000 miss tuples, each counted once.  The
    first pass is compulsory at every level; the second finds every line
    gone from the L1 (512 lines) and the L2 (4,096) by capacity (a sweep
    of the whole set keeps nothing), and in the L3 (131,072 lines, 6.4 MB
    used of 8)."""
    replay = build_replay(tmp_path)
    first, second = 0xFFFFFFFF81000000, 0xFFFFFFFF81000010
    (tmp_path / "t.trace").write_bytes(b"".join(
        access(0, 0, pc, KERNEL_DATA + i * 64, i * 64)
        for pc in (first, second) for i in range(LINES)))
    subprocess.run([str(replay), "t.trace", "out", *OPTIONS], cwd=tmp_path, check=True,
                   capture_output=True)
    misses = plugin_output.read(Path(tmp_path / "out"))["miss"]
    assert len(misses) == 2 * LINES and (misses["count"] == 1).all()
    for pc, outcomes in ((first, ["compulsory"] * 3), (second, ["capacity", "capacity", "hit"])):
        mine = misses[misses["pc"] == pc]
        assert sorted(mine["data"]) == [KERNEL_DATA + i * 64 for i in range(LINES)]
        assert mine[["l1", "l2", "l3"]].drop_duplicates().values.tolist() == [outcomes]


def test_a_repeated_miss_finds_its_tuple_after_the_tables_grew(tmp_path):
    """An instruction's record remembers the slot of the tuple it counted
    last, to count a repeat there; when the table grows, the tuples move.
    CPU 0's user load reads a user line (compulsory at every level, data
    key 0), another instruction then counts 100,000 kernel-line tuples (the
    table doubles five times), and the user load reads a second user line:
    the same key again, so its one tuple counts 2, and no other counts more
    than 1."""
    replay = build_replay(tmp_path)
    user, kernel = 0x401000, 0xFFFFFFFF81000000
    (tmp_path / "t.trace").write_bytes(b"".join([
        access(0, 0, user, 0x7F0000, 0x10000000),
        *(access(0, 0, kernel, KERNEL_DATA + i * 64, i * 64) for i in range(LINES)),
        access(0, 0, user, 0x7F1000, 0x10001000),
    ]))
    subprocess.run([str(replay), "t.trace", "out", *OPTIONS], cwd=tmp_path, check=True,
                   capture_output=True)
    misses = plugin_output.read(Path(tmp_path / "out"))["miss"]
    mine = misses[misses["pc"] == user]
    assert mine[["data", "l1", "l2", "l3", "count"]].values.tolist() == \
        [[0, "compulsory", "compulsory", "compulsory", 2]]
    assert len(misses) == LINES + 1 and misses["count"].sum() == LINES + 2
