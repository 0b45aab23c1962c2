"""The sweep workflow without booting anything: the plan the Snakefile is
made from, Snakemake's dry run of the default-scale spec on the Slurm
profile, and whole local sweeps on Snakemake with stand-in steps
(tests/sweep_stand_in.py): parallel runs, a failure that stops nothing,
a step that dies, Ctrl-C and resuming, --rerun, changed conditions."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from hotline import paths
from hotline.kernel import config, source
from hotline.records import layout
from hotline.simulate import qemu
from hotline.sweep import engine, gather, workflow
from hotline.sweep.workflow import load_sweep
from tests.conftest import SWEEP_SPEC as SPEC, journal, out_dir, started
from tests.made_runs import planned_inputs, write_run

def test_plan_names_builds_runs_and_resources(sandbox):
    sandbox.write_text(SPEC + "repeats = 2\n")
    sweep = load_sweep(sandbox)
    assert len(sweep.runs) == 8 and len({r.run_id for r in sweep.runs}) == 8
    cache = Path(os.environ["HOTLINE_CACHE"]).resolve()
    (kernel,) = sweep.kernels.values()
    assert Path(kernel).parent.parent == cache / "kernels" and kernel.endswith("/kernel.json")
    assert Path(sweep.image).parent.parent == cache / "disk-images" and sweep.tool is None
    memory = {"skylake-4core": 1024, "pentium3-4way": 512}
    for run in sweep.runs:
        system = run.run_id.split("--")[2]
        assert run.needs == (kernel, sweep.image)
        assert run.threads == 1  # deterministic: one host thread
        assert run.mem_mb == memory[system] + qemu.QEMU_OVERHEAD_MIB
        assert run.runtime == 10 + workflow.RUNTIME_MARGIN_MIN
    # The same workload on another system, or another repeat, is another
    # run with other conditions.
    assert len({r.conditions for r in sweep.runs}) == 8


def test_plan_of_a_parallel_sweep_with_a_plugin(sandbox):
    sandbox.write_text(SPEC + '[qemu]\nmode = "parallel"\nplugin = "hotline-cache"\n')
    sweep = load_sweep(sandbox)
    assert all(r.threads == 4 for r in sweep.runs)  # multi-threaded TCG: one per vCPU
    assert sweep.tool.endswith("/hotline-cache.so") and sweep.tool_label == "plugin hotline-cache"
    assert all(r.needs[-1] == sweep.tool for r in sweep.runs)
    # The cache model's tables are built in memory after QEMU ends.
    assert sorted({r.mem_mb for r in sweep.runs}) == \
        [m + qemu.CACHE_TABLES_OVERHEAD_MIB for m in (512, 1024)]


def test_default_scale_spec_dry_runs_on_the_slurm_profile(sandbox, capfd):
    spec = paths.CONFIGS / "experiments" / "workloads-default.toml"
    assert engine.run_sweep(spec, profile="slurm", dry_run=True) == 0
    out = capfd.readouterr().out
    table = out.split("Job stats:\n", 1)[1].split("total")[0].splitlines()[2:]
    counts = dict(line.split() for line in table)
    assert counts == {"all": "1", "gather": "1", "simulate": "6", "build_kernel": "1",
                      "build_image": "1", "build_tool": "1"}
    assert "threads: 16" in out  # the profile's cores for a kernel build
    assert "mem_mb=16000" in out and "runtime=180" in out
    # Simulations: the 1 GiB guest and QEMU; the spec's 3600 s and a margin.
    assert out.count("mem_mb=2048") == 6 and out.count("runtime=75") == 6
    assert not (out_dir(spec) / layout.INDEX).exists()


def test_kernel_source_reaches_every_step(sandbox, monkeypatch, capfd):
    source = os.environ["HOTLINE_KERNEL_SOURCE"]
    monkeypatch.delenv("HOTLINE_KERNEL_SOURCE")
    assert engine.run_sweep(sandbox, dry_run=True, kernel_source=source) == 0
    out = capfd.readouterr().out
    commands = [line for line in out.splitlines() if line.startswith("Shell command: ")
                and (" kernel " in line or " run " in line)]
    assert len(commands) == 5 and all(f"--kernel-source {source}" in c for c in commands)


@pytest.mark.skipif(not source.DEBIAN_TARBALL.is_file() or not config.DEBIAN_CONFIG.is_file(),
                    reason="linux-source-6.1 or linux-config-6.1 not installed")
def test_dry_run_on_debian_source_writes_nothing_big(tmp_path, monkeypatch, capfd):
    """Naming Debian's kernel source reads its tarball; unpacking it (1.5 GB)
    waits for a build."""
    monkeypatch.delenv("HOTLINE_KERNEL_SOURCE", raising=False)
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "results"))
    spec = tmp_path / "dry.toml"
    spec.write_text(SPEC + "repeats = 1\n")
    assert engine.run_sweep(spec, dry_run=True) == 0
    assert "build_kernel" in capfd.readouterr().out
    written = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert written < 4 << 20, f"a dry run wrote {written} bytes under {tmp_path}"


def test_parallel_sweep_with_a_failed_run(sandbox, monkeypatch, capfd):
    """2 systems x 2 workloads x 2 repeats on 2 cores."""
    sandbox.write_text(SPEC + "repeats = 2\n")
    failing = "baseline--lmbench-lite-smoke--pentium3-4way--r1"
    monkeypatch.setenv("STAND_IN_FAIL", failing)
    # Simulations long enough that two overlap even when starting a step
    # takes seconds (a loaded 2-core host: with 1 s they once never did).
    monkeypatch.setenv("STAND_IN_SLEEP", "4")
    assert engine.run_sweep(sandbox, jobs=2) == 1
    err = capfd.readouterr().err
    out = out_dir(sandbox)
    # The builds ran once each, the kernel with the cores it was given.
    words = journal(sandbox)
    assert sorted(w[1:] for w in words if w[1] in ("kernel", "image")) == \
        [["image"], ["kernel", "baseline", "jobs=2"]]
    # Every run ran, two at a time.
    assert len(started(sandbox)) == 8
    spans = {}
    for w in words:
        if w[1] in ("start", "end"):
            spans.setdefault(w[2], []).append(float(w[0]))
    # At most two at once (Snakemake 9.15 starts a third when the builds
    # finish, unless cores are also a resource: workflow/Snakefile).
    running = [sum(1 for a in spans.values() if a[0] <= b[0] < a[1]) for b in spans.values()]
    assert max(running) == 2
    # The failure is in the summary with its reason and log, and in the index.
    assert f"failed: {failing}: the guest kernel panicked or oopsed " \
           f"(log: {out / (failing + '.failed') / 'guest.log'})" in err
    assert "sweep sweeptest: 7 ok, 1 failed, 0 not run" in err
    assert "runs: 8 done" not in err and "runs: 7 done, 0 running, 1 failed, 0 left" in err
    index = pd.read_parquet(out / layout.INDEX)
    assert len(index) == 8
    row = index.set_index("run_id").loc[failing]
    assert row.status == "failed" and row.failure == "the guest kernel panicked or oopsed"
    assert row.guest_log == f"{failing}.failed/guest.log"
    assert (index.status == "ok").sum() == 7
    ok = index[index.status == "ok"].iloc[0]
    assert json.loads(ok.manifest)["run_id"] == ok.run_id and ok.wall_seconds == 1.5
    assert json.loads(ok.summary) == {"repeat": int(ok["repeat"])}
    misses = pd.read_parquet(out / "misses.parquet")
    assert len(misses) == 14 and set(misses.run) == set(index.run_id[index.status == "ok"])

    # Running it again runs the failed run, and nothing else.
    monkeypatch.delenv("STAND_IN_FAIL")
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    assert started(sandbox, before) == [failing]
    assert (pd.read_parquet(out / layout.INDEX).status == "ok").all()
    assert len(pd.read_parquet(out / "misses.parquet")) == 16


def test_a_step_that_dies_is_reported_and_the_others_finish(sandbox, monkeypatch, capfd):
    dying = "baseline--forkstorm-smoke--skylake-4core--r0"
    monkeypatch.setenv("STAND_IN_CRASH", dying)
    assert engine.run_sweep(sandbox, jobs=2) == 1
    err = capfd.readouterr().err
    assert "sweep sweeptest: 3 ok, 0 failed, 1 not run" in err
    assert f"{dying}: its step stopped without recording an outcome (a step killed from " \
        "outside says nothing: if the host ran out of memory, `dmesg | grep -i oom` names it, " \
        "and fewer --jobs help)" in err
    # The index waits for every run.
    assert not (out_dir(sandbox) / layout.INDEX).exists()
    monkeypatch.delenv("STAND_IN_CRASH")
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    assert started(sandbox, before) == [dying]


# Snakemake 9.15's account of two failed jobs: a Slurm job cancelled with
# scancel (snakemake-executor-plugin-slurm 2.8.0's message), and the same
# step in the summary at the end, which has no message.
FAILED_JOBS = """\
[Mon Nov 23 15:35:58 2026]
Error in rule simulate:
    message: SLURM-job '17' failed, SLURM status is: 'CANCELLED'. Detailed failure reason unavailable (status command is not 'sacct').For further error details see the cluster/cloud log and the log files of the involved rule(s).
    jobid: 5
    input: /s/spec.toml, /c/kernels/baseline-99ea5367f577602e/kernel.json
    output: .sweep/runs/RUN.json
    log: .sweep/logs/RUN.log, /r/.snakemake/slurm_logs/rule_simulate/RUN/17.log (check log file(s) for error details)
    shell:
        python -m hotline.sweep.step run /s/spec.toml RUN > .sweep/logs/RUN.log 2>&1
        (command exited with non-zero exit code)
    external_jobid: 17
Exiting because a job execution failed. Look below for error messages
Error in rule simulate:
    message: None
    jobid: 5
    output: .sweep/runs/RUN.json
    log: .sweep/logs/RUN.log (check log file(s) for error details)
Error in rule build_image:
    message: None
    output: /c/disk-images/2ff649b2a4918157/image.json
"""


def test_summary_repeats_what_snakemake_says_of_a_failed_job(tmp_path):
    log = tmp_path / "snakemake.log"
    log.write_text(FAILED_JOBS)
    assert engine.job_errors(log) == {
        ".sweep/runs/RUN.json": "SLURM-job '17' failed, SLURM status is: 'CANCELLED'. "
        "Detailed failure reason unavailable (status command is not 'sacct'). (logs: "
        ".sweep/logs/RUN.log, /r/.snakemake/slurm_logs/rule_simulate/RUN/17.log)"}
    assert engine.job_errors(tmp_path / "missing.log") == {}


def test_ctrl_c_stops_the_sweep_and_running_it_again_resumes(sandbox, monkeypatch):
    monkeypatch.setenv("STAND_IN_SLEEP", "2")
    # SIGINT at its default even where the tests run in the background of a
    # shell script, which starts them with SIGINT ignored.
    sweep = subprocess.Popen([sys.executable, "-m", "hotline", "run", str(sandbox),
                              "--jobs", "1"], cwd=paths.REPO, start_new_session=True,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    records = out_dir(sandbox) / layout.RECORDS
    deadline = time.monotonic() + 120
    while len(list(records.glob("*.json"))) < 2:
        assert sweep.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    os.killpg(sweep.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
    err = sweep.communicate(timeout=120)[1]
    assert sweep.returncode == 130, err
    assert "run the same command again to resume" in err and "hotline: interrupted" in err
    finished = {p.stem for p in records.glob("*.json")}
    assert 2 <= len(finished) < 4
    created = {r: json.loads((out_dir(sandbox) / r / "manifest.json").read_text())["created"]
               for r in finished}

    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    again = started(sandbox, before)
    assert not finished & set(again) and len(again) == 4 - len(finished)
    for run_id, stamp in created.items():
        manifest = json.loads((out_dir(sandbox) / run_id / "manifest.json").read_text())
        assert manifest["created"] == stamp
    assert (pd.read_parquet(out_dir(sandbox) / layout.INDEX).status == "ok").all()


def test_rerun_and_changed_conditions(sandbox, monkeypatch):
    assert engine.run_sweep(sandbox, jobs=2) == 0
    # --rerun: every run's step runs, and the step runs its simulation anew.
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2, rerun=True) == 0
    assert [w[3:] for w in journal(sandbox) if float(w[0]) >= before and w[1] == "start"] \
        == [["rerun"]] * 4
    # ... which is no reason to run them yet again.
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    assert not [w for w in journal(sandbox) if float(w[0]) >= before]
    # Another mode is another condition of every run: the steps run, and
    # simulate anew (the key, the stand-in's too, holds the mode); no run
    # is taken for failed on the way.
    sandbox.write_text(SPEC + 'repeats = 1\n[qemu]\nmode = "parallel"\n')
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    assert sorted(w[1] for w in journal(sandbox) if float(w[0]) >= before) == \
        ["end"] * 4 + ["start"] * 4
    assert set(pd.read_parquet(out_dir(sandbox) / layout.INDEX)["status"]) == {"ok"}


def test_gather_unifies_tables_and_drops_stale_ones(sandbox, tmp_path):
    out = out_dir(sandbox)
    sweep = load_sweep(sandbox)
    first, second = sweep.runs[0].run_id, sweep.runs[1].run_id
    for run_id, frame in ((first, pd.DataFrame({"pc": [1], "count": [5]})),
                          (second, pd.DataFrame({"run": [second], "pc": [2], "count": [7],
                                                 "symbol": ["zap_pte_range"]}))):
        write_run(out / run_id, {"wall_seconds": 1.0,
                                 "inputs": planned_inputs(sweep.spec_path, run_id)},
                  {"misses": frame})
        (out / layout.RECORDS).mkdir(parents=True, exist_ok=True)
        (out / layout.RECORDS / f"{run_id}.json").write_text(json.dumps(
            {"status": "ok", "failure": None, "directory": run_id, "guest_log": None,
             "step_log": f"{layout.LOGS}/{run_id}.log"}))
    (out / "stale.parquet").write_text("")
    frame = gather.gather(sweep.spec_path, out)
    assert list(frame.status) == ["ok", "ok", "not run", "not run"]
    # The first run's table had no run column, and no symbol.
    assert pq.read_table(out / "misses.parquet").to_pydict() == {
        "run": [first, second], "pc": [1, 2], "count": [5, 7], "symbol": [None, "zap_pte_range"]}
    assert not (out / "stale.parquet").exists()
    assert len(pd.read_parquet(out / layout.INDEX)) == 4


def test_plain_snakemake_runs_a_failed_run_again(sandbox, monkeypatch):
    """The command the Snakefile documents, without ./hotline: a run whose
    last attempt failed is run again, as a new attempt, and nothing else."""
    failing = "baseline--lmbench-lite-smoke--pentium3-4way--r0"
    monkeypatch.setenv("STAND_IN_FAIL", failing)
    command = [sys.executable, "-m", "snakemake", "--config", f"spec={sandbox}",
               "--cores", "2", "--keep-going", "--rerun-incomplete"]
    ran = subprocess.run(command, cwd=paths.REPO, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    index = pd.read_parquet(out_dir(sandbox) / layout.INDEX).set_index("run_id")
    assert index.loc[failing, "status"] == "failed"
    monkeypatch.delenv("STAND_IN_FAIL")
    before = time.time()
    ran = subprocess.run(command, cwd=paths.REPO, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert started(sandbox, before) == [failing]
    assert (pd.read_parquet(out_dir(sandbox) / layout.INDEX).status == "ok").all()
    records = out_dir(sandbox) / layout.RECORDS
    assert json.loads((records / f"{failing}.json").read_text())["status"] == "failed"
    assert json.loads((records / f"{failing}.attempt2.json").read_text())["status"] == "ok"
    # ... and then nothing at all.
    before = time.time()
    ran = subprocess.run(command, cwd=paths.REPO, capture_output=True, text=True)
    assert ran.returncode == 0 and "Nothing to be done" in ran.stdout + ran.stderr
    assert not [w for w in journal(sandbox) if float(w[0]) >= before]


# The one lint snakemake --lint has for this workflow, for every rule: the
# steps run in hotline's own environment (scripts/setup.sh: Debian
# packages, QEMU 10 from bookworm-backports, .venv from requirements.lock),
# which no conda environment or container of the rule's describes.
SOFTWARE_LINT = "Specify a conda environment or container for each rule."


@pytest.mark.parametrize("spec", ["demo.toml", "forkstorm-gem5.toml"])
def test_snakemake_lint(sandbox, monkeypatch, spec):
    monkeypatch.setenv("GEM5", sys.executable)   # an executable: gem5's check passes
    # (Snakemake 9.15's --lint prints text whatever format it is asked for.)
    ran = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--config",
                          f"spec={paths.CONFIGS / 'experiments' / spec}"], cwd=paths.REPO,
                         capture_output=True, text=True)
    lints, item = {}, None
    for line in (ran.stdout + ran.stderr).splitlines():
        if line.startswith("Lints for "):
            item = line.split(" (")[0].removeprefix("Lints for ")
            lints[item] = []
        elif line.startswith("    * ") and item:
            lints[item].append(line.removeprefix("    * ").removesuffix(":"))
    assert lints, ran.stdout + ran.stderr
    assert {"rule simulate", "rule gather", "rule build_kernel", "rule build_image"} <= \
        set(lints)
    assert all(titles == [SOFTWARE_LINT] for titles in lints.values()), lints


def test_check_lists_the_builds_the_runs_need_with_their_time_here(sandbox, capsys):
    from hotline import cli
    cache = Path(os.environ["HOTLINE_CACHE"])
    assert cli.main(["check", str(sandbox)]) == 0
    err = capsys.readouterr().err
    assert "to build before the runs: 2 build(s), time not measured here" in err
    assert "  disk image: not measured here yet" in err
    assert "  kernel baseline: not measured here yet" in err

    # Builds of other kernels and images here, newest last.
    for name, seconds in (("kernels/old-1", 600), ("kernels/new-2", 230),
                          ("disk-images/3", 40)):
        (cache / name).mkdir(parents=True)
        marker = cache / name / ("kernel.json" if "kernels" in name else "image.json")
        marker.write_text(json.dumps({"build_seconds": seconds}))
        time.sleep(0.01)
    assert cli.main(["check", str(sandbox)]) == 0
    err = capsys.readouterr().err
    assert "to build before the runs: 2 build(s), about 4m30s (each as long as the newest of " \
        "its kind built here; the 2 kernel builds here took 3m50s to 10m00s)" in err
    assert "  disk image: about 40.0s" in err and "  kernel baseline: about 3m50s" in err

    # Built: no longer listed.
    sweep = load_sweep(sandbox)
    for marker in (sweep.image, *sweep.kernels.values()):
        Path(marker).parent.mkdir(parents=True)
        Path(marker).write_text("{}")
    assert cli.main(["check", str(sandbox)]) == 0
    err = capsys.readouterr().err
    assert "every kernel and the guest image the runs need are built" in err
    assert "to build" not in err
