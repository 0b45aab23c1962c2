"""bench/groundtruth.c as a guest workload (`groundtruth`) and the
calibration table's arithmetic (bench/groundtruth_calibration.py): the
workload is defined and its parameters resolve, its parameter names are the
program's pattern groups, the disk image's key covers the source it builds
from bench/, and the table finds each pattern's function and counts its
steps.  Nothing is timed; the guest runs themselves are the experiment
specs' (configs/experiments/groundtruth-*.toml), and the smoke boot of every
workload (tests/test_workloads.py) checks the workload's summary."""

import importlib.util
import subprocess
import sys

import pytest

from hotline import disk_image, paths
from hotline.errors import HotlineError
from hotline.specs import load_experiment
from hotline.workloads import available_workloads, load_workload
from tests.conftest import require_tools


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, paths.REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


groundtruth = _load("groundtruth")
calibration = _load("groundtruth_calibration")
GUEST_SOURCE = paths.DISK_IMAGES / "workloads" / "groundtruth" / "groundtruth.c"


@pytest.fixture(scope="module")
def guest_program(tmp_path_factory):
    require_tools("gcc")
    directory = tmp_path_factory.mktemp("guest")
    disk_image.compile_guest_program(GUEST_SOURCE, directory / "groundtruth")
    return directory / "groundtruth"


def listed(program) -> list[tuple[str, str]]:
    """(pattern, group) of every pattern the program has."""
    out = subprocess.run([str(program), "--list"], capture_output=True, text=True,
                         check=True).stdout
    return [tuple(line.split()[:2]) for line in out.splitlines()]


def test_the_workload_is_defined_and_every_scale_resolves():
    assert "groundtruth" in available_workloads()
    workload = load_workload("groundtruth")
    for scale in ("smoke", "default", "seed"):
        params = workload.resolve_params(scale, {})
        assert set(params) == {"forwarding", "drain", "sharing", "iterations", "rounds"}
    assert workload.resolve_params("smoke", {"sharing": 0})["sharing"] == 0
    with pytest.raises(HotlineError, match="'drain' = 2 is outside 0..1"):
        workload.resolve_params("smoke", {"drain": 2})


def test_the_experiment_specs_name_the_workload():
    for name in ("groundtruth-qemu", "groundtruth-gem5"):
        spec = load_experiment(paths.REPO / "configs" / "experiments" / f"{name}.toml")
        assert [w.name for w in spec.workloads] == ["groundtruth"]


def test_the_workloads_switches_are_the_programs_groups(guest_program):
    groups = {group for _, group in listed(guest_program)}
    switches = set(load_workload("groundtruth").params) - {"iterations", "rounds"}
    assert switches == groups


def test_the_guest_program_is_the_bench_source_with_markers():
    """One source: the workload's file includes bench/groundtruth.c, and the
    image's key covers it."""
    text = GUEST_SOURCE.read_text()
    assert '#include "../../../bench/groundtruth.c"' in text and "#define HOTLINE_ROI" in text
    assert "bench/groundtruth.c" in disk_image.image_inputs()["included"]


def test_the_guest_build_marks_regions(guest_program):
    """hotline-roi.h's NOP marker for begin: 0F 1F 84 00 01 00 6C 68."""
    assert bytes([0x0F, 0x1F, 0x84, 0x00, 0x01, 0x00, 0x6C, 0x68]) in guest_program.read_bytes()


def test_every_pattern_has_a_function_of_its_own_in_the_guest(guest_program, tmp_path):
    functions = calibration.pattern_functions(groundtruth.SOURCE.read_text())
    assert sorted(functions) == sorted(name for name, _ in listed(guest_program))
    symbols = disk_image.guest_program_symbols(GUEST_SOURCE, tmp_path)
    starts = [symbols[function][0] for function in functions.values()]
    assert len(set(starts)) == len(starts)      # no two folded into one body
    assert functions["handoff"] == "incq_turns"
    assert functions["lock_btsq_after_miss"] == "each_btsq_after_1"


def test_steps_are_the_timed_iterations_and_the_warmup():
    loop = {"timing": "loop", "iterations": 1000, "rounds": 3}
    assert calibration.steps_per_run(loop) == 3 * (1000 + 101)
    each = {"timing": "each", "iterations": 1000, "rounds": 3}
    assert calibration.steps_per_run(each) == 3 * 1001
    threads = {"timing": "threads", "iterations": 1000, "rounds": 2}
    assert calibration.steps_per_run(threads) == 2 * 2 * (1000 + 101)
    handoff = {"timing": "threads", "iterations": 10, "rounds": 2}   # N/100, as reported
    assert calibration.steps_per_run(handoff) == 2 * 2 * (10 + 2)


def test_the_fewest_instructions_are_taken_from_each_side():
    record = {"cycles": [7.0, 9.5, 7.2], "baseline_cycles": [3.1, 3.0, 10.0]}
    assert calibration.fewest_net(record) == 4.0


def test_a_ratio_needs_a_host_figure_away_from_zero():
    assert calibration.ratio(10.0, 4.0) == 2.5
    assert calibration.ratio(10.0, 0.2) is None
    assert calibration.ratio(None, 4.0) is None
