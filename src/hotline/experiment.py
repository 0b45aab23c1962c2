"""Running an experiment spec: build what it needs, run every combination of
kernel variant x workload x system x repeat, record each run in its own
directory with a manifest that names every input by hash.

A run directory is created as .ID.running and renamed to ID only when the run
succeeded (or ID.failed when it did not), so a directory named ID is always a
complete, valid result.  A run whose inputs have not changed is not repeated.
"""

import json
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
from hotline.hashing import hash_file, hash_json
from hotline.kernel.build import Kernel, build_kernel
from hotline.records.done import reusable
from hotline.records.lock import claim
from hotline.simulate import guest_log
from hotline.simulate.backend import Job
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu.plugins import Plugin, build_plugin
from hotline.workloads import load_workload


@dataclass(frozen=True)
class PlannedRun:
    variant: str
    system: str
    workload: str
    scale: str
    params: tuple[tuple[str, int], ...]
    overrides: tuple[tuple[str, int], ...]
    repeat: int

    @property
    def run_id(self) -> str:
        label = "-".join([self.workload, self.scale] + [f"{k}{v}" for k, v in self.overrides])
        return f"{self.variant}--{label}--{self.system}--r{self.repeat}"


@dataclass
class RunResult:
    run_id: str
    directory: Path
    failure: str | None
    reused: bool = False


def load_spec(path: Path) -> specs.ExperimentSpec:
    """An experiment spec as specs.py checks it, then as its backend does
    (a plugin it does not have, a root it cannot boot): every command that
    reads a spec reads it here."""
    spec = specs.load_experiment(path)
    simulate.get_backend(spec.backend).check_spec(spec, path)
    return spec


def plan(spec: specs.ExperimentSpec) -> list[PlannedRun]:
    """Every run of the spec, in order, each once (groups may overlap)."""
    runs = {}
    for group in spec.groups():
        for variant in group.variants:
            for ref in group.workloads:
                params = load_workload(ref.name).resolve_params(ref.scale, ref.params)
                for system in group.systems:
                    for repeat in range(spec.repeats):
                        run = PlannedRun(variant, system, ref.name, ref.scale,
                                         tuple(sorted(params.items())),
                                         tuple(sorted(ref.params.items())), repeat)
                        runs.setdefault(run.run_id, run)
    return list(runs.values())


def _write_manifest(work: Path, manifest: dict) -> None:
    """manifest.json, written whole or not at all (a full disk): a
    half-written manifest must never be taken for a result."""
    path = work / "manifest.json"
    try:
        manifest["files"] = sealed.describe(work)
        outputs.write_text(path, json.dumps(manifest, indent=2) + "\n")
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


def command_line(run: PlannedRun, spec: specs.ExperimentSpec) -> str:
    return kernel_command_line([(run.workload, dict(run.params))], spec.root,
                               markers=simulate.get_backend(spec.backend).markers)


def run_conditions(run: PlannedRun, spec: specs.ExperimentSpec,
                   system: specs.SystemSpec) -> dict:
    """The part of a run's inputs known before anything is built: all but the
    kernel, the guest image and the plugin (which the sweep workflow tracks
    by their cache keys)."""
    return {
        "system": {"name": run.system, "sha256": hash_file(specs.system_path(run.system)),
                   "spec": system.model_dump()},
        "workload": {"name": run.workload, "scale": run.scale, "params": dict(run.params)},
        "backend": {"name": spec.backend, "mode": spec.mode,
                    **simulate.get_backend(spec.backend).settings(spec, system, run.repeat),
                    **simulate.get_backend(spec.backend).identity()},
        "root": spec.root,
        "kernel_command_line": command_line(run, spec),
        "repeat": run.repeat,
    }


def run_inputs(run: PlannedRun, spec: specs.ExperimentSpec, system: specs.SystemSpec,
               kernel: Kernel, image: DiskImage, plugin: Plugin | None) -> dict:
    """Everything that determines a run's result; its hash is the run's key."""
    kernel_info = kernel.info()
    inputs = run_conditions(run, spec, system)
    # The root is named with the image it comes from.
    del inputs["root"]
    inputs["backend"]["plugin"] = plugin.manifest() if plugin else None
    return {
        "kernel": {"variant": run.variant, "key": kernel.key,
                   "version": kernel_info["kernel_version"],
                   "source": kernel_info["inputs"]["source"],
                   "outputs": kernel_info["outputs"]},
        "guest_image": {"key": image.key, "root": spec.root,
                        "sha256": image.info()["sha256" if spec.root == "disk"
                                               else "initramfs_sha256"]},
        **inputs,
    }


def execute(run: PlannedRun, spec: specs.ExperimentSpec, spec_path: Path, kernel: Kernel,
            image: DiskImage, plugin: Plugin | None, out_dir: Path, rerun: bool) -> RunResult:
    system = specs.load_system(run.system)
    append = command_line(run, spec)
    inputs = run_inputs(run, spec, system, kernel, image, plugin)
    key = hash_json(inputs)
    final = out_dir / run.run_id
    if not rerun and reusable(final, run.run_id, key):
        say(f"run {run.run_id}: inputs unchanged, result reused ({final})")
        return RunResult(run.run_id, final, None, reused=True)
    specs.check_host_memory(run.system, system)

    work = out_dir / f".{run.run_id}.running"
    shutil.rmtree(work, ignore_errors=True)
    outputs.make_dir(work)
    outcome = simulate.get_backend(spec.backend).run(Job(
        run_id=run.run_id, workload=run.workload, params=dict(run.params), spec=spec,
        system=system, kernel=kernel, image=image, plugin=plugin, append=append, work=work,
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
        # What the backend said of its outputs: gem5's account, None for QEMU.
        "gem5": outcome.account,
        "guest": {"cpus_brought_up": outcome.report.cpus_brought_up,
                  "cpus_online": outcome.report.cpus_online,
                  "summary": outcome.report.summaries.get(run.workload),
                  "counters": outcome.report.counters.get(run.workload)},
    }
    _write_manifest(work, manifest)
    target = final if outcome.failure is None else final.with_name(final.name + ".failed")
    shutil.rmtree(target, ignore_errors=True)
    if outcome.failure is None:
        shutil.rmtree(final.with_name(final.name + ".failed"), ignore_errors=True)
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


def repeats(spec: specs.ExperimentSpec) -> str:
    """The spec's repeats, and what makes them differ (or that nothing does)."""
    if spec.repeats == 1:
        return "1 repeat"
    how = simulate.get_backend(spec.backend).perturbation(spec)
    return f"{spec.repeats} repeats, " + (f"differing by {how}" if how else
                                        "identical (nothing varies them in this mode)")


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
        plugin = build_plugin(spec.plugin) if spec.plugin else None
        results = [execute(r, spec, spec_path, kernels[r.variant], image, plugin, out_dir,
                           rerun) for r in runs]
    failed = [r for r in results if r.failure]
    say(f"experiment {spec_path.stem}: {len(results) - len(failed)} ok, {len(failed)} failed, "
        f"in {elapsed(time.monotonic() - start)}; results in {out_dir}")
    for r in failed:
        say(f"  failed: {r.run_id}: {r.failure} ({r.directory / guest_log.FILE})")
    return results
