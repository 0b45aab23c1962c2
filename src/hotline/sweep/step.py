"""The commands the sweep workflow's steps run, in the experiment's results
directory (the workflow's working directory):

  python -m hotline.sweep.step kernel VARIANT --jobs N --expect MARKER
  python -m hotline.sweep.step image --expect MARKER
  python -m hotline.sweep.step tool SPEC --expect MARKER
  python -m hotline.sweep.step run SPEC RECORD [--rerun]
  python -m hotline.sweep.step gather SPEC

A run step makes one attempt at a run (RECORD: the run id, or
RUN-ID.attemptN after a failure; records/layout.py) and records its outcome in
.sweep/runs/RECORD.json whether the simulation succeeded or failed, and
exits 0 either way: a failed run is a result, and with a non-zero exit
Snakemake would hold back the gathering of every other run.  The workflow
then wants the run's next attempt (records/done.py), so the next sweep makes it.
A step that cannot record anything (killed, or a bug) exits non-zero and
Snakemake runs it again next time.  --rerun (or HOTLINE_SWEEP_RERUN=1, which
the workflow sets for ./hotline run --rerun) simulates even an unchanged run.

Every step holds the experiment's lock (records/lock.py) while it runs, so that no
other writer starts on the results directory while it is still writing
there, even after the driver and Snakemake are gone.
"""

import argparse
import os
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path

from hotline.console import say
from hotline.disk_image import build_image
from hotline.errors import HotlineError, guarded
from hotline.experiment import execute, load_spec, plan
from hotline.kernel.build import build_kernel
from hotline.records import done, lock, manifest as run_record
from hotline.records.layout import log_path, parse_record_name
from hotline.simulate import guest_log
from hotline.simulate import get_backend
from hotline.sweep import gather


# ./hotline run --rerun, passed by the workflow to every run step.
RERUN = "HOTLINE_SWEEP_RERUN"


def _expect(what: str, made: Path, marker: str) -> None:
    # The workflow named the build by the key its inputs had when it was
    # planned; a different key means they changed since, and the runs
    # planned with the old one would not find it.
    if made.resolve() != Path(marker).resolve():
        raise HotlineError(f"{what}: built {made}, but the workflow expected {marker}: its "
                           "inputs changed while the sweep ran; run the sweep again")


def step_kernel(args) -> None:
    kernel = build_kernel(args.variant, args.kernel_source, jobs=args.jobs)
    _expect(f"kernel {args.variant}", kernel.directory / "kernel.json", args.expect)


def step_image(args) -> None:
    _expect("disk image", build_image().directory / "image.json", args.expect)


def build_tool(spec):
    """The build of its own the spec's backend loads (QEMU: its plugin)."""
    return get_backend(spec.backend).build_tool(spec)


def step_tool(args) -> None:
    tool = build_tool(load_spec(Path(args.spec).resolve()))
    if tool is None:
        raise HotlineError(f"{args.spec}: its backend builds nothing of its own for its runs")
    _expect(f"{tool.kind} {tool.name}", tool.path, args.expect)


def step_run(args) -> None:
    spec_path = Path(args.spec).resolve()
    spec = load_spec(spec_path)
    run_id, attempt = parse_record_name(args.record)
    runs = {r.run_id: r for r in plan(spec)}
    if run_id not in runs:
        raise HotlineError(f"{spec_path} plans no run '{run_id}'")
    run = runs[run_id]
    rerun = args.rerun or os.environ.get(RERUN) == "1"
    out_dir = Path.cwd()
    record = {"run_id": run.run_id, "status": "failed", "failure": None, "directory": None,
              "guest_log": None, "step_log": log_path(run.run_id, attempt),
              "reused": False, "attempt": attempt,
              # Where the attempt ran: on a cluster, the node and the Slurm
              # job (sacct -j JOB), which the Slurm executor names by the
              # sweep, not by the run.
              "host": socket.gethostname(), "slurm_job": os.environ.get("SLURM_JOB_ID")}
    try:
        # Cached by the build steps: these only look the artifacts up.
        image = build_image()
        kernel = build_kernel(run.variant, args.kernel_source)
        tool = build_tool(spec)
        result = execute(run, spec, spec_path, kernel, image, tool, out_dir, rerun)
    except HotlineError as e:
        say(f"run {run.run_id}: FAILED: {e}")
        record["failure"] = str(e)
    else:
        directory = result.directory.relative_to(out_dir)
        record.update(status="failed" if result.failure else "ok", failure=result.failure,
                      directory=str(directory), reused=result.reused)
        if (out_dir / directory / guest_log.FILE).exists():
            record["guest_log"] = str(directory / guest_log.FILE)
        if run_record.exists(out_dir / directory):
            record["wall_seconds"] = run_record.read(out_dir / directory).wall_seconds
    record["recorded"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    done.write_record(out_dir, run.run_id, attempt, record)


def step_gather(args) -> None:
    spec_path = Path(args.spec).resolve()
    gather.gather(spec_path, Path.cwd())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hotline.sweep.step",
                                     description="one step of hotline's sweep workflow")
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("kernel")
    p.add_argument("variant")
    p.add_argument("--jobs", type=int, required=True)
    p.add_argument("--expect", required=True)
    p.add_argument("--kernel-source")
    p.set_defaults(func=step_kernel)
    p = sub.add_parser("image")
    p.add_argument("--expect", required=True)
    p.set_defaults(func=step_image)
    p = sub.add_parser("tool")
    p.add_argument("spec")
    p.add_argument("--expect", required=True)
    p.set_defaults(func=step_tool)
    p = sub.add_parser("run")
    p.add_argument("spec")
    p.add_argument("record", help="the run id, or RUN-ID.attemptN for a later attempt")
    p.add_argument("--rerun", action="store_true")
    p.add_argument("--kernel-source")
    p.set_defaults(func=step_run)
    p = sub.add_parser("gather")
    p.add_argument("spec")
    p.set_defaults(func=step_gather)
    args = parser.parse_args(argv)

    def body():
        lock.join(Path.cwd(), f"{lock.STEP} {args.step}")
        args.func(args)
    return guarded(body)


if __name__ == "__main__":
    sys.exit(main())
