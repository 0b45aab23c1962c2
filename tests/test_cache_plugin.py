"""The hotline-cache plugin on the validation microbenchmarks (cachebench,
smoke scale, 4 vCPUs, skylake-4core, deterministic mode), against outcomes
derived from the benchmark's code and the system's caches, and run twice for
bit-identical results tables.

Each benchmark runs in its own region of interest.  The model sees only
accesses inside regions of interest, so a line a benchmark's warm-up
touched outside is still absent from the model's caches when it begins."""


import pandas as pd
import pytest

from hotline import paths, specs
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from hotline.simulate.qemu import plugin_output
from hotline.workloads import load_workload
from tests.conftest import busiest, run_twice, within

pytestmark = pytest.mark.boot
SPEC = """description = "cache plugin on cachebench"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{ name = "cachebench", scale = "smoke" }]

[qemu]
plugin = "hotline-cache"
"""
TABLES = ("misses", "instructions", "coherence", "rapw", "roi")
SMOKE = load_workload("cachebench").scales["smoke"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return [run for (run,) in run_twice(SPEC, tmp_path_factory.mktemp("cache"))]


@pytest.fixture(scope="module")
def tables(runs):
    return {name: pd.read_parquet(runs[0] / f"{name}.parquet") for name in TABLES}


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    """cachebench's functions: compiled as the image compiles it (static, not
    position-independent), so at the same addresses as in the guest."""
    return guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c",
        tmp_path_factory.mktemp("cb"))


def misses_at(tables, pc, level):
    m = tables["misses"]
    m = m[(m["pc"] == pc) & (m["level"] == level)]
    return m.groupby("cause")["count"].sum().to_dict()


def test_deterministic_runs_give_bit_identical_tables(runs):
    for name in TABLES:
        first, second = ((d / f"{name}.parquet").read_bytes() for d in runs)
        assert first == second, f"{name}.parquet differs between two deterministic runs"


def test_sweeps_miss_once_per_line_per_pass_beyond_each_capacity(tables, functions):
    # One load per STRIDE (64) bytes, so one per line.  The small array
    # (8 KiB) fits in the 32 KiB L1D: its first pass misses each of its
    # lines once everywhere (compulsory), the second pass hits.  The large
    # array (1 MiB) exceeds the 256 KiB L2 but fits the 8 MiB L3: every pass
    # misses every line in L1D and L2 (compulsory, then capacity: an LRU
    # cache of any associativity loses a cyclic sweep larger than itself),
    # and only the first pass misses the L3.
    #
    # One allowance, for the kernel's page allocator: a page the small
    # sweep's process freed may come back in the large array (pages are
    # reused hottest first).  Its lines were seen before, so they are not
    # compulsory misses: in the large sweep's first pass each either hits
    # (still cached when reached) or is a capacity miss (evicted by then).
    # So compulsory misses are small + large less R lines, R whole pages (64
    # lines each) of the small array, and capacity misses are the later
    # passes' (exact) plus at most R.
    line, page_lines = 64, 4096 // 64
    small = SMOKE["small_kib"] * 1024 // line
    large = SMOKE["large_kib"] * 1024 // line
    passes = SMOKE["passes"]
    pc, accesses = busiest(tables, functions, "sweep", "read")
    assert accesses == passes * (small + large)
    for level in ("L1D", "L2", "L3"):
        misses = misses_at(tables, pc, level)
        later_passes = (passes - 1) * large if level != "L3" else 0
        assert set(misses) <= {"compulsory", "capacity"}, (level, misses)
        reused = small + large - misses["compulsory"]
        assert 0 <= reused <= small and reused % page_lines == 0, (level, misses)
        assert later_passes <= misses.get("capacity", 0) <= later_passes + reused, (level, misses)


def test_ping_pong_coherence_misses_equal_handoffs(tables, functions):
    # H handoffs of one line: player 0 stores turns 1, 3, ..., H - 1 and
    # player 1 turns 2, 4, ..., H, each after waiting for the other's.  A
    # wait after the other's store misses on a line the other core took
    # (coherence), and a store after the other's read finds the line Shared
    # (an upgrade).  Player 1's first read in the region is its first touch
    # (compulsory).  Where the vCPUs' turns fall decides whether it comes
    # before player 0's first store (then that store is an upgrade, and
    # player 1 misses after it: H - 1 coherence misses, H upgrades) or
    # after it (player 1 sees turn 1 at once: H - 2 and H - 1).  Either
    # way, every coherence miss is stolen by a store of the other player.
    handoffs = SMOKE["handoffs"]
    spin, _ = busiest(tables, functions, "player", "read")
    store, stores = busiest(tables, functions, "player", "write")
    assert stores == handoffs
    spins, upgrades = misses_at(tables, spin, "L1D"), misses_at(tables, store, "L1D")
    assert set(spins) == {"compulsory", "coherence"} and spins["compulsory"] == 1
    assert set(upgrades) == {"upgrade"}
    assert (spins["coherence"], upgrades["upgrade"]) in {(handoffs - 2, handoffs - 1),
                                                         (handoffs - 1, handoffs)}
    thieves = within(tables["coherence"], functions, "player")
    assert set(thieves["cpu"]) == {0, 1} and set(thieves["thief_cpu"]) == {0, 1}
    assert (thieves["cpu"] != thieves["thief_cpu"]).all()
    assert within(thieves, functions, "player", "thief_pc")["count"].sum() == \
        spins["coherence"]


def test_false_sharing_pays_one_miss_and_one_upgrade_per_turn(tables, functions):
    # Two threads increment their own counter, both in one line: a load and
    # a store per increment.  However the scheduler interleaves them, in
    # turns (stretches of one thread running), each turn's first load misses
    # (coherence: the other core wrote; but in each core's first turn), T
    # load misses in all, and after it the turn's first store misses too:
    # the line came Shared (the other core still had it), or, if the other
    # core's store came between the load and the store, it is gone.  The
    # weave interleaves blocks, and icount ends a turn inside a block, so an
    # increment's load and store can fall on either side of the other
    # core's store: the store's miss is then coherence, not an upgrade (the
    # line is back Modified, and the next turn of this core may start with
    # its store).  Only the very first turn keeps the line Exclusive.  A
    # split the other way (the other core's load between this core's load
    # and store) makes an upgrade without a load miss, and then the other
    # core's store a coherence miss.  So load misses: T - 2 coherence; store
    # misses: upgrades U and coherence C only, with U - C <= T - 1 <= U + C.
    # A core's first load of the line is no handoff of this test: compulsory
    # if the core never touched that physical line, else conflict or
    # capacity, or coherence where the core still held it and another
    # core's write took it, for cachebench runs each test as a process of
    # its own, and the kernel may hand the counters a page that an earlier
    # test's array had on that CPU.  So at least T - 2 coherence load
    # misses, and at most two of another cause; and each first load that
    # was coherence found the line in the other core's cache, so that the
    # store after it upgraded too: up to T - 1 + held upgrades net of the
    # stolen, where held is the first loads that were coherence.
    load, loads = busiest(tables, functions, "incrementer", "read")
    store, stores = busiest(tables, functions, "incrementer", "write")
    assert loads == stores == 2 * SMOKE["iterations"]
    load_misses = misses_at(tables, load, "L1D")
    turns = sum(load_misses.values())
    assert turns >= 2 and turns - 2 <= load_misses.get("coherence", 0) <= turns
    assert set(load_misses) - {"coherence"} <= {"compulsory", "conflict", "capacity"}
    store_misses = misses_at(tables, store, "L1D")
    assert set(store_misses) <= {"upgrade", "coherence"}
    upgrades, stolen = store_misses.get("upgrade", 0), store_misses.get("coherence", 0)
    held = load_misses.get("coherence", 0) - (turns - 2)
    assert upgrades - stolen <= turns - 1 + held and turns - 1 <= upgrades + stolen


def test_store_byte_then_load_word_is_a_read_after_partial_write(tables, functions):
    # storeload: each iteration stores a byte and then loads the 8-byte word
    # holding it, with nothing between: one event per iteration, all on one
    # (store, load) pair of the benchmark's instructions.
    pairs = within(tables["rapw"], functions, "storeload", "load_pc")
    assert pairs["count"].tolist() == [SMOKE["iterations"]]
    assert within(pairs, functions, "storeload", "store_pc")["count"].tolist() == \
        [SMOKE["iterations"]]


def test_roi_instructions_are_counted_per_cpu(tables):
    cpus = specs.load_system("skylake-4core").cpus
    assert tables["roi"]["cpu"].tolist() == list(range(cpus))
    assert tables["roi"]["instructions"].sum() > SMOKE["handoffs"]


@pytest.fixture(scope="module")
def markers_run(tmp_path_factory):
    """roimarkers: begin A(n) reset B(n) dump B(n) end A(n) begin A(n) end."""
    tmp = tmp_path_factory.mktemp("markers")
    spec = tmp / "markers.toml"
    spec.write_text(SPEC.replace('name = "cachebench"', 'name = "roimarkers"'))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp / "results"))
        (result,) = run_experiment(spec, rerun=True)
    assert result.failure is None, result.failure
    symbols = guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / "roimarkers" / "roimarkers.c", tmp)
    return result.directory, symbols


def test_reset_clears_and_dump_writes_the_counts_so_far(markers_run):
    # Counted: A(n) is cleared by the reset; B(n), then the dump (B: n);
    # B(n) again; A(n) outside any region, not counted; A(n) in the second
    # region.  So at the end A: n and B: 2n; in the dump B: n and no A.
    directory, symbols = markers_run
    n = load_workload("roimarkers").scales["smoke"]["iterations"]

    def per_loop(rapw):
        return {name: int(within(rapw, symbols, name, "load_pc")["count"].sum())
                for name in ("loop_a", "loop_b")}

    final = pd.read_parquet(directory / "rapw.parquet")
    assert per_loop(final) == {"loop_a": n, "loop_b": 2 * n}
    dump = plugin_output.read(directory / "hotline-cache.out.dump1")
    assert per_loop(dump["rapw"]) == {"loop_a": 0, "loop_b": n}
    assert not (directory / "hotline-cache.out.dump2").exists()
