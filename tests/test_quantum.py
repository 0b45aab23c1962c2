"""[qemu] quantum = N: vCPU turns of at most N instructions in deterministic mode
(plugins/hotline-cache/quantum.c, docs/interleaving.md).

The spec checks need nothing; the runs boot cachebench at smoke scale with
a quantum of 1,000 instructions, two repeats (the second at a phase of its
own), twice: for bit-identical tables at each phase and different ones
between phases, turns as long as the setting allows, and the false sharing
that QEMU's own turns hide (0 coherence misses: tests/test_cache_plugin.py)
made visible.  With the quantum the model sees each window's turns woven
block by block by default (weave.c: the replay tests check its order by
hand): at the default quantum, once more twice, the false-sharing pair as
CPUs running at once would show it, and the ping-pong's handoffs kept.

And interleave = "turn" | "block", where it applies and where not."""

import tomllib

import pandas as pd
import pytest

from hotline import paths, specs
from hotline.disk_image import guest_program_symbols
from hotline.errors import HotlineError
from hotline.experiment import load_spec, plan, repeats, run_conditions
from hotline.simulate.qemu import DEFAULT_INTERLEAVE, DEFAULT_QUANTUM
from hotline.simulate.qemu.plugins import plugin_options
from hotline.workloads import load_workload
from tests.conftest import run_twice

QUANTUM = 1000
SPEC = f"""description = "cachebench with turns of {QUANTUM} instructions"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{{ name = "cachebench", scale = "smoke" }}]

[qemu]
plugin = "hotline-cache"
quantum = {QUANTUM}
"""
CPUS = specs.load_system("skylake-4core").cpus
TABLES = ("misses", "instructions", "coherence", "rapw", "roi", "turns")
SMOKE = load_workload("cachebench").scales["smoke"]


@pytest.mark.parametrize("change, complaint", [
    ('mode = "parallel"\n', "key 'qemu.quantum': bounds the vCPU turns of deterministic mode"),
    ('backend = "gem5"\nroot = "disk"\n', "key 'qemu': the settings of backend \"qemu\""),
])
def test_a_quantum_where_it_cannot_apply_is_refused(tmp_path, change, complaint):
    spec = tmp_path / "spec.toml"
    if "gem5" in change:    # top-level keys, before the [qemu] table
        spec.write_text(change + SPEC.replace('plugin = "hotline-cache"\n', ""))
    else:
        spec.write_text(SPEC + change)
    with pytest.raises(HotlineError, match=complaint):
        load_spec(spec)


@pytest.mark.parametrize("change, complaint", [
    ("quantum = 0\ninterleave = \"block\"\n", "key 'qemu.interleave': \"block\" weaves the turns"),
    ('mode = "parallel"\ninterleave = "block"\n', "key 'qemu.interleave': \"block\" weaves"),
    ('interleave = "block"\n', "key 'qemu': the settings of backend \"qemu\""),
    ('interleave = "woven"\n', "interleave"),
])
def test_an_interleave_where_it_cannot_apply_is_refused(tmp_path, change, complaint):
    text = SPEC.replace(f"quantum = {QUANTUM}\n", "")
    if "woven" not in change and "qemu'" in complaint:
        # On gem5: top-level keys before the [qemu] table, which has no plugin.
        text = 'backend = "gem5"\nroot = "disk"\n' + text.replace('plugin = "hotline-cache"\n', "")
    spec = tmp_path / "spec.toml"
    spec.write_text(text + change)
    with pytest.raises(HotlineError, match=complaint):
        load_spec(spec)


def backend_conditions(tmp_path, text: str) -> dict:
    """The backend's part of the first planned run's conditions."""
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    loaded = load_spec(spec)
    run = plan(loaded)[0]
    return run_conditions(run, loaded, specs.load_system(run.system))["backend"]


@pytest.fixture
def kernel_dir(tmp_path):
    """A kernel directory with just what the plugin's options read of it."""
    (tmp_path / "layout.json").write_text(
        '{"symbols": {"vmemmap_base": "0xffffea0000000000"}, "sizeof": 64}')
    (tmp_path / "System.map").write_text("000000000001f000 D cpu_number\n")
    return tmp_path


@pytest.mark.parametrize("value", [-5, specs.MAX_QUANTUM + 1])
def test_a_quantum_out_of_range_is_refused(tmp_path, value):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace(f"quantum = {QUANTUM}", f"quantum = {value}"))
    with pytest.raises(HotlineError, match="quantum"):
        load_spec(spec)


def test_the_plugin_is_told_the_quantum_in_deterministic_mode_only(kernel_dir):
    system = specs.load_system("skylake-4core")

    def options(mode, quantum):
        return plugin_options("hotline-cache", system, kernel_dir, mode, quantum)
    assert f"quantum={QUANTUM}" in options("deterministic", QUANTUM)
    assert not any(o.startswith("quantum=") for o in options("deterministic", None))
    assert not any(o.startswith("quantum=") for o in options("parallel", QUANTUM))


def test_the_plugin_is_told_the_phase_with_the_quantum_only(kernel_dir):
    system = specs.load_system("skylake-4core")
    options = plugin_options("hotline-cache", system, kernel_dir, "deterministic", QUANTUM, 7)
    assert options[-2:] == [f"quantum={QUANTUM}", "phase=7"]
    assert "phase=0" not in plugin_options("hotline-cache", system, kernel_dir,
                                           "deterministic", QUANTUM, 0)


def test_the_plugin_is_told_to_weave_with_the_quantum_only(kernel_dir):
    system = specs.load_system("skylake-4core")

    def options(mode, quantum, interleave):
        return plugin_options("hotline-cache", system, kernel_dir, mode, quantum, 0, interleave)
    assert options("deterministic", QUANTUM, "block")[-1] == "interleave=block"
    assert not any(o.startswith("interleave=") for o in options("deterministic", QUANTUM, "turn"))
    assert not any(o.startswith("interleave=") for o in options("parallel", QUANTUM, "block"))


@pytest.mark.parametrize("text, interleave", [
    (SPEC, DEFAULT_INTERLEAVE),
    (SPEC + 'interleave = "turn"\n', "turn"),
    (SPEC + 'interleave = "block"\n', "block"),
    (SPEC.replace(f"quantum = {QUANTUM}", "quantum = 0"), "turn"),
])
def test_runs_record_how_the_model_saw_the_turns(tmp_path, text, interleave):
    # In the run's conditions only where the turns are woven, so that runs
    # made turn by turn keep the key they had.
    backend = backend_conditions(tmp_path, text)
    assert backend.get("interleave", "turn") == interleave
    assert ("interleave" in backend) == (interleave != "turn")


def phases(text: str, repeats: int) -> list[int]:
    loaded = specs.ExperimentSpec.model_validate(tomllib.loads(f"repeats = {repeats}\n" + text))
    system = specs.load_system("skylake-4core")
    return [run_conditions(run, loaded, system)["backend"].get("phase", 0)
            for run in plan(loaded)]


def test_each_repeat_but_the_first_runs_at_a_phase_of_its_own_within_one_period():
    # The first repeat is the run as it always was (its key unchanged);
    # the others have distinct phases in (0, quantum x cpus), each fixed by
    # its repeat's index: more repeats change none of the earlier ones.
    ten = phases(SPEC, 10)
    assert ten[0] == 0
    assert all(0 < p < QUANTUM * CPUS for p in ten[1:])
    assert len(set(ten)) == 10
    assert phases(SPEC, 3) == ten[:3]


@pytest.mark.parametrize("text", [
    SPEC.replace(f"quantum = {QUANTUM}", "quantum = 0"),
    SPEC + 'mode = "parallel"\n',
])
def test_no_phase_where_the_turns_are_not_bounded(text):
    text = text.replace(f"quantum = {QUANTUM}\n", "") if "parallel" in text else text
    assert phases(text, 3) == [0, 0, 0]


@pytest.mark.parametrize("text, says", [
    (SPEC, "differing by the phase of the vCPU turns"),
    (SPEC.replace(f"quantum = {QUANTUM}", "quantum = 0"), "identical"),
    (SPEC.replace(f"quantum = {QUANTUM}\n", 'mode = "parallel"\n'), "not repeatable"),
])
def test_the_experiment_says_how_its_repeats_differ(text, says):
    loaded = specs.ExperimentSpec.model_validate(tomllib.loads("repeats = 3\n" + text))
    assert says in repeats(loaded)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The spec with two repeats, run twice: per time, [repeat 0, repeat 1]."""
    return run_twice("repeats = 2\n" + SPEC, tmp_path_factory.mktemp("quantum"))


@pytest.fixture(scope="module")
def runs(both):
    """Repeat 0 of each time."""
    return [repeat0 for repeat0, _ in both]


@pytest.mark.boot
@pytest.mark.parametrize("repeat", [0, 1])
def test_runs_at_one_quantum_and_phase_give_bit_identical_tables(both, repeat):
    for name in TABLES:
        assert (both[0][repeat] / f"{name}.parquet").read_bytes() == \
            (both[1][repeat] / f"{name}.parquet").read_bytes(), name


@pytest.mark.boot
def test_a_repeat_at_another_phase_interleaves_differently(both):
    # The turn boundaries move with the phase, and with them what the other
    # CPUs do in between: the turns and the misses differ.
    first, second = both[0]
    for name in ("turns", "misses"):
        tables = [pd.read_parquet(d / f"{name}.parquet") for d in (first, second)]
        assert not tables[0].equals(tables[1]), name


@pytest.mark.boot
def test_no_turn_is_longer_than_the_quantum_allows(runs):
    # A turn ends at a switch of vCPU or at the timer's deadline, every
    # QUANTUM x cpus instructions: no turn is longer than that.  (While
    # every vCPU runs, each gets at most QUANTUM of it.)
    cpus = specs.load_system("skylake-4core").cpus
    turns = pd.read_parquet(runs[0] / "turns.parquet")
    assert len(turns) and turns["turns"].sum() > 0
    assert turns["shortest"].max() <= QUANTUM * cpus
    assert (turns["instructions"] >= turns["turns"] * turns["shortest"]).all()
    assert (turns["instructions"] <= turns["turns"] * turns["longest"]).all()


@pytest.mark.boot
def test_false_sharing_is_seen_once_turns_are_short(runs, tmp_path):
    # Each incrementer runs `iterations` loop passes of at least three
    # instructions (the load, the store, the branch): at least 3,000
    # instructions, so in turns of at most QUANTUM while both run, at least
    # 3 turns each.  Each turn after the first two begins with a coherence
    # miss (tests/test_cache_plugin.py: coherence = turns - 2): at least
    # 2 x 3 - 2 = 4, where QEMU's own turns give 0.
    start, size = guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c", tmp_path)["incrementer"]
    misses = pd.read_parquet(runs[0] / "misses.parquet")
    mine = misses[(misses["pc"] >= start) & (misses["pc"] < start + size)
                  & (misses["level"] == "L1D") & (misses["kind"] == "read")]
    least = 2 * (3 * SMOKE["iterations"] // QUANTUM) - 2
    assert mine.loc[mine["cause"] == "coherence", "count"].sum() >= least


@pytest.mark.parametrize("text, quantum", [
    (SPEC, QUANTUM),
    (SPEC.replace(f"quantum = {QUANTUM}\n", ""), DEFAULT_QUANTUM),
    (SPEC.replace(f"quantum = {QUANTUM}", "quantum = 0"), 0),
    (SPEC.replace(f"quantum = {QUANTUM}\n", 'mode = "parallel"\n'), 0),
    (SPEC.replace(f"quantum = {QUANTUM}\n", "").replace('plugin = "hotline-cache"\n', ""), 0),
])
def test_runs_record_the_quantum_they_run_with(tmp_path, text, quantum):
    # The default where turns can be bounded; 0 (QEMU's own turns) where the
    # spec says so or they cannot be; in the run's conditions only if set,
    # so that runs of QEMU's own turns keep the key they had.
    backend = backend_conditions(tmp_path, text)
    assert backend.get("quantum", 0) == quantum
    assert ("quantum" in backend) == bool(quantum)


def coherence_misses(run_dir, function: str, tmp_path) -> int:
    """The L1D coherence misses of a cachebench function's loads."""
    start, size = guest_program_symbols(
        paths.DISK_IMAGES / "workloads" / "cachebench" / "cachebench.c", tmp_path)[function]
    misses = pd.read_parquet(run_dir / "misses.parquet")
    mine = misses[(misses["pc"] >= start) & (misses["pc"] < start + size)
                  & (misses["level"] == "L1D") & (misses["kind"] == "read")
                  & (misses["cause"] == "coherence")]
    return int(mine["count"].sum())


@pytest.fixture(scope="module")
def default_runs(tmp_path_factory):
    """cachebench at the default quantum and interleave, run twice."""
    text = SPEC.replace(f"quantum = {QUANTUM}\n", "")
    return [repeat0 for repeat0, in run_twice(text, tmp_path_factory.mktemp("default"))]


@pytest.mark.boot
def test_the_default_shows_false_sharing_and_keeps_the_handoffs(default_runs, tmp_path):
    # The two incrementers, running at once on hardware, alternate on the
    # line up to once per increment (2 x iterations coherence misses, less
    # the first of each); QEMU's own turns show none of it
    # (docs/interleaving.md).  Woven, at the default quantum, at least half.
    # The ping-pong's handoffs each make one coherence miss on hardware and
    # in turns; the weave keeps them: a read waits for the write it saw.
    incrementers = coherence_misses(default_runs[0], "incrementer", tmp_path)
    assert SMOKE["iterations"] <= incrementers <= 2 * SMOKE["iterations"]
    assert SMOKE["handoffs"] - 2 <= coherence_misses(default_runs[0], "player", tmp_path) \
        <= SMOKE["handoffs"]
    for name in TABLES:
        assert (default_runs[0] / f"{name}.parquet").read_bytes() == \
            (default_runs[1] / f"{name}.parquet").read_bytes(), name
