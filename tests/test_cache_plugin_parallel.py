"""The hotline-cache plugin in parallel mode (multi-threaded TCG, a host
thread per vCPU, the threaded model), on the validation microbenchmarks and
the region-of-interest markers at smoke scale.  The interleaving is the
host's, so counts differ from run to run; what must hold is what holds
whatever the interleaving: the run succeeds, its counts add up, the model
took its lock-free path, and what one thread did alone is counted exactly."""

import pytest

from hotline import paths
from hotline.disk_image import guest_program_symbols
from hotline.experiment import run_experiment
from hotline.simulate.qemu import plugin_output
from hotline.workloads import load_workload
from tests.conftest import busiest, require_tools, within

pytestmark = pytest.mark.boot
SPEC = """description = "cache plugin in parallel mode"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{ name = "WORKLOAD", scale = "smoke" }]

[qemu]
mode = "parallel"
plugin = "hotline-cache"
"""


def run(tmp_path_factory, workload):
    require_tools("qemu-system-x86_64", "make", "gcc")
    tmp = tmp_path_factory.mktemp(workload)
    spec = tmp / "parallel.toml"
    spec.write_text(SPEC.replace("WORKLOAD", workload))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp / "results"))
        (result,) = run_experiment(spec, rerun=True)
    assert result.failure is None, result.failure
    symbols = guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / workload / f"{workload}.c", tmp)
    return result.directory, symbols


@pytest.fixture(scope="module")
def cachebench(tmp_path_factory):
    return run(tmp_path_factory, "cachebench")


@pytest.fixture(scope="module")
def markers(tmp_path_factory):
    return run(tmp_path_factory, "roimarkers")


def test_the_counts_add_up(cachebench):
    directory, _ = cachebench
    output = plugin_output.read(directory / "hotline-cache.out")
    assert plugin_output.disagreements(output) == []
    assert output["insn"]["accesses"].sum() > 0


def test_the_model_ran_threaded_and_mostly_without_its_lock(cachebench):
    directory, _ = cachebench
    # "hotline-cache: threaded model: N line accesses, U without the lock, L under it (P%)"
    said = [line for line in (directory / "qemu.log").read_text().splitlines()
            if line.startswith("hotline-cache: threaded model:")]
    assert len(said) == 1, said
    words = said[0].split()
    total, unlocked, locked = int(words[3]), int(words[6]), int(words[10])
    assert unlocked + locked == total and unlocked > locked > 0


def test_one_threads_own_counts_are_exact(cachebench):
    # storeload's byte store and word load: one read after a partial write
    # per iteration, in its own core's store buffer, whatever else runs; and
    # the ping-pong players store once per handoff.
    directory, functions = cachebench
    smoke = load_workload("cachebench").scales["smoke"]
    output = plugin_output.read(directory / "hotline-cache.out")
    pairs = within(output["rapw"], functions, "storeload", "load_pc")
    assert pairs["count"].sum() == smoke["iterations"]
    stores = busiest({"instructions": output["insn"]}, functions, "player", "write")[1]
    assert stores == smoke["handoffs"]


def test_reset_and_dump_count_exactly_while_other_vcpus_run(markers):
    # As test_cache_plugin's markers test: at the end A: n, B: 2n; in the
    # dump B: n and no A (the reset keeps per-core counts by moving a base).
    directory, symbols = markers
    n = load_workload("roimarkers").scales["smoke"]["iterations"]

    def per_loop(rapw):
        return {name: int(within(rapw, symbols, name, "load_pc")["count"].sum())
                for name in ("loop_a", "loop_b")}

    final = plugin_output.read(directory / "hotline-cache.out")
    assert plugin_output.disagreements(final) == []
    assert per_loop(final["rapw"]) == {"loop_a": n, "loop_b": 2 * n}
    dump = plugin_output.read(directory / "hotline-cache.out.dump1")
    assert plugin_output.disagreements(dump) == []
    assert per_loop(dump["rapw"]) == {"loop_a": 0, "loop_b": n}
