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
from hotline import paths, specs
from hotline.console import elapsed, phase, say
from hotline.disk_image import DiskImage, build_image
from hotline.errors import HotlineError
from hotline.hashing import hash_file, hash_json
from hotline.kernel.build import Kernel, build_kernel
from hotline.plugins import Plugin, build_plugin, plugin_options
from hotline.results.cache_tables import write_tables
from hotline.simulate import gem5, qemu
from hotline.sweep.lock import claim
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


def read_manifest(path: Path) -> dict:
    """A run's manifest.json; a one-line error saying what is wrong with it
    if it is missing, not JSON or not a JSON object."""
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise HotlineError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HotlineError(f"{path}: unreadable ({e})") from None
    if not isinstance(manifest, dict):
        raise HotlineError(f"{path}: unreadable (a JSON {type(manifest).__name__}, not an "
                           "object)")
    return manifest


def _write_manifest(work: Path, manifest: dict) -> None:
    """manifest.json, written whole or not at all (a full disk): a
    half-written manifest must never be taken for a result."""
    path = work / "manifest.json"
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(json.dumps(manifest, indent=2) + "\n")
        partial.rename(path)
    except OSError as e:
        # Nothing of the run is kept: it is no result, and what it wrote
        # may be what filled the disk.
        shutil.rmtree(work, ignore_errors=True)
        raise HotlineError(f"run {manifest['run_id']}: its manifest could not be written "
                           f"({path}: {e.strerror or e}); the run is not recorded: make room "
                           "and run it again") from None


def hotline_revision() -> str:
    """The git commit of this checkout, marked dirty if it has local changes."""
    def git(*args):
        return subprocess.run(["git", "-C", str(paths.REPO), *args],
                              capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def command_line(run: PlannedRun, spec: specs.ExperimentSpec) -> str:
    return qemu.kernel_command_line([(run.workload, dict(run.params))], spec.root,
                                    markers="m5" if spec.backend == "gem5" else "nop")


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
                    "version": gem5.gem5_version() if spec.backend == "gem5"
                    else qemu.qemu_version(),
                    "gem5_config": gem5.config_hash() if spec.backend == "gem5" else None},
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
    manifest_path = final / "manifest.json"
    if not rerun and manifest_path.exists():
        try:
            reusable = read_manifest(manifest_path).get("key") == key
        except HotlineError as e:
            # A damaged result counts as none: the run is made again.
            say(f"run {run.run_id}: {e}; running it again")
            shutil.rmtree(final)
            reusable = False
        if reusable:
            say(f"run {run.run_id}: inputs unchanged, result reused ({final})")
            return RunResult(run.run_id, final, None, reused=True)
    specs.check_host_memory(run.system, system)

    work = out_dir / f".{run.run_id}.running"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    backend_account = None
    if spec.backend == "gem5":
        outcome, backend_account = gem5.simulate(
            work, run_id=run.run_id, system=system, kernel_dir=kernel.directory,
            kernel_key=kernel.key, vmlinux=kernel.vmlinux, disk_image=image.path,
            image_key=image.key, append=append,
            workloads=[run.workload], timeout_s=spec.timeout_s)
    else:
        outcome = _run_qemu(run, spec, system, kernel, image, plugin, append, work)
    tables = {}
    if outcome.failure is None and plugin and plugin.name == "hotline-cache":
        with phase(f"run {run.run_id}: results tables"):
            try:
                tables = write_tables(work, kernel.directory, run.run_id)
            except (OSError, ValueError) as e:
                outcome.failure = f"the plugin's output could not be made into tables: {e}"
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
        "tables": {name: path.name for name, path in tables.items()},
        "gem5": backend_account,
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
        log = target / qemu.SERIAL_LOG
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]
                         if log.exists() else [])
        say(f"run {run.run_id}: FAILED: {outcome.failure}\n"
            f"--- last lines of {target / 'guest.log'} ---\n{tail}")
    else:
        say(f"run {run.run_id}: ok in {elapsed(outcome.wall_s)}: "
            f"{outcome.report.summaries[run.workload]}")
    return RunResult(run.run_id, target, outcome.failure)


def _run_qemu(run: PlannedRun, spec: specs.ExperimentSpec, system: specs.SystemSpec,
              kernel: Kernel, image: DiskImage, plugin: Plugin | None, append: str,
              work: Path) -> qemu.Outcome:
    # QEMU runs in the run directory and names its outputs relative to it,
    # so command.sh stays valid after the directory is renamed.
    scratch = load_workload(run.workload).scratch_disks
    disks = qemu.make_scratch_disks(work, scratch.count(dict(run.params)),
                                    scratch.size_mib(dict(run.params))) if scratch else ()
    cmd = qemu.command(bzimage=kernel.bzimage, image=image, root=spec.root, cpus=system.cpus,
                       memory_mib=system.memory_mib, cpu_model=system.qemu.cpu_model,
                       mode=spec.mode, append=append, serial_log=Path(qemu.SERIAL_LOG),
                       plugin_args=(plugin.qemu_argument(
                           Path(f"{plugin.name}.out"),
                           plugin_options(plugin.name, system, kernel.directory, spec.mode)),)
                       if plugin else (), scratch_disks=disks)
    say(f"run {run.run_id}: booting {system.cpus} vCPUs ({spec.mode} mode)")
    try:
        outcome = qemu.run(cmd, work, cpus=system.cpus, workloads=[run.workload],
                           timeout_s=spec.timeout_s, label=f"run {run.run_id}")
    finally:
        # What the workload wrote is not a result, and can be gigabytes.
        for disk in disks:
            (work / disk).unlink(missing_ok=True)
    return outcome


def run_experiment(spec_path: Path, *, rerun: bool = False,
                   kernel_source: str | None = None) -> list[RunResult]:
    spec = specs.load_experiment(spec_path)
    if spec.backend == "gem5":
        gem5.check_experiment(spec, spec_path)  # before anything is built
    runs = plan(spec)
    variants = sorted({r.variant for r in runs})
    out_dir = paths.results_dir() / spec_path.stem
    # One writer at a time in out_dir (sweep/lock.py); before the builds,
    # so that a second one is refused at once.
    with claim(out_dir, f"run_experiment {spec_path.name}"):
        say(f"experiment {spec_path.stem}: {len(runs)} run(s): {len(variants)} variant(s), "
            f"{len({r.workload for r in runs})} workload(s), {len({r.system for r in runs})} "
            f"system(s), {spec.repeats} repeat(s)")
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
        say(f"  failed: {r.run_id}: {r.failure} ({r.directory / 'guest.log'})")
    return results
