"""Benchmarks A to D of docs/causes.md, section 3, as guest programs
(cachebench with causes = 1 runs disk-images/workloads/cachebench/causes.c
once per benchmark), through the QEMU cache model and, with GEM5, through
gem5's miss profile: the misses at each benchmark's last step, per core,
level and cause, against the counts the document derives by hand from the
definitions of the causes (its "definitions above" rows).

Each step is a function of its own, so a step's misses are those at its
instructions (data accesses only: the L2 also sees the step's own
instruction fetches).  The earlier steps only set up state: the guest
faulted the pages in before the region, which gem5's caches see and the
QEMU model does not, so only the last step's counts (and C's sweep, 1024
L1D misses of any cause) follow from the derivation alike on both.  The
L2's sets are chosen by physical address: the derivation wants at most
three of a benchmark's pages to an L2 set, which the program's huge page
gives; its JSON lists the frames, and an L2 count is skipped, saying why,
where the kernel placed the pages otherwise."""

import collections
import json
import os

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from tests.conftest import extension_built, require_tools

pytestmark = pytest.mark.boot
EXPERIMENTS = paths.REPO / "configs" / "experiments"
LINES = 64                      # a page's lines, 64 bytes each
DATA = ("read", "write", "rmw")


# Per benchmark, the misses its last step's function makes, per level, as
# {cpu: {cause: count}}; docs/causes.md, section 3, derives each.
LAST_STEPS = {
    # A: CPU0 read T (step 1), CPU1's stores took it from CPU0's L1D and L2
    # (step 2); CPU0 reads T again: both caches held it when it was taken
    # and both shadows still hold it (nothing since but the barrier's line).
    ("a", "a3_cpu0_read_t"): {"L1D": {0: {"coherence": LINES}},
                              "L2": {0: {"coherence": LINES}}},
    # B: CPU0 read T, then the sweep S (1024 lines, twice the L1D), then T:
    # sixteen newer lines in each L1D set and 1024 in its shadow (capacity);
    # T's L2 sets hold at most two of the benchmark's pages, so the L2 hits.
    ("b", "b3_cpu0_read_t"): {"L1D": {0: {"capacity": LINES}}, "L2": {}},
    # C: T was taken while CPU0's L1D held it, then the sweep; U was swept
    # out of the L1D (still in the L2), then taken; V was taken with no
    # sweep after.  L1D: V coherence, T and U capacity (the shadow lost
    # them in the sweep: it would have missed whatever CPU1 did).  L2: all
    # three coherence (the L2 held each when CPU1 wrote it, and its shadow
    # of 4096 lines still holds them).
    ("c", "c6_cpu0_read_v_t_u"): {"L1D": {0: {"coherence": LINES, "capacity": 2 * LINES}},
                                  "L2": {0: {"coherence": 3 * LINES}}},
    # D: CPU0 and then CPU1 read T (both Shared); CPU0 writes T, held
    # Shared in its L1D and its L2: an upgrade of each level it reaches
    # without permission (step 3); CPU1 reads T again, which CPU0's
    # upgrade took from both its caches (step 4).
    ("d", "d3_cpu0_write_t"): {"L1D": {0: {"upgrade": LINES}}, "L2": {0: {"upgrade": LINES}}},
    ("d", "d4_cpu1_read_t"): {"L1D": {1: {"coherence": LINES}}, "L2": {1: {"coherence": LINES}}},
}
# The L1D coherence misses of those steps, by the step whose write took the
# line (coherence.parquet): the thief's CPU and function.
THIEVES = {
    "a3_cpu0_read_t": {(1, "a2_cpu1_write_t"): LINES},
    "c6_cpu0_read_v_t_u": {(1, "c5_cpu1_write_u_v"): LINES},
    "d4_cpu1_read_t": {(0, "d3_cpu0_write_t"): LINES},
}
CASES = [pytest.param(bench, step, level, id=f"{step}-{level}")
         for (bench, step), levels in LAST_STEPS.items() for level in levels]


def test_the_derivation_holds_for_the_machine():
    """docs/causes.md derives its counts for skylake-4core's caches, which
    skylake-4core-timing (gem5's) extends unchanged."""
    for name in ("skylake-4core", "skylake-4core-timing"):
        caches = specs.load_system(name).caches
        assert caches.line_bytes == 64
        # The L1D's set index is the page offset: a page holds one line of
        # every set, and the 16-page sweep is twice the L1D.
        assert caches.l1d.size_kib * 1024 // caches.l1d.assoc == 4096
        assert caches.l1d.size_kib * 1024 // caches.line_bytes == 16 * LINES // 2
        # The L2: 16 page colours of 4 ways, a shadow of 4096 lines.
        assert caches.l2.size_kib * 1024 // caches.l2.assoc // 4096 == 16
        assert caches.l2.assoc == 4 and caches.l2.size_kib * 1024 // caches.line_bytes == 4096


def l2_colour_problem(benchmark: dict, system: str) -> str | None:
    """Why the derivation's L2 counts need not hold for this placement of
    the benchmark's pages, or None: more than three of them in one L2 colour
    (with the stack's and the kernel's lines, a set may then lose one)."""
    caches = specs.load_system(system).caches
    colours = caches.l2.size_kib * 1024 // caches.l2.assoc // 4096
    frames = benchmark["frames"]
    if 0 in frames:
        return (f"{benchmark['test']}: the guest could not read its page frames "
                f"(/proc/self/pagemap shows them to root only): the L2 colours are unknown")
    crowded = collections.Counter(f % colours for f in frames).most_common(1)[0][1]
    if crowded > 3:
        return (f"{benchmark['test']}: the kernel put {crowded} of its pages in one of the L2's "
                f"{colours} colours (frames {frames}; huge page: {benchmark['huge_page']}); "
                f"the derivation has at most three")
    return None


def run(experiment: str, tmp) -> dict:
    """The experiment's one run: its summary's benchmarks by letter, misses,
    coherence misses, and the causes program's functions."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp / "results"))
        [result] = run_experiment(EXPERIMENTS / f"{experiment}.toml", rerun=True)
    assert result.failure is None, result.failure
    directory = result.directory
    summary = json.loads((directory / "manifest.json").read_text())["guest"]["summary"]
    assert summary["causes"] == 1
    benchmarks = {t["test"].removeprefix("causes-"): t for t in summary["tests"]}
    assert list(benchmarks) == ["a", "b", "c", "d"]
    return {"system": specs.load_experiment(EXPERIMENTS / f"{experiment}.toml").systems[0],
            "benchmarks": benchmarks,
            "misses": pd.read_parquet(directory / "misses.parquet"),
            "coherence": pd.read_parquet(directory / "coherence.parquet"),
            "functions": guest_program_symbols(
                paths.DISK_IMAGES / "workloads" / "cachebench" / "causes.c", tmp)}


@pytest.fixture(scope="module")
def qemu_run(tmp_path_factory):
    require_tools("qemu-system-x86_64", "make", "gcc")
    return run("causes-qemu", tmp_path_factory.mktemp("causes-qemu"))


@pytest.fixture(scope="module")
def gem5_run(tmp_path_factory):
    if not os.environ.get("GEM5"):
        pytest.skip("GEM5 is not set: path to a gem5.opt built for X86 (v24.0)")
    if not extension_built():
        pytest.skip("GEM5 was built without hotline's extension: build gem5 with "
                    "EXTRAS=configs/gem5/extras (README.md, gem5)")
    return run("causes-gem5", tmp_path_factory.mktemp("causes-gem5"))


def within(table, functions, name, column="pc"):
    start, size = functions[name]
    return table[(table[column] >= start) & (table[column] < start + size)]


def step_misses(run, step, level) -> dict:
    """{cpu: {cause: count}} of the data misses at the step's instructions."""
    m = within(run["misses"], run["functions"], step)
    m = m[(m["level"] == level) & m["kind"].isin(DATA)]
    counts = m.groupby(["cpu", "cause"])["count"].sum()
    found = collections.defaultdict(dict)
    for (cpu, cause), count in counts.items():
        found[int(cpu)][cause] = int(count)
    return dict(found)


def check_last_step(run, bench, step, level):
    if level != "L1D":
        problem = l2_colour_problem(run["benchmarks"][bench], run["system"])
        if problem:
            pytest.skip(problem)
    assert step_misses(run, step, level) == LAST_STEPS[(bench, step)][level]


def function_at(functions, pc) -> str:
    return next((name for name, (start, size) in functions.items()
                 if start <= pc < start + size), hex(pc))


def check_thieves(run, step):
    stolen = within(run["coherence"], run["functions"], step)
    by_thief = collections.Counter()
    for cpu, pc, count in zip(stolen["thief_cpu"], stolen["thief_pc"], stolen["count"]):
        by_thief[(int(cpu), function_at(run["functions"], pc))] += int(count)
    assert dict(by_thief) == THIEVES[step]


def check_sweep(run):
    # C's step 3: CPU0 sweeps 1024 lines it has not read since the region
    # began (nor since the flush before it) through an L1D of 512 lines:
    # every load misses, of whatever cause.  The step's `ret` may miss too,
    # on the stack line the sweep pushed out.
    m = within(run["misses"], run["functions"], "c3_cpu0_read_s")
    m = m[(m["level"] == "L1D") & m["kind"].isin(DATA)]
    assert set(m["cpu"]) == {0}
    per_pc = m.groupby("pc")["count"].sum()
    assert per_pc.max() == 16 * LINES and per_pc.sum() - per_pc.max() <= 1, per_pc


@pytest.mark.parametrize("bench, step, level", CASES)
def test_last_step_on_the_cache_model(qemu_run, bench, step, level):
    check_last_step(qemu_run, bench, step, level)


@pytest.mark.parametrize("step", THIEVES)
def test_thieves_on_the_cache_model(qemu_run, step):
    check_thieves(qemu_run, step)


def test_sweep_on_the_cache_model(qemu_run):
    check_sweep(qemu_run)


@pytest.mark.parametrize("bench, step, level", CASES)
def test_last_step_on_gem5(gem5_run, bench, step, level):
    check_last_step(gem5_run, bench, step, level)


@pytest.mark.parametrize("step", THIEVES)
def test_thieves_on_gem5(gem5_run, step):
    check_thieves(gem5_run, step)


def test_sweep_on_gem5(gem5_run):
    check_sweep(gem5_run)
