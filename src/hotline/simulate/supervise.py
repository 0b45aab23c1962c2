"""Running a simulator (QEMU or gem5) in a run directory to the guest's end,
watching the guest's console: killed on a kernel panic or past the timeout,
progress shown while it runs.  What the ending means is the backend's.

A simulator never outlives the process that supervises it: a sweep step
or ./hotline demo killed (even by SIGKILL, which runs no clean-up) takes it
along, so that no simulation goes on unaccounted, outside the sweep's
--jobs and memory, writing into a run directory nobody will record.
"""

import ctypes
import os
import shlex
import signal
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
              label: str, poll_s: float, console_before: str = "") -> Ended:
    """Run cmd in run_dir, its output to log, until it exits; read the
    guest's console every poll_s seconds.  console_before: what the guest
    printed before this run (a restored checkpoint's console), so that the
    progress line says where the guest is, not "booting"."""
    start = time.monotonic()
    ticker = Ticker(label)
    killed_for = None
    with open(log, "w") as out:
        # Its own process group, so that killing it kills whatever it started
        # (a terminal's Ctrl-C reaches this process, which then kills it).
        proc = subprocess.Popen(cmd, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, process_group=0,
                                preexec_fn=_dies_with(os.getpid()))
        try:
            while proc.poll() is None:
                time.sleep(poll_s)
                text = console_before + (console.read_text(errors="replace")
                                         if console.exists() else "")
                report = guest_log.parse(text)
                if report.panicked:
                    time.sleep(2)  # let the panic message reach the log
                    killed_for = "the guest kernel panicked or oopsed"
                elif time.monotonic() - start > timeout_s:
                    killed_for = f"timed out after {timeout_s} s"
                if killed_for:
                    _kill(proc)
                    break
                ticker.tick(_stage(report))
        finally:
            if proc.poll() is None:
                _kill(proc)
            proc.wait()
    return Ended(proc.returncode, killed_for, time.monotonic() - start)


def exit_failure(simulator: str, returncode: int, said: str | None) -> str:
    """Why a simulator that hotline did not stop ended with a non-zero
    status: its exit status or the signal that killed it, and its last words."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return (f"{simulator} was killed by {name}, not by hotline (by another process, a "
                "batch system's limit or the kernel's out-of-memory killer: see dmesg)"
                + (f"; its last output: {said}" if said else ""))
    return f"{simulator} exited with status {returncode}: {said or '(no output)'}"


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


PR_SET_PDEATHSIG = 1


def _dies_with(parent: int):
    """For preexec_fn: the kernel kills the child when its parent dies.
    (Strictly, when the thread that started it ends: supervise() waits for
    the child in that thread.)"""
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def arrange() -> None:
        if prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
        # The parent may have died before the prctl.
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return arrange


def _stage(report: guest_log.GuestReport) -> str:
    if report.cpus_online is None:
        return "guest booting"
    if not report.done:
        return f"workloads running on {report.cpus_online} CPUs, {len(report.statuses)} finished"
    return "guest shutting down"
