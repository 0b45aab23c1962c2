"""A real sweep on Snakemake, killed and resumed: 2 workloads x 2 repeats
of tiny boots on 4 vCPUs, two at a time; the whole process group (engine,
steps, QEMU) is killed with SIGKILL, as a lost machine would be, once the
first run has finished; running the sweep again runs only what had not
finished and gathers all four."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from hotline import paths
from hotline.records import layout
from hotline.sweep import engine
from tests.conftest import require_tools

pytestmark = pytest.mark.boot

SPEC = """
description = "sweep kill-and-resume test"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{ name = "forkstorm", scale = "smoke", params = { instances = 2, iterations = 2 } },
             { name = "lmbench-lite", scale = "smoke", params = { iterations = 2 } }]
repeats = 2
timeout_s = 600
"""


def test_killed_sweep_resumes_without_redoing_finished_runs(tmp_path, tmp_results):
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")
    spec = tmp_path / "sweepkill.toml"
    spec.write_text(SPEC)
    out = tmp_results / spec.stem
    records = out / layout.RECORDS
    sweep = subprocess.Popen([sys.executable, "-m", "hotline", "run", str(spec), "--jobs", "2"],
                             cwd=paths.REPO, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    try:
        while not list(records.glob("*.json")):
            assert sweep.poll() is None, "the sweep ended before any run finished"
            assert time.monotonic() < deadline
            time.sleep(0.5)
        time.sleep(2)  # Snakemake takes note of the finished step
    finally:
        os.killpg(sweep.pid, signal.SIGKILL)
        sweep.wait()
    finished = {p.stem: p.stat().st_mtime for p in records.glob("*.json")}
    assert 1 <= len(finished) < 4
    created = {}
    for run_id in finished:
        record = json.loads((records / f"{run_id}.json").read_text())
        assert record["status"] == "ok", record
        created[run_id] = json.loads((out / run_id / "manifest.json").read_text())["created"]

    assert engine.run_sweep(spec, jobs=2) == 0
    for run_id, mtime in finished.items():
        # Not simulated again.  Snakemake may not have seen the step end
        # before the kill, and then runs it again: it finds the run's key
        # unchanged and reuses the result.
        manifest = json.loads((out / run_id / "manifest.json").read_text())
        assert manifest["created"] == created[run_id]
        record = json.loads((records / f"{run_id}.json").read_text())
        assert (records / f"{run_id}.json").stat().st_mtime == mtime or record["reused"]
    assert not list(out.glob(".*.running"))  # what was in flight was run again
    index = pd.read_parquet(out / layout.INDEX)
    assert len(index) == 4 and (index.status == "ok").all()
    for row in index.itertuples():
        summary = json.loads(row.summary)
        if row.workload == "forkstorm":
            assert summary["loops_completed"] == 4
        else:
            assert {t["iterations"] for t in summary["tests"].values()} == {2}
        assert (out / row.guest_log).is_file()
