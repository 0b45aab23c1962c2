"""./hotline run: an experiment's sweep on Snakemake (workflow/Snakefile),
locally or with a profile (profiles/slurm), watched and summarised.

Snakemake decides what is missing or outdated and runs it, independent
steps in parallel; its own output goes to .sweep/snakemake.log in the
experiment's results directory, and the console shows what the results
directory says (progress.py).  What is run again is records/done.py's to say;
before Snakemake plans, every run's record is read the way gathering reads
it (done.settle), so that a damaged run is made again by this sweep, not
the next.  Besides, runs whose step was in flight when the sweep was
interrupted are run again (--rerun-incomplete), and --rerun forces every
run, each step then simulating even if the run's key is unchanged.
"""

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from hotline import outputs
from hotline.console import elapsed, say
from hotline.errors import HotlineError
from hotline.experiment import repeats
from hotline.inputs import read_text
from hotline.records import done, lock
from hotline.records.layout import ENGINE_LOG, GATHER_LOG, INDEX, SWEEP_CONFIG
from hotline.sweep.progress import Progress, build_log
from hotline.sweep.workflow import PROFILES, SNAKEFILE, Sweep, load_sweep, usable_cores
# Memory left to the host (and whatever else runs on it) by a local sweep.
HOST_RESERVE_MIB = 2048
POLL_S = 1.0


def resolve_profile(name: str) -> Path:
    """A profile directory: a path, or the name of one in profiles/."""
    for candidate in (Path(name), PROFILES / name):
        if (candidate / "config.yaml").is_file():
            return candidate.resolve()
    available = ", ".join(sorted(p.name for p in PROFILES.iterdir() if p.is_dir()))
    raise HotlineError(f"no Snakemake profile '{name}' (a directory with config.yaml); "
                       f"hotline's: {available}")


def memory_mib() -> int:
    for line in read_text(Path("/proc/meminfo")).splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise HotlineError("/proc/meminfo has no MemTotal")


def snakemake_command(sweep: Sweep, *, jobs: int | None = None, profile: Path | None = None,
                      rerun: bool = False, dry_run: bool = False,
                      kernel_source: str | None = None,
                      redo: set[str] = frozenset()) -> list[str]:
    # The workflow's config as a JSON file, which Snakemake reads as it is:
    # on its command line (--config) it strips quotes and parses values as
    # YAML, so that a path holding `: ` became a mapping.
    config = {"spec": str(sweep.spec_path)}
    if kernel_source:
        config["kernel_source"] = str(Path(kernel_source).resolve())
    if redo:
        # A dry run's runs that are not done after all (done.judge): the
        # workflow wants their next attempt, as the real run's would.
        config["redo"] = ",".join(sorted(redo))
    if rerun:
        config["rerun"] = 1
    config_file = outputs.write_text(sweep.out_dir / SWEEP_CONFIG, json.dumps(config, indent=1))
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE),
               "--directory", str(sweep.out_dir), "--configfile", str(config_file),
               # A failed run must not stop the others; a step cut off by an
               # interruption is run again; ./hotline holds its own lock.
               "--keep-going", "--rerun-incomplete", "--nolock", "--printshellcmds"]
    if profile:
        command += ["--profile", str(profile)]
        if jobs:
            command += ["--jobs", str(jobs)]
    else:
        # Every core (one simulation each), and no more memory than the
        # machine has.  host_cores: see workflow/Snakefile.
        cores = jobs or usable_cores()
        command += ["--cores", str(cores),
                    "--resources", f"host_cores={cores}",
                    f"mem_mb={max(memory_mib() - HOST_RESERVE_MIB, 1024)}"]
    if rerun:
        command += ["--forcerun", "simulate"]
    if dry_run:
        command.append("--dry-run")
    return command


def run_sweep(spec_path: Path, *, jobs: int | None = None, profile: str | None = None,
              rerun: bool = False, dry_run: bool = False,
              kernel_source: str | None = None) -> int:
    if jobs is not None and jobs < 1:
        raise HotlineError(f"--jobs {jobs}: give at least 1")
    profile_dir = resolve_profile(profile) if profile else None
    # Before anything is said or written, so that a second sweep of the
    # experiment ends with the one line that refuses it.  A dry run writes
    # no results.
    sweep = load_sweep(Path(spec_path).resolve(), kernel_source)
    with nullcontext() if dry_run else lock.claim(sweep.out_dir, "hotline run",
                                                  shared=True) as lock_fd:
        say(f"experiment {sweep.name}: {len(sweep.runs)} run(s): {len(sweep.kernels)} "
            f"variant(s), {len({r.workload for r in sweep.runs})} workload(s), "
            f"{len({r.system for r in sweep.runs})} system(s), {repeats(sweep.spec)}; "
            f"results in {sweep.out_dir}")
        # Every record read as gathering reads it: damaged runs set aside,
        # unreadable records removed, so that this sweep makes them again.
        records, redo = done.settle(sweep.out_dir, [step.run_id for step in sweep.runs],
                                    heal=not dry_run, foreign=sweep.foreign)
        sweep = sweep.with_wanted_records(frozenset(redo))
        outputs.make_dir(sweep.out_dir / ".sweep")
        failed_before = [run_id for run_id, r in records.items() if r["status"] == "failed"]
        done_before = sum(r["status"] == "ok" for r in records.values())
        # Snakemake, not this count, decides what runs: a run whose inputs
        # (kernel, image, plugin, spec) changed since runs again.
        say(f"{done_before} run(s) have results already (made again where their inputs "
            f"changed)" +
            (f", {len(failed_before)} failed before and run again" if failed_before else "") +
            "; " + "; ".join(f"{label} {'cached' if Path(m).exists() else 'to build'}"
                             for label, m in sweep.builds().items()))
        command = snakemake_command(sweep, jobs=jobs, profile=profile_dir, rerun=rerun,
                                    dry_run=dry_run, kernel_source=kernel_source, redo=redo)
        if dry_run:
            return subprocess.run(command, cwd=sweep.out_dir).returncode
        return _watch(sweep, command, lock_fd)


def _watch(sweep: Sweep, command: list[str], lock_fd: int) -> int:
    progress = Progress(sweep)
    log_path = sweep.out_dir / ENGINE_LOG
    say(f"Snakemake's log: {log_path}")
    try:
        log = open(log_path, "w")
    except OSError as e:
        raise outputs.cannot_write(log_path, e) from None
    with log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        # Snakemake holds the experiment's lock with this process (the same
        # open file), so that it stays held if this process is killed and
        # Snakemake goes on.
        proc = subprocess.Popen(command, cwd=sweep.out_dir, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, pass_fds=(lock_fd,))
        lock.note(lock_fd, "snakemake", proc.pid)

        def terminate(signum, frame):
            # Not a Ctrl-C, which reaches Snakemake and the steps too: pass it on.
            _signal(proc, sweep, signal.SIGINT)
            raise KeyboardInterrupt
        previous = signal.signal(signal.SIGTERM, terminate)
        try:
            while proc.poll() is None:
                time.sleep(POLL_S)
                progress.poll()
        except KeyboardInterrupt:
            _stop(proc, sweep)
            progress.poll()
            summarize(sweep, progress, proc.returncode, interrupted=True)
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
    progress.poll()
    return summarize(sweep, progress, proc.returncode)


def _stop(proc: subprocess.Popen, sweep: Sweep) -> None:
    """Let Snakemake stop its jobs (it marks their outputs incomplete, to be
    made again next time); ask once more if it does not seem to have heard,
    then kill it and its steps."""
    say("interrupted: stopping the steps in flight ...")
    for attempt in range(2):
        try:
            proc.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            _signal(proc, sweep, signal.SIGINT)
        except KeyboardInterrupt:
            pass
    _signal(proc, sweep, signal.SIGKILL)
    proc.wait()


def _signal(proc: subprocess.Popen, sweep: Sweep, signum: int) -> None:
    """Snakemake and the steps on this machine, found by the lock they
    hold: Snakemake (9.15, locally) stops no step itself; on SIGINT it waits
    for them, counting on the Ctrl-C having reached them too."""
    pids = [proc.pid] + [pid for pid, role in lock.holders(sweep.out_dir)
                         if role.startswith(lock.STEP)]
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def summarize(sweep: Sweep, progress: Progress, returncode: int | None,
              interrupted: bool = False) -> int:
    """The end of a sweep on the console: counts, every failure with its
    reason and log, what did not run and why.  0 if every run is ok."""
    current = {run_id: r for run_id, r in progress.records.items() if progress.is_current(r)}
    ok = [run_id for run_id, r in current.items() if r["status"] == "ok"]
    failed = [(run_id, r) for run_id, r in current.items() if r["status"] != "ok"]
    missing = [step for step in sweep.runs if step.run_id not in current]
    index = sweep.out_dir / INDEX
    # Up to date: written after every record it indexes.
    newest = max((progress.records[r]["_mtime"] for r in current), default=0)
    fresh = index.exists() and index.stat().st_mtime >= newest
    say(f"sweep {sweep.name}: {len(ok)} ok, {len(failed)} failed, {len(missing)} not run, "
        f"in {elapsed(progress.seconds())}; " +
        (f"index of runs: {index}" if fresh else f"index of runs ({index}) not updated"))
    for run_id, r in failed:
        log = r.get("guest_log") or r["step_log"]
        say(f"  failed: {run_id}: {r['failure']} (log: {sweep.out_dir / log})")
    # What Snakemake says of the steps that failed: on a cluster, the state
    # of their jobs (cancelled, out of memory, timed out) and the job's log.
    errors = job_errors(sweep.out_dir / ENGINE_LOG)
    for label, marker in sweep.builds().items():
        if not Path(marker).exists():
            log = build_log(sweep.out_dir, label, marker)
            say(f"  {label}: not built" + (f"; last lines of {log}:\n{_tail(log)}"
                                           if log.exists() else ""))
            if marker in errors:
                say(f"  {label}: Snakemake: {errors[marker]}")
    if interrupted:
        if missing:
            say(f"  {len(missing)} run(s) not run: run the same command again to resume")
        return 1
    for step in missing:
        log = sweep.out_dir / step.log
        if log.exists() and log.stat().st_mtime >= progress.started - 1:
            # Killed from outside (the host's out-of-memory killer took a
            # seed-scale run's table building), a step can say nothing.
            say(f"  {step.run_id}: its step stopped without recording an outcome (a step "
                "killed from outside says nothing: if the host ran out of memory, `dmesg | "
                f"grep -i oom` names it, and fewer --jobs help); last lines of {log}:\n"
                f"{_tail(log)}")
        if step.record in errors:
            say(f"  {step.run_id}: Snakemake: {errors[step.record]}")
    gather_log = sweep.out_dir / GATHER_LOG
    if not missing and not fresh and gather_log.exists():
        say(f"  gathering the results failed; last lines of {gather_log}:\n{_tail(gather_log)}")
    elif missing or (returncode != 0 and not failed):
        say(f"Snakemake exited with status {returncode}; last lines of "
            f"{sweep.out_dir / ENGINE_LOG}:\n{_tail(sweep.out_dir / ENGINE_LOG)}")
    return 0 if returncode == 0 and not failed and not missing else 1


def job_errors(engine_log: Path) -> dict[str, str]:
    """Snakemake's message for each job that failed, by the job's output
    (a run's record, a build's marker), from its "Error in rule" blocks,
    with the logs it names; only the messages that say something (a step
    that fails on this machine has none; a Slurm job's say its state)."""
    errors, block = {}, None
    lines = engine_log.read_text(errors="replace").splitlines() if engine_log.exists() else []
    for line in [*lines, ""]:
        if line.startswith("Error in rule "):
            block = {}
        elif block is not None and line.startswith("    "):
            key, _, value = line.strip().partition(": ")
            block.setdefault(key, value)
        elif block is not None:
            message = block.get("message", "None").split("For further error details")[0]
            if message.strip() not in ("", "None"):
                logs = block.get("log", "").removesuffix(" (check log file(s) for error details)")
                for output in block.get("output", "").split(", "):
                    errors[output] = message.strip() + (f" (logs: {logs})" if logs else "")
            block = None
    return errors


def _tail(path: Path, lines: int = 15) -> str:
    text = path.read_text(errors="replace").splitlines()[-lines:]
    return "\n".join(f"    {line}" for line in text)

