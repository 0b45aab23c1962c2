"""One run simulated and recorded (execute: its directory made as
.ID.running, its manifest written whole, then renamed to ID or ID.failed),
and an experiment run whole, one run after another, without the sweep
workflow (run_experiment)."""

import shutil
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import hotline
from hotline import outputs, paths, sealed, simulate, specs
from hotline.console import elapsed, say
from hotline.disk_image import DiskImage, build_image
from hotline.errors import HotlineError
from hotline.experiment.conditions import command_line, run_inputs
from hotline.experiment.planning import PlannedRun, load_spec, plan, repeats
from hotline.hashing import hash_file, hash_json
from hotline.kernel.build import Kernel, build_kernel
from hotline.records import manifest as run_record
from hotline.records.done import reusable
from hotline.records.layout import failed_name, running_name
from hotline.records.lock import claim
from hotline.simulate import guest_log
from hotline.simulate.backend import Job, Tool


@dataclass
class RunResult:
    run_id: str
    directory: Path
    failure: str | None
    reused: bool = False


def _write_manifest(work: Path, manifest: dict) -> None:
    """manifest.json, written whole or not at all (a full disk): a
    half-written manifest must never be taken for a result."""
    try:
        manifest["files"] = sealed.describe(work)
        run_record.write(work, manifest)
    except (OSError, HotlineError) as e:
        # Nothing of the run is kept: it is no result, and what it wrote
        # may be what filled the disk.
        shutil.rmtree(work, ignore_errors=True)
        raise HotlineError(f"run {manifest['run_id']}: its manifest could not be written "
                           f"({e}); the run is not recorded") from None


def hotline_revision() -> str:
    """The git commit of this checkout, marked dirty if it has local changes."""
    def git(*args):
        return subprocess.run(["git", "-C", str(paths.REPO), *args],
                              capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def execute(run: PlannedRun, spec: specs.ExperimentSpec, spec_path: Path, kernel: Kernel,
            image: DiskImage, tool: Tool | None, out_dir: Path, rerun: bool) -> RunResult:
    system = specs.load_system(run.system)
    append = command_line(run, spec)
    inputs = run_inputs(run, spec, system, kernel, image, tool)
    key = hash_json(inputs)
    final = out_dir / run.run_id
    if not rerun and reusable(final, run.run_id, key):
        say(f"run {run.run_id}: inputs unchanged, result reused ({final})")
        return RunResult(run.run_id, final, None, reused=True)
    specs.check_host_memory(run.system, system)

    work = out_dir / running_name(run.run_id)
    shutil.rmtree(work, ignore_errors=True)
    outputs.make_dir(work)
    outcome = simulate.get_backend(spec.backend).run(Job(
        run_id=run.run_id, workload=run.workload, params=dict(run.params), spec=spec,
        system=system, kernel=kernel, image=image, tool=tool, append=append, work=work,
        repeat=run.repeat))
    manifest = {
        "run_id": run.run_id,
        "key": key,
        "status": "failed" if outcome.failure else "ok",
        "failure": outcome.failure,
        "inputs": inputs,
        "experiment": {"path": str(spec_path), "sha256": hash_file(spec_path)},
        "hotline": {"version": hotline.__version__, "revision": hotline_revision()},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(outcome.wall_s, 1),
        "tables": {name: path.name for name, path in outcome.tables.items()},
        # What the backend said of its outputs (gem5's regions and
        # micro-ops), None where it says nothing (QEMU).
        "account": outcome.account,
        "guest": {"cpus_brought_up": outcome.report.cpus_brought_up,
                  "cpus_online": outcome.report.cpus_online,
                  "summary": outcome.report.summaries.get(run.workload),
                  "counters": outcome.report.counters.get(run.workload)},
    }
    _write_manifest(work, manifest)
    target = final if outcome.failure is None else out_dir / failed_name(run.run_id)
    shutil.rmtree(target, ignore_errors=True)
    if outcome.failure is None:
        shutil.rmtree(out_dir / failed_name(run.run_id), ignore_errors=True)
    work.rename(target)
    if outcome.failure:
        log = target / guest_log.FILE
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]
                         if log.exists() else [])
        say(f"run {run.run_id}: FAILED: {outcome.failure}\n"
            f"--- last lines of {log} ---\n{tail}")
    else:
        say(f"run {run.run_id}: ok in {elapsed(outcome.wall_s)}: "
            f"{outcome.report.summaries[run.workload]}")
    return RunResult(run.run_id, target, outcome.failure)


def run_experiment(spec_path: Path, *, rerun: bool = False,
                   kernel_source: str | None = None) -> list[RunResult]:
    spec = load_spec(spec_path)
    simulate.get_backend(spec.backend).check(spec, spec_path)  # before anything is built
    runs = plan(spec)
    variants = sorted({r.variant for r in runs})
    out_dir = paths.results_dir() / spec_path.stem
    # One writer at a time in out_dir (records/lock.py); before the builds,
    # so that a second one is refused at once.
    with claim(out_dir, f"run_experiment {spec_path.name}"):
        say(f"experiment {spec_path.stem}: {len(runs)} run(s): {len(variants)} variant(s), "
            f"{len({r.workload for r in runs})} workload(s), {len({r.system for r in runs})} "
            f"system(s), {repeats(spec)}")
        start = time.monotonic()
        image = build_image()
        kernels = {v: build_kernel(v, kernel_source) for v in variants}
        tool = simulate.get_backend(spec.backend).build_tool(spec)
        results = [execute(r, spec, spec_path, kernels[r.variant], image, tool, out_dir,
                           rerun) for r in runs]
    failed = [r for r in results if r.failure]
    say(f"experiment {spec_path.stem}: {len(results) - len(failed)} ok, {len(failed)} failed, "
        f"in {elapsed(time.monotonic() - start)}; results in {out_dir}")
    for r in failed:
        say(f"  failed: {r.run_id}: {r.failure} ({r.directory / guest_log.FILE})")
    return results
