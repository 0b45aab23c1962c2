"""The hotline-cache plugin on the validation microbenchmarks (cachebench,
smoke scale, 4 vCPUs, deterministic mode), against outcomes derived from
the benchmark's code, and run twice for identical results."""

import subprocess

import pytest

from hotline import paths
from hotline.disk_image import compile_guest_program
from hotline.experiment import run_experiment
from hotline.workloads import load_workload
from tests.conftest import require_tools

pytestmark = pytest.mark.boot
SPEC = """description = "cache plugin on cachebench"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{ name = "cachebench", scale = "smoke" }]
plugin = "hotline-cache"
"""
# An insn record: insn, pc, kind, accesses, cycles, then the L1's outcome
# counts in enum cm_outcome order, where coherence is outcome 5.
L1_COHERENCE = 5 + 5


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    require_tools("qemu-system-x86_64", "make", "gcc")
    tmp = tmp_path_factory.mktemp("cache")
    spec = tmp / "cache.toml"
    spec.write_text(SPEC)
    texts = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp / "results"))
        for _ in range(2):
            (result,) = run_experiment(spec, rerun=True)
            assert result.failure is None, result.failure
            texts.append((result.directory / "hotline-cache.out").read_text())
    return texts


@pytest.fixture(scope="module")
def symbols(tmp_path_factory):
    """cachebench's functions: compiled as the image compiles it, static, so
    at the same addresses."""
    binary = tmp_path_factory.mktemp("cb") / "cachebench"
    compile_guest_program(paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c", binary)
    out = subprocess.run(["nm", "-S", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    return {f[3]: (int(f[0], 16), int(f[1], 16)) for f in map(str.split, out.splitlines())
            if len(f) == 4}


def records(text, kind):
    return [line.split("\t") for line in text.splitlines() if line.startswith(kind + "\t")]


def test_deterministic_runs_are_identical(outputs):
    first, second = outputs
    assert sorted(first.splitlines()) == sorted(second.splitlines())


def test_store_byte_then_load_word_is_a_read_after_partial_write(outputs):
    # storeload: each iteration stores a byte and then loads the 8-byte word
    # holding it, with nothing between: one event per iteration, all on one
    # (store, load) pair of user instructions.
    iterations = load_workload("cachebench").scales["smoke"]["iterations"]
    user = [r for r in records(outputs[0], "rapw") if not r[1].startswith("0xffff")]
    assert [int(r[3]) for r in user if int(r[3]) >= iterations] == [iterations]


def test_ping_pong_coherence_misses_equal_handoffs(outputs, symbols):
    # pingpong: H handoffs of one line.  Every wait of a player after the
    # other's store misses on a line the other core took: H coherence misses,
    # less the first wait of each player (player 0 reads its own store;
    # player 1 first reads the line before anyone wrote it: compulsory).
    handoffs = load_workload("cachebench").scales["smoke"]["handoffs"]
    start, size = symbols["player"]
    in_player = [r for r in records(outputs[0], "insn") if start <= int(r[1], 16) < start + size]
    assert sum(int(r[L1_COHERENCE]) for r in in_player) == handoffs - 2
    thieves = {(int(r[2]), int(r[3], 16)) for r in records(outputs[0], "stolen")
               if start <= int(r[1], 16) < start + size}
    assert {cpu for cpu, _ in thieves} == {0, 1}
    assert all(start <= pc < start + size for _, pc in thieves)
