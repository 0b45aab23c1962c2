"""bench/replay.c, the driver that measures the model without QEMU, still
builds against the plugin's source and replays a stream as the plugin would.
The stream is four accesses to one line by two CPUs; the outcomes are worked
out by hand below (skylake-4core's caches, inclusive L3).  bench/replay_contrib.c,
QEMU's cache plugin on such a stream, is checked the same way where a QEMU
source tree is at hand."""

import os
import random
import struct
import subprocess
from pathlib import Path

import pandas as pd
import pytest

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


def build_replay(tmp_path: Path, *flags: str) -> Path:
    require_tools("gcc")
    replay = tmp_path / "replay"
    sources = plugin_sources("hotline-cache")    # the plugin's, and the model's
    subprocess.run(["gcc", *(flags or ["-O2"]), "-Wall", "-Wextra", "-Werror", "-pthread",
                    *(f"-I{d}" for d in dict.fromkeys(s.parent for s in sources)),
                    "-I", str(PLUGINS), "-o", str(replay), str(paths.REPO / "bench" / "replay.c"),
                    *map(str, sources)], check=True)
    return replay


def replayed(tmp_path: Path, stream: bytes, *how: str, options=OPTIONS) -> dict:
    """The replay's output tables for the stream, replayed as `how` says
    (nothing: turn by turn; "woven")."""
    replay = build_replay(tmp_path)
    (tmp_path / "t.trace").write_bytes(stream)
    subprocess.run([str(replay), "t.trace", "out", *how, *options], cwd=tmp_path, check=True,
                   capture_output=True)
    return plugin_output.read(Path(tmp_path / "out"))


def test_replay_gives_the_outcomes_worked_out_by_hand(tmp_path):
    frames = replayed(tmp_path, b"".join([
        access(0, 0, READER),   # CPU 0 reads: compulsory at every level, from memory (250)
        access(0, 0, READER),   # again: an L1 hit
        access(1, 1, WRITER),   # CPU 1 writes: compulsory in its L1 and L2, an L3 hit (42);
                                # CPU 0's copies are invalidated
        access(0, 0, READER),   # CPU 0 reads: coherence in L1 and L2, from CPU 1's (60)
    ]))
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
    first, second = 0xFFFFFFFF81000000, 0xFFFFFFFF81000010
    misses = replayed(tmp_path, b"".join(
        access(0, 0, pc, KERNEL_DATA + i * 64, i * 64)
        for pc in (first, second) for i in range(LINES)))["miss"]
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
    user, kernel = 0x401000, 0xFFFFFFFF81000000
    misses = replayed(tmp_path, b"".join([
        access(0, 0, user, 0x7F0000, 0x10000000),
        *(access(0, 0, kernel, KERNEL_DATA + i * 64, i * 64) for i in range(LINES)),
        access(0, 0, user, 0x7F1000, 0x10001000),
    ]))["miss"]
    mine = misses[misses["pc"] == user]
    assert mine[["data", "l1", "l2", "l3", "count"]].values.tolist() == \
        [[0, "compulsory", "compulsory", "compulsory", 2]]
    assert len(misses) == LINES + 1 and misses["count"].sum() == LINES + 2


def block(core: int, pc: int, insns: int = 1) -> bytes:
    """bench/replay.c's struct event for an executed block: its
    instructions in size, its start in pc, its end in vaddr."""
    return struct.pack("<BBBBIQQQ", ord("B"), core, 0, 0, insns, pc, pc + 4, 0)


DEADLINE = struct.pack("<BBBBIQQQ", ord("D"), 0, 0, 0, 0, 0, 0, 0)


def writes(core: int, times: int, word: int | None = None) -> bytes:
    """A CPU's loop of `times` one-instruction blocks, each writing a word
    of the line, by default a word of its own: each incrementer of the
    false-sharing pair."""
    pc = (READER, WRITER)[core]
    paddr = LINE + 8 * (core if word is None else word)
    return b"".join(block(core, pc) + access(core, 1, pc, paddr=paddr) for _ in range(times))


def woven_outcomes(tmp_path: Path, stream: bytes, *how: str) -> tuple[dict, int]:
    """The L1D outcomes of the data writes ({outcome: count}) and the
    coherence misses counted with a thief."""
    frames = replayed(tmp_path, stream, *how)
    misses = frames["miss"][frames["miss"]["kind"] == "write"]
    return (misses.groupby("l1")["count"].sum().to_dict(), int(frames["stolen"]["count"].sum()))


@pytest.mark.parametrize("how, stream, outcomes", [
    # As QEMU ran them: CPU 0's five writes, then CPU 1's.  Each CPU's first
    # write is compulsory (the line was never in its L1), the rest hit.
    ((), writes(0, 5) + writes(1, 5), {"compulsory": 2}),
    # Woven, one window: the CPUs alternate block by block, CPU 0 first on
    # the tie.  After the two compulsory writes each write finds the line
    # taken by the other CPU's write before it: 10 - 2 coherence misses.
    (("woven",), writes(0, 5) + writes(1, 5), {"compulsory": 2, "coherence": 8}),
    # Woven, CPU 0 alone in the first window (three writes: compulsory, two
    # hits), then CPU 1's three and CPU 0's two in the second: CPU 0 first
    # on the tie (a hit), CPU 1 (compulsory), CPU 0 (coherence), CPU 1
    # (coherence), CPU 1 again, having run no more than CPU 0, which has
    # nothing left (a hit).
    (("woven",), writes(0, 3) + DEADLINE + writes(1, 3) + writes(0, 2),
     {"compulsory": 2, "coherence": 2}),
], ids=["turns", "one-window", "two-windows"])
def test_the_weave_interleaves_each_window_block_by_block(tmp_path, how, stream, outcomes):
    # weave.c: the next block is the one of the CPU that has run the fewest
    # instructions in the window; a deadline starts a new window.
    counted, stolen = woven_outcomes(tmp_path, stream, *how)
    assert counted == outcomes
    assert stolen == outcomes.get("coherence", 0)     # each with its thief


def test_the_weave_keeps_qemus_order_of_accesses_to_one_word(tmp_path):
    # Both CPUs write the same word: each write must follow the other CPU's
    # write before it in QEMU's order, whose value it overwrote, so the
    # weave changes nothing: CPU 0's five writes, then CPU 1's.
    stream = writes(0, 5, word=0) + writes(1, 5, word=0)
    assert woven_outcomes(tmp_path, stream, "woven")[0] == {"compulsory": 2}


def test_a_read_waits_for_the_write_it_saw_and_a_write_for_the_reads_before_it(tmp_path):
    # The ping-pong's handoff, as QEMU ran it: CPU 0 spins (three reads of
    # the word), writes it, spins on (two reads); then CPU 1's turn reads the
    # written value (three reads) and writes back; every block one
    # instruction.  CPU 1's reads must follow CPU 0's write (their value),
    # CPU 1's write CPU 0's last read (which read the value before it).
    # Woven (instructions run before each access in brackets; ties to CPU
    # 0): 0r[0] compulsory; CPU 1's first read waits; 0r[1], 0r[2] hits;
    # 0w[3] a hit (the line is CPU 0's alone); now CPU 1, behind: 1r[0]
    # compulsory (the line comes from CPU 0, which keeps a shared copy),
    # 1r[1], 1r[2] hits; its write waits; 0r[4], 0r[5] hits in the shared
    # copy; 1w[3] an upgrade.  Without the waits CPU 1 would read before
    # CPU 0's write, and CPU 0's write would take the line from it.
    def spin(core, reads):
        pc = (READER, WRITER)[core]
        return b"".join(block(core, pc) + access(core, 0, pc, paddr=LINE) for _ in range(reads))
    stream = spin(0, 3) + block(0, READER) + access(0, 1, READER, paddr=LINE) + spin(0, 2) + \
        spin(1, 3) + block(1, WRITER) + access(1, 1, WRITER, paddr=LINE)
    misses = replayed(tmp_path, stream, "woven")["miss"]
    data = misses[misses["kind"] != "fetch"]
    assert data.groupby(["cpu", "kind", "l1"])["count"].sum().to_dict() == {
        (0, "read", "compulsory"): 1, (1, "read", "compulsory"): 1, (1, "write", "upgrade"): 1}


def test_the_weave_orders_by_instructions_run_not_by_blocks(tmp_path):
    # CPU 0 runs three blocks of 3 instructions, CPU 1 six of 1, each block
    # a write.  Instructions run before each write: CPU 0 at 0, 3, 6; CPU 1
    # at 0 to 5; ties go to CPU 0.  Woven: 0@0 (compulsory), 1@0
    # (compulsory), 1@1, 1@2 (hits), 0@3 (coherence), 1@3 (coherence),
    # 1@4, 1@5 (hits), 0@6 (coherence): 3.  Alternating block by block
    # would give 0 1 0 1 0 1 1 1 1: 4 coherence misses.
    stream = b"".join(block(0, READER, 3) + access(0, 1, READER) for _ in range(3)) + \
        writes(1, 6)
    assert woven_outcomes(tmp_path, stream, "woven")[0] == {"compulsory": 2, "coherence": 3}


def test_a_block_run_again_runs_while_its_access_waits(tmp_path):
    # weave.c holds a block that runs again right after itself as a flag on
    # the access after it; the block must still run at its turn when that
    # access waits, as a block held on its own would.  Three CPUs, every
    # block one instruction run again and again, one window, QEMU's order
    # CPU 0, 1, 2: CPU 0 writes its own line twice, then the word Y (word 0
    # of LINE); CPU 1 writes its own line twice, then word 1 of LINE; CPU 2
    # reads a line of its own, then Y twice, the value CPU 0 wrote.  Woven
    # (ties to the lower CPU): 0@0 1@0 2@0, 0@1 1@1, then CPU 2's block @1
    # runs and its read of Y waits for CPU 0's write; 0@2 writes Y; CPU 1
    # and 2 tie at 2 instructions: 1@2 writes LINE, then CPU 2 reads Y
    # (compulsory, from CPU 1) and @2 reads it again: a hit.  Had CPU 2's
    # block waited with its read, CPU 2 would have read at 1 instruction,
    # before CPU 1's write, and lost the line to it: a coherence miss.
    a, b, c = 0x401000, 0x402000, 0x403000
    own = lambda core, pc, paddr: block(core, pc) + access(core, 1, pc, paddr=paddr)
    read = lambda paddr: block(2, c) + access(2, 0, c, paddr=paddr)
    stream = own(0, a, LINE + 0x1000) * 2 + own(0, a, LINE) + \
        own(1, b, LINE + 0x2000) * 2 + own(1, b, LINE + 8) + \
        read(LINE + 0x3000) + read(LINE) * 2
    frames = replayed(tmp_path, stream, "woven", options=["cpus=3", *OPTIONS[1:]])
    misses = frames["miss"][(frames["miss"]["cpu"] == 2) & (frames["miss"]["kind"] == "read")]
    assert misses.groupby("l1")["count"].sum().to_dict() == {"compulsory": 2}
    assert frames["stolen"]["count"].sum() == 0


def test_every_wait_survives_the_words_table_growing(tmp_path):
    # The weave's table of the window's words starts with room for 3,072
    # lines' words and doubles as it fills (weave.c).  CPU 0 runs an empty
    # block, then writes 4,000 lines, one a block; CPU 1 reads the same
    # lines, one a block, so that each read comes one instruction before the
    # write whose value it read, and waits for it: each read finds its line
    # in the L3, where CPU 0's write put it.  A write forgotten when the
    # table grew would let its read go first: from memory, an L3 miss.
    lines = 4000
    stream = block(0, 0x404000) + \
        b"".join(block(0, WRITER) + access(0, 1, WRITER, paddr=LINE + 64 * i)
                 for i in range(lines)) + \
        b"".join(block(1, READER) + access(1, 0, READER, paddr=LINE + 64 * i)
                 for i in range(lines))
    misses = replayed(tmp_path, stream, "woven")["miss"]
    reads = misses[(misses["cpu"] == 1) & (misses["kind"] == "read")]
    assert reads.groupby("l3")["count"].sum().to_dict() == {"hit": lines}


@pytest.mark.skipif(not os.environ.get("QEMU_SOURCE"),
                    reason="QEMU_SOURCE (a QEMU 10.0.2 source tree) is not set: "
                           "bench/replay_contrib.c includes its contrib/plugins/cache.c")
def test_the_peers_replay_counts_what_its_private_caches_give_by_hand(tmp_path):
    require_tools("gcc", "pkg-config")
    qemu = Path(os.environ["QEMU_SOURCE"])
    glib = subprocess.run(["pkg-config", "--cflags", "--libs", "glib-2.0"], check=True,
                          capture_output=True, text=True).stdout.split()
    replay = tmp_path / "replay_contrib"
    subprocess.run(["gcc", "-O2", "-I", str(qemu / "include" / "qemu"),
                    "-I", str(qemu / "contrib" / "plugins"), "-I", str(PLUGINS / "hotline-cache"),
                    "-o", str(replay), str(paths.REPO / "bench" / "replay_contrib.c"), *glib],
                   check=True)
    (tmp_path / "t.trace").write_bytes(b"".join([
        block(0, 0x1000, 2),                           # two instructions on one line
        access(0, 0, READER, paddr=LINE),              # a miss
        access(0, 1, READER, paddr=LINE + 8),          # the same line: a hit
        block(1, 0x1000, 2),
        access(1, 0, READER, paddr=LINE),              # private caches: CPU 1 misses too
        DEADLINE,                                      # skipped
    ]))
    out = subprocess.run([str(replay), "t.trace", "cores=2", "l2=on", "evict=lru"],
                         cwd=tmp_path, check=True, capture_output=True, text=True).stderr
    rows = {line.split()[0]: [int(f) for f in line.split()[1:] if "%" not in f]
            for line in out.splitlines() if line.split()[:1] in (["0"], ["1"], ["sum"])}
    # data accesses, misses; instructions, misses; L2 accesses (the L1 misses), misses
    assert rows == {"0": [2, 1, 2, 1, 2, 2], "1": [1, 1, 2, 1, 2, 2], "sum": [3, 2, 4, 2, 4, 4]}


# ---- the model on its own thread (model_thread=on) ------------------------------

def random_stream(seed: int, events: int = 30_000, cores: int = 4) -> bytes:
    """A woven run's stream made up: four cores' one- to five-instruction
    blocks (a fifth run again right after themselves, as `rep stosb` does),
    each with up to three accesses of 1 to 8 bytes to 24 lines that every
    core shares (so that many accesses wait for another core's), some of
    them by locked instructions, and a deadline (D) every few hundred
    events, some windows with one core alone."""
    rng = random.Random(seed)
    out, last = [], [None] * cores
    while len(out) < events:
        core = rng.randrange(cores) if rng.random() < 0.9 else 0
        pc = last[core] if last[core] and rng.random() < 0.2 else \
            0xFFFFFFFF81000000 + core * 0x10000 + rng.randrange(40) * 16
        last[core] = pc
        out.append(block(core, pc, rng.randint(1, 5)))
        for k in range(rng.randrange(4)):
            at = pc + k
            locked = at % 7 == 0            # the same for every access of an instruction
            size = rng.choice((1, 2, 4, 8))
            paddr = LINE + 64 * rng.randrange(24) + size * rng.randrange(8 // size)
            out.append(struct.pack("<BBBBIQQQ", ord("A"), core, rng.random() < 0.4, locked,
                                   size, at, KERNEL_DATA + paddr, paddr))
        if rng.random() < 1 / 150:
            out.append(DEADLINE)
    return b"".join(out)


def replay_output(replay: Path, tmp_path: Path, stream: bytes, *how: str,
                  options=OPTIONS) -> bytes:
    """The replay's output file, byte for byte."""
    (tmp_path / "t.trace").write_bytes(stream)
    ran = subprocess.run([str(replay), "t.trace", "out", *how, *options], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0 and "ThreadSanitizer" not in ran.stderr, ran.stderr
    return (tmp_path / "out").read_bytes()


FOUR_CORES = ["cpus=4", *OPTIONS[1:]]
WOVEN_STREAMS = {
    "one-window": (writes(0, 5) + writes(1, 5), OPTIONS),
    "two-windows": (writes(0, 3) + DEADLINE + writes(1, 3) + writes(0, 2), OPTIONS),
    "one-word": (writes(0, 5, word=0) + writes(1, 5, word=0), OPTIONS),
    "random-1": (random_stream(1), FOUR_CORES),
    "random-2": (random_stream(2), FOUR_CORES),
}


@pytest.mark.parametrize("name", WOVEN_STREAMS)
def test_the_model_thread_counts_what_the_replays_one_thread_counts(tmp_path, name):
    # The weave on the model thread (the plugin's default) against the
    # weave on the replay's thread (the replay's default): the same output,
    # byte for byte.
    stream, options = WOVEN_STREAMS[name]
    replay = build_replay(tmp_path)
    alone = replay_output(replay, tmp_path, stream, "woven", options=options)
    threaded = replay_output(replay, tmp_path, stream, "woven", *options, "model_thread=on",
                             options=[])
    assert threaded == alone
    if name.startswith("random"):
        counts = plugin_output.read(tmp_path / "out")
        assert counts["stolen"]["count"].sum() > 100      # the cores did share
        assert (counts["insn"]["kind"] == "rmw").any()    # and lock


def test_the_model_thread_races_on_no_plain_word_with_the_hold(tmp_path):
    # The replay under ThreadSanitizer, model_thread=on: the hold on the
    # replay's thread, the weave and the model on the model thread, a window
    # at a time through the ring; TSan reports any word both touch unordered.
    plain = replay_output(build_replay(tmp_path), tmp_path, random_stream(3), "woven",
                          options=FOUR_CORES)
    try:
        replay = build_replay(tmp_path, "-O1", "-g", "-fsanitize=thread")
    except subprocess.CalledProcessError:
        pytest.skip("gcc cannot build with -fsanitize=thread here")
    assert replay_output(replay, tmp_path, random_stream(3), "woven", "model_thread=on",
                         options=FOUR_CORES) == plain
