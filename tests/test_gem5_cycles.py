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
- lockload (its own program, the last region): four stores to lines that stay
  in the L1D, then `lock andb` on a byte, then a load of the word holding
  it.  A locked instruction is a full barrier (gem5 runs it as fenced
  micro-ops): it cannot start before the four stores have left the store
  buffer, and the load cannot pass it.  So it is the loop's dearest
  instruction, at least half its cycles are the head waiting at a fence,
  and each execution takes at least one L1D access (its locked load) and
  at most six accesses (four stores and its own load and store) at the
  L1D's and the L2's latency each.

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
    # cachebench's regions, without lockload's (the last), whose program's
    # addresses are another binary's.
    cycles = pd.read_parquet(run.directory / "cycles.parquet")
    return cycles[cycles["region"] < cycles["region"].max()], symbols, run.directory


@pytest.fixture(scope="module")
def lockload(profile, tmp_path_factory):
    """lockload's region of the same run, and lockload's symbols."""
    _, _, run_dir = profile
    cycles = pd.read_parquet(run_dir / "cycles.parquet")
    symbols = guest_program_symbols(paths.DISK_IMAGES / "workloads" / "cachebench" /
                                    "lockload.c", tmp_path_factory.mktemp("lockload"))
    return cycles[cycles["region"] == cycles["region"].max()], symbols


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


def test_a_locked_instruction_after_stores_waits_for_them_at_its_fence(lockload):
    cycles, symbols = lockload
    c = specs.load_system(SYSTEM).caches
    # Per instruction over the CPUs (the process may move between them).
    loop = within(cycles, symbols, "lockload").groupby("pc")[
        ["cycles", "cycles_barrier", "instructions", "micro_ops"]].sum()
    locked = loop.loc[loop["cycles"].idxmax()]
    assert locked["instructions"] == LOCKS and locked["micro_ops"] > LOCKS
    assert locked["cycles_barrier"] >= locked["cycles"] / 2
    per_lock = locked["cycles"] / LOCKS
    assert c.l1d.latency_cycles <= per_lock <= 6 * (c.l1d.latency_cycles + c.l2.latency_cycles)
