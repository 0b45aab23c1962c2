"""The gem5 backend: hotline's experiment on gem5's X86Board, with the same
kernel, disk image and system spec as the QEMU backend, producing the same
results tables.

gem5 is not packaged anywhere hotline can install from: the user builds it
and points GEM5 at the binary (gem5.opt for X86, v24.0).  Each run:

1. finds the checkpoint of its guest at the first region of interest in
   the cache, or boots to it on atomic CPUs (checkpoints.py,
   configs/gem5/hotline_boot.py; logs in boot/),
2. writes the measuring run's parameters (params.py) to
   gem5-params.json and runs `$GEM5 --outdir=gem5 configs/gem5/
   hotline_measure.py --params gem5-params.json` in the run directory
   (command.sh records it), restoring the checkpoint into the measuring CPU
   with the spec's caches, watching the guest console like the QEMU runner;
   guest.log is the boot's console and then the restored run's,
3. reads what gem5 left: stats.txt into gem5_stats.parquet (long) and
   gem5_core_stats.parquet (per core and region, O3 cores' rescheduled
   loads among its figures) and, from hotline's gem5 extension
   (configs/gem5/extras), the miss profile of each region (classic
   caches: miss_profile.py) into gem5_misses_raw.parquet,
   gem5_miss_summary.json, misses.parquet and coherence.parquet (through
   the attribution step the QEMU backend uses), and each core's cycle
   profile of each region (O3 with classic caches: cycle_profile.py) into
   cycles.parquet and region_cycles.parquet (or, sampled, each window's
   into sampled_cycles.parquet, with each core's retire count:
   retire_count.py).  A gem5 built without the extension measures neither
   profile: its run has gem5's own statistics, and says so in one line
   (run_params.no_extension), written to gem5/no-extension.txt and said again here.
"""

import dataclasses
from functools import cache
import json
import os
import shutil
from pathlib import Path

import pandas as pd

from hotline import paths
from hotline.console import say
from hotline.errors import HotlineError
from hotline.inputs import read_text
from hotline.simulate.gem5 import (checkpoints, cycle_profile, miss_profile,
                                   params as gem5_params, retire_count, stats)
from hotline.simulate import guest_log
from hotline.simulate.backend import Outcome
from hotline.simulate.supervise import exit_failure, supervise, write_command
from hotline.hashing import hash_file, hash_json
from hotline.results.attribute import attribute_with, coherence_table
from hotline.results.objects import ObjectMap
from hotline.specs import ExperimentSpec, SystemSpec, load_system
from hotline.workloads import load_workload

ENV = "GEM5"
BUILD_DOCS = "https://www.gem5.org/documentation/general_docs/building"
SCRIPT = paths.CONFIGS / "gem5" / "hotline_measure.py"
OUTDIR = "gem5"
PARAMS_FILE = "gem5-params.json"
SERIAL_LOG = guest_log.FILE
LOG = "gem5.log"


def gem5_binary() -> Path:
    """The gem5 binary GEM5 names; a one-line error saying what to do if none."""
    value = os.environ.get(ENV)
    if not value:
        raise HotlineError(f"backend gem5 needs {ENV}: set it to the path of a gem5.opt built "
                           f"for X86 (gem5 v24.0; build it as {BUILD_DOCS} says)")
    path = Path(value)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise HotlineError(f"{ENV}={value}: not an executable file; it should be a gem5.opt "
                           f"built for X86 (gem5 v24.0; {BUILD_DOCS})")
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            # A script or text would fail in gem5's exec with words that
            # name no cause (seen: "out of memory").
            raise HotlineError(f"{ENV}={value}: not a program (no ELF header); it should be "
                               f"a gem5.opt built for X86 (gem5 v24.0; {BUILD_DOCS})")
    return path


@cache
def _binary_identity(path: Path, mtime_ns: int) -> str:
    return f"gem5 binary {path} sha256:{hash_file(path)}"


def gem5_version() -> str:
    """The gem5 binary's identity for run keys.  gem5 has no --version
    option, and a build's version string does not say how it was built, so
    the binary's own hash is what names it."""
    binary = gem5_binary()
    return _binary_identity(binary, binary.stat().st_mtime_ns)


def config_hash() -> str:
    """The gem5 configuration's files, as part of a run's key."""
    files = sorted((paths.CONFIGS / "gem5").rglob("*.py"))
    return hash_json({str(f.relative_to(paths.CONFIGS)): hash_file(f) for f in files})


def check_experiment(spec: ExperimentSpec, spec_path: Path) -> None:
    """What a gem5 experiment needs beyond a valid spec, checked before any
    build: the gem5 binary, systems gem5 can build, workloads it can run."""
    gem5_binary()
    groups = spec.groups()
    for name in sorted({s for g in groups for s in g.systems}):
        try:
            system = load_system(name)
            gem5_params.check_system(system)
            # The last repeat's perturbation: refused, before any build,
            # where the system's memory cannot jitter.
            gem5_params.perturbation(system, spec.repeats - 1, spec.repeats)
        except HotlineError as e:
            raise HotlineError(f"{spec_path}: system '{name}': {e}") from None
    for ref in (ref for g in groups for ref in g.workloads):
        if why := cannot_run(ref.name, load_workload(ref.name).resolve_params(
                ref.scale, ref.params)):
            raise HotlineError(f"{spec_path}: {why}")


def cannot_run(workload: str, params: dict[str, int]) -> str:
    """Why the gem5 backend cannot run the workload with these parameters,
    or "" if it can."""
    scratch = load_workload(workload).scratch_disks
    count = scratch.count(params) if scratch else 0
    most = gem5_params.run_params.MAX_SCRATCH_DISKS
    if count > most:
        return (f"workload '{workload}' with {scratch.count_param} = {count} needs {count} "
                f"scratch disks; gem5's X86Board takes at most {most} beside its root disk "
                f"(one IDE controller): give it at most {most}")
    return ""


def command(gem5: Path) -> list[str]:
    """gem5's command line, run in the run directory (paths relative to it)."""
    return [str(gem5), f"--outdir={OUTDIR}", "--listener-mode=off", str(SCRIPT),
            "--params", PARAMS_FILE]


def run(cmd: list[str], run_dir: Path, *, boot_console: Path, cpus: int,
        workloads: list[str], timeout_s: int, label: str) -> Outcome:
    """Run gem5 in run_dir to its exit; kill it on a guest panic or timeout.
    The guest log is the boot's console, then the restored run's."""
    write_command(run_dir, cmd, "gem5")
    console = run_dir / OUTDIR / gem5_params.CONSOLE
    ended = supervise(cmd, run_dir, log=run_dir / LOG, console=console,
                      timeout_s=timeout_s, label=label, poll_s=1,
                      console_before=boot_console.read_text(errors="replace"))
    with open(run_dir / SERIAL_LOG, "wb") as log:
        log.write(boot_console.read_bytes())
        if console.exists():
            log.write(console.read_bytes())
    report = guest_log.parse((run_dir / SERIAL_LOG).read_text(errors="replace")
                             if (run_dir / SERIAL_LOG).exists() else "")
    failure = ended.killed_for
    if failure is None and ended.returncode != 0:
        failure = exit_failure("gem5", ended.returncode, checkpoints.last_error(run_dir / LOG))
    failure = failure or guest_log.failure_reason(report, cpus, workloads)
    return Outcome(failure, report, ended.wall_s)


def read_regions(out: Path) -> list[tuple[int, int | None]]:
    path = out / gem5_params.ROI_FILE
    if not path.is_file():
        raise HotlineError(f"{path}: missing; the config script did not start")
    return [(r["begin"], r["end"]) for r in json.loads(read_text(path))["regions"]]


def without_extension(run_dir: Path) -> str:
    """The measuring script's one line saying that this gem5 lacks hotline's
    extension (run_params.no_extension), from the file it writes it to, or
    "" if it wrote none."""
    said = run_dir / OUTDIR / gem5_params.run_params.NO_EXTENSION_FILE
    return read_text(said).strip() if said.is_file() else ""


def collect(run_dir: Path, run_id: str, params, kernel_dir: Path,
            checkpoint: checkpoints.Checkpoint) -> tuple[dict[str, Path], dict]:
    """Turn gem5's outputs in run_dir/gem5 into hotline's tables in run_dir:
    the results tables every backend makes (results/schema.py) that gem5 can
    fill, by name, and a short account for the manifest.  gem5's own
    statistics are read from every run; what hotline's extension measures,
    from a gem5 built with it."""
    out = run_dir / OUTDIR
    regions = read_regions(out)
    long = stats.read_stats(out / "stats.txt", run_id, len(regions))
    long.to_parquet(run_dir / "gem5_stats.parquet", index=False)
    cores = stats.core_summary(long)
    cores.to_parquet(run_dir / "gem5_core_stats.parquet", index=False)
    # roi.parquet as the QEMU backend writes it: instructions per CPU inside
    # the regions (gem5's committed instructions, summed over the regions).
    roi = cores.groupby("cpu", as_index=False)["committed_insts"].sum()
    pd.DataFrame({"run": run_id, "cpu": roi["cpu"].astype("int64"),
                  "instructions": roi["committed_insts"].fillna(0).astype("int64")}).to_parquet(
        run_dir / "roi.parquet", index=False)
    tables = {"roi": run_dir / "roi.parquet"}
    account = {"regions": len(regions), "checkpoint": checkpoint.key}
    missing = without_extension(run_dir)
    if missing:
        say(f"{run_id}: {missing}")
        account["without_extension"] = missing
    # The symbols and announced objects that name instructions and data,
    # read once a table needs them (a run with none of the extension's
    # tables needs none).
    objects = cache(lambda: ObjectMap.for_kernel(kernel_dir, (run_dir / SERIAL_LOG).read_text(
        errors="replace")))
    if params.miss_profile is not None:
        tables.update(_miss_tables(run_dir, run_id, params, regions, kernel_dir, objects,
                                   account, missing))
    if params.cycle_profile:
        tables.update(_cycle_tables(run_dir, run_id, params, regions, objects, account,
                                    missing))
    if params.sampling:
        tables.update(_sampled_tables(run_dir, run_id, params, objects, account))
    return tables, account


def _all_written(paths, what: str) -> None:
    """One line if gem5 left any of the tables out."""
    paths = list(paths)
    missing = [path for path in paths if not path.exists()]
    if missing:
        raise HotlineError(f"{missing[0]}: missing; gem5 wrote {len(paths) - len(missing)} of "
                           f"{len(paths)} {what}")


def _sampled_tables(run_dir: Path, run_id: str, params, objects,
                    account: dict) -> dict[str, Path]:
    """A sampled run's windows' profiles: each instruction's estimated share."""
    out = run_dir / OUTDIR
    regions = json.loads(read_text(out / gem5_params.ROI_FILE))["regions"]
    closed = [(region, r) for region, r in enumerate(regions) if r["end"] is not None]
    files = {(region, window, cpu): out / params.sampling.path.format(
                 region=region, sample=window, cpu=cpu)
             for region, r in closed
             for window in range(r.get("windows", 0)) for cpu in range(params.machine.cpus)}
    _all_written(files.values(), "sampled cycle profiles")
    if not files:
        raise HotlineError("the sampled run measured no window: the regions are shorter than "
                           "the system spec's [gem5] sampling interval_cycles")
    # The run's own micro-ops per instruction, on its atomic and O3 cores,
    # against which the windows' estimate of them is checked.
    retired = {(region, cpu, core): out / params.sampling.retire_path.format(
                   region=region, cpu=cpu, core=core)
               for region, _ in closed for cpu in range(params.machine.cpus)
               for core in retire_count.CORES}
    _all_written(retired.values(), "retire counts")
    statistic = {(region, cpu): n for region, r in closed
                 for cpu, n in enumerate(r.get("region_micro_ops", []))}
    counted = retire_count.counted(retired, statistic)
    cycle_profile.sampled(files, objects(), run_id, counted).to_parquet(
        run_dir / "sampled_cycles.parquet", index=False)
    account["counted_micro_ops"] = int(counted.sum())
    account["region_micro_ops"] = sum(statistic.values())
    account["sampled_windows"] = len(files) // params.machine.cpus
    account["windows_cut_short"] = sum(bool(r.get("window_cut")) for r in regions)
    # Windows ended by their cap (specs.Sampling.cap_cycles) with a core
    # still short of its micro-ops.
    account["sampled_windows_capped"] = sum(r.get("windows_capped", 0) for r in regions)
    return {"sampled_cycles": run_dir / "sampled_cycles.parquet"}


def _miss_tables(run_dir: Path, run_id: str, params, regions, kernel_dir: Path, objects,
                 account: dict, missing: str) -> dict[str, Path]:
    """The misses hotline's extension counted inside gem5 (miss_profile), or
    none where the gem5 binary was built without it (missing: its line)."""
    out = run_dir / OUTDIR
    files = [out / params.miss_profile.path.format(region=region)
             for region, (_, end) in enumerate(regions) if end is not None]
    if missing and not any(path.exists() for path in files):
        account["misses_from"] = "not measured: gem5 built without hotline's extension"
        return {}
    _all_written(files, "miss profiles")
    clock_hz = float(params.machine.clock.removesuffix("GHz")) * 1e9
    raw, stolen, summary = miss_profile.aggregate(files, miss_profile.kernel_layout(kernel_dir),
                                                  clock_hz)
    (run_dir / "gem5_miss_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    account["misses"] = summary["misses"]
    account["misses_from"] = "miss profile"
    raw.to_parquet(run_dir / "gem5_misses_raw.parquet", index=False)
    attribute_with(raw, objects(), run_id).to_parquet(run_dir / "misses.parquet", index=False)
    coherence_table(stolen, objects(), run_id).to_parquet(run_dir / "coherence.parquet",
                                                          index=False)
    return {"misses": run_dir / "misses.parquet", "coherence": run_dir / "coherence.parquet"}


def _cycle_tables(run_dir: Path, run_id: str, params, regions, objects,
                  account: dict, missing: str) -> dict[str, Path]:
    """The cycle profile's tables, or none where the gem5 binary was built
    without hotline's extension (missing: its line)."""
    out = run_dir / OUTDIR
    files = {(region, cpu): out / params.cycle_profile.format(region=region, cpu=cpu)
             for region, (_, end) in enumerate(regions) if end is not None
             for cpu in range(params.machine.cpus)}
    if missing and not any(path.exists() for path in files.values()):
        account["cycle_profile"] = "not measured: gem5 built without hotline's extension"
        return {}
    _all_written(files.values(), "cycle profiles")
    written = {}
    for name, table in cycle_profile.tables(files, objects(), run_id).items():
        table.to_parquet(run_dir / f"{name}.parquet", index=False)
        written[name] = run_dir / f"{name}.parquet"
    account["cycle_profile"] = "measured"
    return written


def simulate(run_dir: Path, *, run_id: str, system: SystemSpec, kernel_dir: Path,
             kernel_key: str, vmlinux: Path, disk_image: Path, image_key: str, append: str,
             workloads: list[str], timeout_s: int, repeat: int = 0, repeats: int = 1,
             scratch: checkpoints.ScratchImages | None = None) -> tuple[Outcome, dict]:
    """One gem5 run in run_dir: the checkpoint at the region (booting to it
    if no run has yet, with the workload's blank scratch disks if it has
    any), the measuring run restored from it (perturbed where the experiment
    has more than one repeat: params.perturbation), then the tables."""
    gem5 = gem5_binary()
    label = f"run {run_id}"
    machine = gem5_params.machine(system, vmlinux=vmlinux, disk_image=disk_image,
                                  kernel_args=append)
    inputs = checkpoints.checkpoint_inputs(machine, kernel_key=kernel_key, image_key=image_key,
                                           gem5_identity=gem5_version(), scratch=scratch)
    checkpoint, failure = checkpoints.ensure_checkpoint(
        inputs, machine, gem5=gem5, work=run_dir, timeout_s=timeout_s, label=label,
        cpus=system.cpus, workloads=workloads)
    if failure:
        log = run_dir / "boot" / SERIAL_LOG
        if log.exists():
            shutil.copyfile(log, run_dir / SERIAL_LOG)
        report = guest_log.parse(log.read_text(errors="replace") if log.exists() else "")
        return Outcome(failure, report, 0.0), {}
    machine = dataclasses.replace(machine,
                                  scratch_disks=[str(d) for d in checkpoint.scratch_disks()])
    params = gem5_params.measure_params(system, machine, checkpoint.cpt, repeat, repeats)
    (run_dir / PARAMS_FILE).write_text(
        json.dumps(gem5_params.run_params.to_dict(params), indent=2) + "\n")
    cmd = command(gem5)
    say(f"{label}: restoring the checkpoint into {system.cpus} {params.roi_cpu} CPUs with "
        f"{params.caches.kind} caches")
    outcome = run(cmd, run_dir, boot_console=checkpoint.console, cpus=system.cpus,
                  workloads=workloads, timeout_s=timeout_s, label=label)
    if outcome.failure:
        return outcome, {"checkpoint": checkpoint.key}
    try:
        tables, account = collect(run_dir, run_id, params, kernel_dir, checkpoint)
        return dataclasses.replace(outcome, tables=tables), account
    except HotlineError as e:
        return dataclasses.replace(outcome, failure=f"reading gem5's outputs: {e}"), {}
