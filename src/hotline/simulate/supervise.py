"""Running a simulator (QEMU or gem5) in a run directory to the guest's end,
watching the guest's console: killed on a kernel panic or past the timeout,
progress shown while it runs.  What the ending means is the backend's."""

import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hotline.console import Ticker
from hotline.simulate import guest_log


@dataclass
class Ended:
    returncode: int
    killed_for: str | None     # why hotline killed it, or None
    wall_s: float


def write_command(run_dir: Path, cmd: list[str], simulator: str) -> None:
    """command.sh: the run's command, runnable again from its directory
    (outputs are named relative to it, so it survives a rename)."""
    script = run_dir / "command.sh"
    script.write_text(f'#!/bin/sh\n# The {simulator} command of this run; it writes into its '
                      f'own directory.\ncd "$(dirname "$0")" && exec {shlex.join(cmd)}\n')
    script.chmod(0o755)


def supervise(cmd: list[str], run_dir: Path, *, log: Path, console: Path, timeout_s: int,
              label: str, poll_s: float) -> Ended:
    """Run cmd in run_dir, its output to log, until it exits; read the
    guest's console every poll_s seconds."""
    start = time.monotonic()
    ticker = Ticker(label)
    killed_for = None
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
        try:
            while proc.poll() is None:
                time.sleep(poll_s)
                text = console.read_text(errors="replace") if console.exists() else ""
                report = guest_log.parse(text)
                if report.panicked:
                    time.sleep(2)  # let the panic message reach the log
                    killed_for = "the guest kernel panicked or oopsed"
                elif time.monotonic() - start > timeout_s:
                    killed_for = f"timed out after {timeout_s} s"
                if killed_for:
                    proc.kill()
                    break
                ticker.tick(_stage(report))
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    return Ended(proc.returncode, killed_for, time.monotonic() - start)


def _stage(report: guest_log.GuestReport) -> str:
    if report.cpus_online is None:
        return "guest booting"
    if not report.done:
        return f"workloads running on {report.cpus_online} CPUs, {len(report.statuses)} finished"
    return "guest shutting down"
