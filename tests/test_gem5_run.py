"""With a gem5 binary (GEM5): the config script inside gem5, and a small
fork storm end to end on X86Board, checked from the guest's output and the
tables.  Skipped without GEM5; the boot needs hours of gem5 time at smoke
scale, so it runs 2 loops of 2 iterations."""

import json
import os
import subprocess

import pandas as pd
import pytest

from hotline import specs
from hotline.experiment import run_experiment
from hotline.simulate.gem5 import params as gem5_params
from hotline.simulate.gem5 import simulator as gem5

pytestmark = pytest.mark.skipif(
    not os.environ.get("GEM5"), reason="GEM5 is not set: path to a gem5.opt built for X86 (v24.0)")


def test_config_script_fails_cleanly_on_a_missing_kernel(tmp_path):
    p = gem5_params.config_params(specs.load_system("skylake-4core"),
                                  vmlinux=tmp_path / "no-vmlinux",
                                  disk_image=tmp_path / "no-disk.img", kernel_args="console=ttyS0")
    (tmp_path / gem5.PARAMS_FILE).write_text(json.dumps(p))
    cmd = gem5.command(gem5.gem5_binary(), lsq_trace_on=False)
    result = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "hotline-gem5: error: no such file" in result.stderr


@pytest.mark.boot
def test_fork_storm_on_gem5(tmp_path, tmp_results):
    spec = tmp_path / "forkstorm-gem5-tiny.toml"
    spec.write_text('description = "tiny fork storm on gem5"\nbackend = "gem5"\nroot = "disk"\n'
                    'variants = ["baseline"]\nsystems = ["skylake-4core"]\n'
                    'workloads = [{ name = "forkstorm", scale = "smoke", '
                    'params = { instances = 2, iterations = 2 } }]\ntimeout_s = 43200\n')
    [run] = run_experiment(spec)
    assert run.failure is None, run.failure
    summary = json.loads((run.directory / "manifest.json").read_text())["guest"]["summary"]
    assert summary["loops_completed"] == 4
    core = pd.read_parquet(run.directory / "gem5_core_stats.parquet")
    assert sorted(core.cpu) == [0, 1, 2, 3]
    assert (core.l1d_accesses > 0).any() and (core.committed_insts > 0).any()
    raw = pd.read_parquet(run.directory / "gem5_misses_raw.parquet")
    assert set(raw.level) <= {"L1D", "L2"} and (raw.level == "L1D").any()
    # Kernel code misses: the fork storm is mostly kernel time.
    assert (raw.pc >= 0xFFFFFFFF80000000).any()
    assert (run.directory / "gem5_partial_overlaps.parquet").exists()
