"""The O3 cycle profile (configs/gem5/extras) on microbenchmarks whose time
is known before they run, from the system spec (pentium3-4way-o3: 3 wide,
L1D 3 cycles, L2 10, memory 120 at the core clock):

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

Runs when GEM5 points at a gem5 built with the extension; the boot to the
checkpoint takes minutes."""

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from tests.test_gem5_run import extension_built

pytestmark = [pytest.mark.boot, pytest.mark.skipif(
    not extension_built(), reason="needs GEM5, a gem5 built with hotline's extension "
                                  "(EXTRAS=configs/gem5/extras: README.md, gem5)")]
SYSTEM = "pentium3-4way-o3"
STEPS = 4000
SPEC = f'''description = "cachebench on O3 cores"
backend = "gem5"
root = "disk"
variants = ["baseline"]
systems = ["{SYSTEM}"]
workloads = [{{ name = "cachebench", scale = "smoke", params = {{ chase_steps = {STEPS}, handoffs = 20, iterations = 100 }} }}]
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
    return pd.read_parquet(run.directory / "cycles.parquet"), symbols


def within(cycles: pd.DataFrame, symbols: dict, name: str) -> pd.DataFrame:
    start, size = symbols[name]
    return cycles[(cycles["pc"] >= start) & (cycles["pc"] < start + size)]


def test_each_chase_load_is_charged_the_memory_latency(profile):
    cycles, symbols = profile
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
    cycles, symbols = profile
    width = specs.load_system(SYSTEM).core.width
    player = within(cycles, symbols, "player")
    per_instruction = player["cycles"].sum() / player["instructions"].sum()
    assert 1 / width <= per_instruction < 1
