"""The QEMU backend: full-system TCG emulation of a PC with the system spec's
CPUs and memory, the kernel given with -kernel, and the serial console
written to a file.  The guest's userland is its root file system, from one of:

- initramfs (default): loaded into guest memory by QEMU before the guest
  starts.  No disk is attached, so no I/O completes at a host-dependent
  moment; deterministic mode needs this.
- disk: the ext4 image on the PIIX IDE controller (read-only underneath:
  snapshot=on keeps the cached image pristine), the boot path gem5's
  X86Board takes.  QEMU completes disk I/O on host threads, so the guest's
  execution then depends on host timing even in deterministic mode.

Two modes, recorded with every result:
- deterministic: single-threaded round-robin TCG with a virtual instruction
  counter (-icount shift=0,sleep=off,align=off), a virtual-time RTC with a
  fixed base date and a fixed seed for the guest's RDRAND; the same inputs
  give the same guest execution.
- parallel: multi-threaded TCG, one host thread per vCPU, real time; faster
  on a many-core host, interleavings not reproducible.
"""

from pathlib import Path

from hotline.disk_image import DiskImage
from hotline.simulate import guest_log
from hotline.simulate.backend import Outcome
from hotline.simulate.command_line import ROOTS
from hotline.simulate.supervise import exit_failure, supervise, write_command
from hotline.tools import tool_version

QEMU = "qemu-system-x86_64"
BASE_DATE = "2024-01-01T00:00:00"
MODES = ("deterministic", "parallel")


def qemu_version() -> str:
    return tool_version(QEMU, "--version")


def command(*, bzimage: Path, image: DiskImage, root: str, cpus: int, memory_mib: int,
            cpu_model: str, mode: str, append: str, serial_log: Path,
            plugin_args: tuple[str, ...] = (), scratch_disks: tuple[Path, ...] = ()) -> list[str]:
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {MODES}")
    if root not in ROOTS:
        raise ValueError(f"root {root!r} is not one of {ROOTS}")
    cmd = [QEMU, "-machine", "pc", "-cpu", cpu_model, "-smp", str(cpus),
           "-m", f"{memory_mib}M",
           "-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none",
           "-serial", f"file:{serial_log}", "-no-reboot",
           "-kernel", str(bzimage), "-append", append]
    if root == "initramfs":
        cmd += ["-initrd", str(image.initramfs)]
    else:
        cmd += ["-drive", f"file={image.path},format=raw,if=ide,index=0,media=disk,snapshot=on"]
    # Workloads' scratch disks: virtio-blk, /dev/vda, /dev/vdb, ... in order.
    for disk in scratch_disks:
        cmd += ["-drive", f"file={disk},format=raw,if=virtio"]
    if mode == "deterministic":
        cmd += ["-accel", "tcg,thread=single",
                "-icount", "shift=0,sleep=off,align=off",
                "-rtc", f"base={BASE_DATE},clock=vm", "-seed", "1"]
    else:
        cmd += ["-accel", "tcg,thread=multi", "-rtc", f"base={BASE_DATE},clock=host"]
    for argument in plugin_args:
        cmd += ["-plugin", argument]
    return cmd


def run(cmd: list[str], run_dir: Path, *, cpus: int, workloads: list[str], timeout_s: int,
        label: str, clocksource: str | None = None) -> Outcome:
    """Run QEMU in run_dir to the guest's shutdown; kill it on panic or timeout.
    Relative paths in cmd (the serial log, plugin outputs) land in run_dir.
    `clocksource`: the one the kernel command line asks for, checked."""
    serial_log = run_dir / guest_log.FILE
    write_command(run_dir, cmd, "QEMU")
    ended = supervise(cmd, run_dir, log=run_dir / "qemu.log", console=serial_log,
                      timeout_s=timeout_s, label=label, poll_s=0.5)
    report = guest_log.parse(serial_log.read_text(errors="replace") if serial_log.exists() else "")
    failure = ended.killed_for
    if failure is None and ended.returncode != 0:
        said = (run_dir / "qemu.log").read_text(errors="replace").strip().splitlines()
        failure = exit_failure("QEMU", ended.returncode, said[-1] if said else None)
    failure = failure or guest_log.failure_reason(report, cpus, workloads, clocksource)
    return Outcome(failure, report, ended.wall_s)
