"""A sweep on a real Slurm: a one-node cluster started on this machine from
Debian's Slurm 22.05 packages (tests/slurm_cluster.py: its own slurm.conf,
munged, state and spool directories, in network and mount namespaces of its
own, stopped afterwards with nothing left running), and `./hotline run`
(python -m hotline run, without the set-up) through profiles/slurm.

The steps are stand-ins (tests/sweep_stand_in.py: the real step code, the
builds and simulations replaced by a sleep that writes a run directory), as
in tests/test_sweep.py: a boot per job would add minutes and test QEMU, not
Slurm.  What is real: Snakemake and its Slurm executor submitting one job
per step with sbatch and following them with squeue, slurmctld scheduling
them and slurmd running them (srun inside the job, as on a cluster).

2 systems x 2 workloads: every step runs as its own Slurm job with the
cores, memory and time limit the workflow asks for (squeue's record of the
jobs, and the Slurm job each run's record names); one simulation, hung, is
cancelled with scancel: the sweep ends saying so, and the next one runs that
run again and nothing else.

The node claims 16 cores and 16 GB (SlurmdParameters=config_overrides),
what the profile gives a kernel build, so the profile is used as it is,
but for its first status check after 3 s instead of 40.  Needs root;
about 3 minutes on the 2-core development machine.  Deselect it with
-m 'not slurm' or -k 'not slurm'.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

import slurm_cluster
from hotline import paths
from hotline.records import layout
from hotline.sweep.workflow import PROFILES, load_sweep
from tests.conftest import SWEEP_SPEC as SPEC, out_dir, started

pytestmark = pytest.mark.slurm

# The profile's first status checks come after 40 s, and every check that
# finds nothing finished waits 10 s longer than the last.
FAST_CHECKS = "slurm-init-seconds-before-status-checks: 3\nseconds-between-status-checks: 3\n"
SWEEP_TIMEOUT_S = 300


@pytest.fixture
def slurm(tmp_path, request):
    """The cluster, stopped at the end whatever happened, also when it
    failed to start."""
    cluster = slurm_cluster.Cluster(tmp_path / "slurm")
    request.addfinalizer(cluster.stop)
    try:
        cluster.start()
    except slurm_cluster.NotPossible as e:
        pytest.skip(str(e))
    return cluster


def jobs(slurm) -> dict[int, dict]:
    """Every job slurmctld knows of (finished ones for MinJobAge), by id."""
    listed = json.loads(slurm.run("squeue", "--json", "--states=all"))["jobs"]
    return {job["job_id"]: {key: plain(value) for key, value in job.items()} for job in listed}


def plain(value):
    """A field of squeue --json as Slurm 22.05 writes it: later versions
    wrap numbers ({"set": true, "number": 2}) and states (["RUNNING"])."""
    if isinstance(value, dict) and "number" in value:
        return value["number"] if value.get("set", True) else None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        return value[0]
    return value


def step_of(job: dict) -> str:
    """The step a job ran, from the comment the executor gives it:
    rule_simulate_wildcards_RECORD -> RECORD, rule_build_kernel_... ->
    build_kernel, rule_gather -> gather."""
    rule, _, wildcards = job["comment"].removeprefix("rule_").partition("_wildcards_")
    return wildcards if rule == "simulate" else rule


def sweep_command(slurm, spec: Path, profile: Path) -> list[str]:
    return slurm.command(sys.executable, "-m", "hotline", "run", str(spec),
                         "--profile", str(profile), cwd=paths.REPO)


def test_sweep_on_slurm_scancel_and_resume(slurm, sandbox, tmp_path):
    version = slurm.version()
    sandbox.write_text(SPEC + "repeats = 1\n")
    sweep = load_sweep(sandbox)
    out = out_dir(sandbox)
    shipped = (PROFILES / "slurm" / "config.yaml").read_text()
    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "config.yaml").write_text(shipped + FAST_CHECKS)
    settings = yaml.safe_load(shipped)
    assert not set(yaml.safe_load(FAST_CHECKS)) & set(settings)
    held = next(r for r in sweep.runs if "lmbench-lite" in r.run_id and "skylake" in r.run_id)
    others = [r for r in sweep.runs if r is not held]
    began = time.monotonic()

    # First sweep: one simulation hangs until it is cancelled.
    console = tmp_path / "first.err"
    with console.open("w") as err:
        first = subprocess.Popen(sweep_command(slurm, sandbox, profile),
                                 env=os.environ | {"STAND_IN_HOLD": held.run_id},
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + SWEEP_TIMEOUT_S
        while not (held.run_id in started(sandbox) and
                   all((out / r.record).exists() for r in others)):
            assert first.poll() is None, console.read_text()
            assert time.monotonic() < deadline, console.read_text()
            time.sleep(1)
        (hung,) = [job for job in jobs(slurm).values()
                   if step_of(job) == held.record_name and job["job_state"] == "RUNNING"]
        slurm.run("scancel", str(hung["job_id"]))
        first.wait(timeout=SWEEP_TIMEOUT_S)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    err = console.read_text()
    assert first.returncode == 1, err
    assert "sweep sweeptest: 3 ok, 0 failed, 1 not run" in err
    # The summary says which job ended how, and where its log is.
    assert (f"{held.run_id}: Snakemake: SLURM-job '{hung['job_id']}' failed, SLURM status "
            "is: 'CANCELLED'") in err, err
    first_jobs = jobs(slurm)
    first_took = time.monotonic() - began

    # Second sweep: the cancelled run, then the gathering; nothing else.
    created = {r.run_id: json.loads((out / r.run_id / "manifest.json").read_text())["created"]
               for r in others}
    before = time.time()
    second = subprocess.run(sweep_command(slurm, sandbox, profile), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=SWEEP_TIMEOUT_S)
    assert second.returncode == 0, second.stderr
    assert "sweep sweeptest: 4 ok, 0 failed, 0 not run" in second.stderr
    assert started(sandbox, before) == [held.run_id]
    assert sorted(started(sandbox)) == sorted([r.run_id for r in sweep.runs] + [held.run_id])
    for run_id, stamp in created.items():
        assert json.loads((out / run_id / "manifest.json").read_text())["created"] == stamp
    assert (pd.read_parquet(out / layout.INDEX).status == "ok").all()
    all_jobs = jobs(slurm)
    second_jobs = {i: j for i, j in all_jobs.items() if i not in first_jobs}

    # Each step ran as a job of its own, asking for what the workflow says:
    # simulations what their run needs, builds and gathering what the
    # profile gives them.
    asks = {r.record_name: (r.threads, r.mem_mb, r.runtime) for r in sweep.runs}
    defaults = settings["default-resources"]
    asks["build_image"] = (1, defaults["mem_mb"], defaults["runtime"])
    asks["build_kernel"] = (settings["set-threads"]["build_kernel"],
                            settings["set-resources"]["build_kernel"]["mem_mb"],
                            settings["set-resources"]["build_kernel"]["runtime"])
    asks["gather"] = (1, settings["set-resources"]["gather"]["mem_mb"], defaults["runtime"])
    assert sorted(map(step_of, first_jobs.values())) == \
        sorted(["build_image", "build_kernel", *(r.record_name for r in sweep.runs)])
    assert sorted(map(step_of, second_jobs.values())) == sorted(["gather", held.record_name])
    for job in all_jobs.values():
        assert (job["cpus"], job["memory_per_node"], job["time_limit"]) == \
            asks[step_of(job)], job
        assert job["partition"] == "debug"            # sinfo's default partition
        assert job["current_working_directory"] == str(out)
        # The executor's log of the job: kept if the job failed.
        log = Path(job["standard_output"].replace("%j", str(job["job_id"])))
        assert log.is_relative_to(out / ".snakemake" / "slurm_logs")
        assert log.exists() == (job["job_state"] != "COMPLETED"), job
        expected = "CANCELLED" if job["job_id"] == hung["job_id"] else "COMPLETED"
        assert job["job_state"] == expected, job
    # Each run's record names the job that made it.
    by_step = {step_of(j): i for i, j in all_jobs.items() if j["job_state"] == "COMPLETED"}
    for run in sweep.runs:
        record = json.loads((out / run.record).read_text())
        assert record["status"] == "ok" and record["slurm_job"] == str(by_step[run.record_name])
    print(f"\n{version}: first sweep (with the cancel) {first_took:.0f} s, "
          f"second {time.monotonic() - began - first_took:.0f} s")
