"""The O3 cycle profile and the miss profile (configs/gem5/extras) on
microbenchmarks whose time and misses are known before they run, from the
system spec (pentium3-4way-o3: 3 wide, L1D 3 cycles, L2 10, memory 120 at
the core clock):

- the pointer chase through 1 MiB (cachebench chase; tests/test_chase.py
  shows every chase load misses the L1D): each load waits for the one
  before, so each is charged at least the memory latency, and at most that
  plus the L1D's and L2's on the way, a page walk of four levels served by
  the L2, and the crossbars' cycles; and the core says it waited for memory;
- the ping-pong's spin loop (a load of the ball, a compare, a branch): its
  loads hit the L1D but for the handoffs' few coherence misses, and each
  iteration's load depends on nothing before it, so the loop runs at no
  fewer than 1/width cycles an instruction (the width bounds it) and under
  one (L1 hits of 3 cycles, overlapped).  (Not the small sweep: the
  checkpoint restores no cache contents, so its first pass goes to memory.)
- the ping-pong's handoffs: each store that passes the ball takes the line
  from the other player, whose spin load then misses: a coherence miss
  whose thief is that store, on the other CPU.  The first pass of the
  ball comes from pingpong's own store, and after the last one no player
  is waiting, so at least handoffs - 2 such misses; at most two a
  handoff (a reader whose request overtakes the writer's store reads the
  old value and loses the line again).  The data comes from the other
  core's cache: each such miss waits at least the L1D's and the L2's
  latency on the way, and not longer than going to memory would; the
  cycle profile charges the waiting load to a peer's cache.
- the chase's sampled views: nearly every cycle of the chase is its load
  waiting for memory, so a sampling profiler's samples land during that
  wait.  The next-committing view names the stalled load itself.  The skid
  view (a Pentium III takes the counter's interrupt at the instruction
  boundary after what retires with the load, and reports the next
  instruction) names the instruction after the load's commit group: the
  chase's loop is add, load, cmp, jne, and the cmp and jne do not wait for
  the load (they test the step count), so they commit with it, three wide,
  and the next instruction is the next step's add, the loop's first.  So
  the load holds most of the chase's samples in the first view and hardly
  any in the second, where the add holds them.
- every view's samples, per core and region: one every sample_period
  unhalted cycles, so the region's unhalted cycles over the period, give or
  take the one a region's edge cuts.
- lockload (its own program, the last two regions): stores, then `lock
  andb` on a byte, then a load of the word holding it.  A locked
  instruction is a full barrier (gem5 runs it as fenced micro-ops): it
  cannot start before the stores have left the store buffer, and the load
  cannot pass it.  After four stores to lines that stay in the L1D, it is
  the loop's dearest instruction, at least half its cycles are the head
  waiting at a fence, and each execution takes at least one L1D access
  (its locked load) and at most six accesses (four stores and its own load
  and store) at the L1D's and the L2's latency each; its drains wait for
  stores that hit the L1D, a few cycles a call, but for the region's
  first four stores, which write their lines for the first time and go to
  memory.  After one store to a line
  not cached, its drain waits for that store's miss, served by memory: at
  least the memory latency less what the core overlapped before the lock
  reached the head (the store's commit), and no more than the memory
  latency plus the L1D's and L2's latencies and the crossbars' cycles; and
  the drain table's cycles of each lock add up to its barrier cycles.

Runs when GEM5 points at a gem5 built with the extension; the boot to the
checkpoint takes minutes."""

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from tests.conftest import extension_built

pytestmark = [pytest.mark.boot, pytest.mark.skipif(
    not extension_built(), reason="needs GEM5, a gem5 built with hotline's extension "
                                  "(EXTRAS=configs/gem5/extras: README.md, gem5)")]
SYSTEM = "pentium3-4way-o3"
STEPS = 4000
HANDOFFS = 20
LOCKS = 1000
SPEC = f'''description = "cachebench on O3 cores"
backend = "gem5"
root = "disk"
variants = ["baseline"]
systems = ["{SYSTEM}"]
workloads = [{{ name = "cachebench", scale = "smoke", params = {{ chase_steps = {STEPS}, handoffs = {HANDOFFS}, iterations = 100, lock_iterations = {LOCKS} }} }}]
timeout_s = 43200
'''


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("o3")
    spec = tmp / "cachebench-o3.toml"
    spec.write_text(SPEC)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp / "results"))
        [run] = run_experiment(spec)
    assert run.failure is None, run.failure
    symbols = guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c", tmp)
    # cachebench's regions, without lockload's (the last two), whose
    # program's addresses are another binary's.
    cycles = pd.read_parquet(run.directory / "cycles.parquet")
    return cycles[cycles["region"] < cycles["region"].max() - 1], symbols, run.directory


@pytest.fixture(scope="module")
def lockload(profile, tmp_path_factory):
    """lockload's two regions of the same run (stores that hit, then a store
    that misses) with their drain tables, and lockload's symbols."""
    _, _, run_dir = profile
    cycles = pd.read_parquet(run_dir / "cycles.parquet")
    drains = pd.read_parquet(run_dir / "drains.parquet")
    symbols = guest_program_symbols(paths.DISK_IMAGES / "workloads" / "cachebench" /
                                    "lockload.c", tmp_path_factory.mktemp("lockload"))
    last = cycles["region"].max()
    return {"hits": (cycles[cycles["region"] == last - 1], drains[drains["region"] == last - 1]),
            "miss": (cycles[cycles["region"] == last], drains[drains["region"] == last])}, symbols


def within(cycles: pd.DataFrame, symbols: dict, name: str) -> pd.DataFrame:
    start, size = symbols[name]
    return cycles[(cycles["pc"] >= start) & (cycles["pc"] < start + size)]


def test_each_chase_load_is_charged_the_memory_latency(profile):
    cycles, symbols, _ = profile
    system = specs.load_system(SYSTEM)
    c, memory = system.caches, system.latency.memory_cycles
    chase = within(cycles, symbols, "chase")
    load = chase.loc[chase["cycles"].idxmax()]
    assert load["instructions"] == STEPS          # the load, once a step
    per_load = load["cycles"] / STEPS
    walk = 4 * (c.l1d.latency_cycles + c.l2.latency_cycles)
    assert memory <= per_load <= memory + c.l1d.latency_cycles + c.l2.latency_cycles + walk + 20
    assert load["cycles_load_memory"] > load["cycles"] / 2


def test_the_spin_loop_of_l1_hits_runs_at_the_cores_width(profile):
    cycles, symbols, _ = profile
    width = specs.load_system(SYSTEM).core.width
    player = within(cycles, symbols, "player")
    per_instruction = player["cycles"].sum() / player["instructions"].sum()
    assert 1 / width <= per_instruction < 1


def test_each_handoff_is_a_coherence_miss_taken_by_the_other_players_store(profile):
    cycles, symbols, run_dir = profile
    system = specs.load_system(SYSTEM)
    c = system.caches
    misses = pd.read_parquet(run_dir / "misses.parquet")
    start, size = symbols["player"]
    loads = misses[(misses["pc"] >= start) & (misses["pc"] < start + size)
                   & (misses["level"] == "L1D") & (misses["kind"] == "read")
                   & (misses["cause"] == "coherence")]
    handed = loads["count"].sum()
    assert HANDOFFS - 2 <= handed <= 2 * HANDOFFS
    coherence = pd.read_parquet(run_dir / "coherence.parquet")
    mine = coherence[(coherence["pc"] >= start) & (coherence["pc"] < start + size)]
    assert mine["count"].sum() == handed
    assert (mine["cpu"] != mine["thief_cpu"]).all()
    by_player = mine[(mine["thief_pc"] >= start) & (mine["thief_pc"] < start + size)]
    assert by_player["count"].sum() >= HANDOFFS - 2
    per_miss = loads["cycles"].sum() / handed
    assert c.l1d.latency_cycles + c.l2.latency_cycles <= per_miss <= \
        system.latency.memory_cycles + c.l1d.latency_cycles + c.l2.latency_cycles
    waiting = within(cycles, symbols, "player")
    assert waiting["cycles_load_peer"].sum() > 0


def test_the_skid_view_charges_the_instruction_after_a_stalled_load(profile):
    cycles, symbols, _ = profile
    chase = within(cycles, symbols, "chase").groupby("pc")[
        ["instructions", "cycles", "samples", "skid_samples"]].sum().sort_index()
    load = chase["cycles"].idxmax()
    # The loop: the instructions run once a step; its first, the add, is
    # the next to commit after the load's group (the module's docstring).
    loop = sorted(pc for pc, n in chase["instructions"].items() if n == STEPS)
    assert len(loop) == 4 and loop[1] == load
    after = loop[0]
    samples = chase["samples"].sum()
    assert samples == chase["skid_samples"].sum() and samples >= 20
    assert chase.loc[load, "samples"] >= samples / 2
    assert chase.loc[load, "skid_samples"] <= samples / 10
    assert chase.loc[after, "skid_samples"] >= samples / 2


def test_each_view_takes_one_sample_every_period_of_unhalted_cycles(profile):
    _, _, run_dir = profile
    regions = pd.read_parquet(run_dir / "region_cycles.parquet")
    cycles = pd.read_parquet(run_dir / "cycles.parquet")
    taken = cycles.groupby(["region", "cpu"])[["samples", "skid_samples"]].sum()
    expected = ((regions["cycles"] - regions["halted_cycles"]) // regions["sample_period"])
    expected.index = pd.MultiIndex.from_frame(regions[["region", "cpu"]])
    taken = taken.reindex(expected.index, fill_value=0)
    assert expected.sum() > 100
    assert ((taken["samples"] - expected).abs() <= 1).all()
    assert ((taken["skid_samples"] - expected).abs() <= 1).all()


def locked_instruction(cycles: pd.DataFrame, symbols: dict, name: str) -> pd.Series:
    """The loop's dearest instruction, over the CPUs (the process may move
    between them): the locked one."""
    loop = within(cycles, symbols, name).groupby("pc")[
        ["cycles", "cycles_barrier", "instructions", "micro_ops"]].sum()
    return loop.loc[loop["cycles"].idxmax()]


def test_a_locked_instruction_after_stores_waits_for_them_at_its_fence(lockload):
    regions, symbols = lockload
    cycles, drains = regions["hits"]
    c = specs.load_system(SYSTEM).caches
    locked = locked_instruction(cycles, symbols, "after_hits")
    assert locked["instructions"] == LOCKS and locked["micro_ops"] > LOCKS
    assert locked["cycles_barrier"] >= locked["cycles"] / 2
    per_lock = locked["cycles"] / LOCKS
    assert c.l1d.latency_cycles <= per_lock <= 6 * (c.l1d.latency_cycles + c.l2.latency_cycles)
    mine = drains[drains["pc"] == locked.name]
    assert mine["cycles"].sum() == pytest.approx(locked["cycles_barrier"])
    waited = mine.groupby("waited_for")["cycles"].sum()
    # The region's first iteration writes the four lines for the first
    # time (lockload touches them nowhere before, and a checkpoint restores
    # no cache contents): those four stores go to memory, no later one.
    memory = specs.load_system(SYSTEM).latency.memory_cycles
    assert waited.get("store_memory", 0) <= 4 * (memory + c.l1d.latency_cycles
                                                 + c.l2.latency_cycles + 20)
    assert waited.get("store_l1d_hit", 0) / LOCKS <= 4 * (c.l1d.latency_cycles
                                                          + c.l2.latency_cycles)


def test_a_locked_instruction_after_a_store_that_misses_waits_for_memory(lockload):
    regions, symbols = lockload
    cycles, drains = regions["miss"]
    system = specs.load_system(SYSTEM)
    c, memory = system.caches, system.latency.memory_cycles
    locked = locked_instruction(cycles, symbols, "after_miss")
    assert locked["instructions"] == LOCKS
    mine = drains[drains["pc"] == locked.name]
    assert mine["cycles"].sum() == pytest.approx(locked["cycles_barrier"])
    on_memory = mine[mine["waited_for"] == "store_memory"]
    # Charged to the loop's one store, the instruction before the lock.
    start, size = symbols["after_miss"]
    assert (on_memory["store_pc"] >= start).all() and (on_memory["store_pc"] < start + size).all()
    assert on_memory["store_pc"].nunique() == 1
    per_lock = on_memory["cycles"].sum() / LOCKS
    # The store waited for memory from its commit; the lock reached the head
    # a few cycles later (it commits a cycle or two after the store, and at
    # most the width's instructions are between them).
    assert memory - 2 * (c.l1d.latency_cycles + c.l2.latency_cycles) <= per_lock <= \
        memory + c.l1d.latency_cycles + c.l2.latency_cycles + 20
    assert on_memory["cycles"].sum() >= locked["cycles_barrier"] * 0.8
