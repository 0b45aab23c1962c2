"""The gem5 backend: hotline's experiment on gem5's X86Board, with the same
kernel, disk image and system spec as the QEMU backend, producing the same
results tables.

gem5 is not packaged anywhere hotline can install from: the user builds it
and points GEM5 at the binary (gem5.opt for X86, v24.0).  Each run:

1. writes the run's parameters (hotline.simulate.gem5.params) to gem5-params.json,
2. runs `$GEM5 --outdir=gem5 configs/gem5/hotline_x86.py --params ...` in the
   run directory (command.sh records it), watching the guest console
   (gem5/board.pc.com_1.device, copied to guest.log) like the QEMU runner,
3. reads what gem5 left: stats.txt into gem5_stats.parquet (long) and
   gem5_core_stats.parquet (per core and region), the packet traces into
   gem5_misses_raw.parquet (and misses.parquet where the project's
   attribution step is available), the LSQUnit trace into
   gem5_partial_overlaps.parquet, and gem5_trace_summary.json.
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
from hotline.simulate.gem5 import (lsq_trace, params as gem5_params, physical_map, stats,
                                   trace_misses)
from hotline.simulate import guest_log
from hotline.simulate.backend import Outcome
from hotline.simulate.supervise import exit_failure, supervise, write_command
from hotline.hashing import hash_file, hash_json
from hotline.results.attribute import attribute
from hotline.specs import ExperimentSpec, SystemSpec, load_system
from hotline.workloads import load_workload

ENV = "GEM5"
BUILD_DOCS = "https://www.gem5.org/documentation/general_docs/building"
SCRIPT = paths.CONFIGS / "gem5" / "hotline_x86.py"
OUTDIR = "gem5"
PARAMS_FILE = "gem5-params.json"
CONSOLE = "board.pc.com_1.device"
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
            gem5_params.config_params(load_system(name), vmlinux=Path("vmlinux"),
                                      disk_image=Path("disk.img"), kernel_args="")
        except HotlineError as e:
            raise HotlineError(f"{spec_path}: system '{name}': {e}") from None
    for ref in (ref for g in groups for ref in g.workloads):
        if load_workload(ref.name).scratch_disks:
            raise HotlineError(f"{spec_path}: workload '{ref.name}' needs scratch disks, which "
                               "the gem5 backend does not attach (X86Board has one IDE disk)")


def command(gem5: Path, *, lsq_trace_on: bool) -> list[str]:
    """gem5's command line, run in the run directory (paths relative to it)."""
    cmd = [str(gem5), f"--outdir={OUTDIR}", "--listener-mode=off"]
    if lsq_trace_on:
        cmd.append(f"--debug-file={gem5_params.LSQ_TRACE}")
    return cmd + [str(SCRIPT), "--params", PARAMS_FILE]


def _last_error(log: Path) -> str | None:
    lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
    for line in reversed(lines):
        if "hotline-gem5: error:" in line:
            return line.split("hotline-gem5: error:", 1)[1].strip()
    for line in reversed(lines):
        if line.startswith(("fatal:", "panic:", "Exception", "RuntimeError")):
            return line
    return lines[-1] if lines else None


def run(cmd: list[str], run_dir: Path, *, cpus: int, workloads: list[str], timeout_s: int,
        label: str) -> Outcome:
    """Run gem5 in run_dir to its exit; kill it on a guest panic or timeout."""
    write_command(run_dir, cmd, "gem5")
    console = run_dir / OUTDIR / CONSOLE
    ended = supervise(cmd, run_dir, log=run_dir / LOG, console=console, timeout_s=timeout_s,
                      label=label, poll_s=1)
    if console.exists():
        shutil.copyfile(console, run_dir / SERIAL_LOG)
    report = guest_log.parse((run_dir / SERIAL_LOG).read_text(errors="replace")
                             if (run_dir / SERIAL_LOG).exists() else "")
    failure = ended.killed_for
    if failure is None and ended.returncode != 0:
        failure = exit_failure("gem5", ended.returncode, _last_error(run_dir / LOG))
    failure = failure or guest_log.failure_reason(report, cpus, workloads)
    return Outcome(failure, report, ended.wall_s)


def read_regions(out: Path) -> list[tuple[int, int | None]]:
    path = out / gem5_params.ROI_FILE
    if not path.is_file():
        raise HotlineError(f"{path}: missing; the config script did not start")
    return [(r["begin"], r["end"]) for r in json.loads(path.read_text())["regions"]]


def collect(run_dir: Path, run_id: str, params: dict, kernel_dir: Path) -> dict:
    """Turn gem5's outputs in run_dir/gem5 into hotline's tables in run_dir.
    Returns a short account for the manifest."""
    out = run_dir / OUTDIR
    regions = read_regions(out)
    long = stats.read_stats(out / "stats.txt", run_id, len(regions))
    long.to_parquet(run_dir / "gem5_stats.parquet", index=False)
    stats.core_summary(long).to_parquet(run_dir / "gem5_core_stats.parquet", index=False)
    account = {"regions": len(regions)}
    if params["packet_traces"]:
        outputs = params["outputs"]
        monitors = trace_misses.monitors(out / outputs["trace_dir"], params["cpus"],
                                         outputs["l1d_monitor"], outputs["l2_monitor"])
        clock_hz = float(params["clock"].removesuffix("GHz")) * 1e9
        raw, summary = trace_misses.aggregate(monitors, regions, physical_map.load(kernel_dir),
                                              clock_hz)
        raw.to_parquet(run_dir / "gem5_misses_raw.parquet", index=False)
        (run_dir / "gem5_trace_summary.json").write_text(
            json.dumps(dataclasses.asdict(summary), indent=2) + "\n")
        account["misses"] = summary.misses
        account["attributed"] = _attribute(raw, run_dir, run_id, kernel_dir)
    if params["lsq_trace"]:
        trace = out / gem5_params.LSQ_TRACE
        partial = lsq_trace.read_lsq_trace(trace) if trace.exists() else \
            pd.DataFrame(columns=list(lsq_trace.PARTIAL)).astype(lsq_trace.PARTIAL)
        partial.insert(0, "run", pd.Series([run_id] * len(partial), dtype="string"))
        partial.to_parquet(run_dir / "gem5_partial_overlaps.parquet", index=False)
        account["partial_overlap_replays"] = int(partial["count"].sum())
    return account


def _attribute(raw: pd.DataFrame, run_dir: Path, run_id: str, kernel_dir: Path) -> bool:
    """misses.parquet through the attribution step the QEMU backend uses."""
    log = run_dir / SERIAL_LOG
    misses = attribute(raw, kernel_dir, run_id, log.read_text(errors="replace"))
    # Packets below a cache name a line, not the accessed bytes: no field.
    misses["field"] = ""
    misses.to_parquet(run_dir / "misses.parquet", index=False)
    return True


def simulate(run_dir: Path, *, run_id: str, system: SystemSpec, kernel_dir: Path,
             vmlinux: Path, disk_image: Path, append: str, workloads: list[str],
             timeout_s: int) -> tuple[Outcome, dict]:
    """One gem5 run in run_dir: parameters, gem5, then the tables."""
    gem5 = gem5_binary()
    params = gem5_params.config_params(system, vmlinux=vmlinux, disk_image=disk_image,
                                       kernel_args=append)
    (run_dir / PARAMS_FILE).write_text(json.dumps(params, indent=2) + "\n")
    cmd = command(gem5, lsq_trace_on=params["lsq_trace"])
    say(f"run {run_id}: gem5 booting {system.cpus} CPUs ({system.gem5.boot_cpu}, "
        f"{system.gem5.roi_cpu} in regions of interest, {params['caches']['kind']} caches)")
    outcome = run(cmd, run_dir, cpus=system.cpus, workloads=workloads, timeout_s=timeout_s,
                  label=f"run {run_id}")
    if outcome.failure:
        return outcome, {}
    try:
        return outcome, collect(run_dir, run_id, params, kernel_dir)
    except HotlineError as e:
        return dataclasses.replace(outcome, failure=f"reading gem5's outputs: {e}"), {}
