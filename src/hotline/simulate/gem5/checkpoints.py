"""Boot once, measure many: gem5 checkpoints at a workload's first region of
interest, cached like kernels by a key of everything the guest's state there
depends on.

Booting is the expensive part of a gem5 run (atomic CPUs, about a MIPS), and
the guest's state at the region does not depend on what measures it: the
checkpoint holds no caches, so every cache geometry, measuring CPU model and
repeat restores the same checkpoint.  What it does depend on is the key: the
kernel, the guest image, the machine (CPUs, clock, memory, command line, and
with it the workload and its parameters), the gem5 binary and the boot's
config scripts.

A checkpoint directory (HOTLINE_CACHE/gem5-checkpoints/KEY/) holds cpt/
(gem5's checkpoint), guest.log (the console up to the checkpoint, which the
run's guest log starts with), boot-stats.txt, the workload's scratch disks
if it writes any
(scratch-N.img: blank, made by the boot, which mounts them; cpt/ holds what
it wrote to them) and checkpoint.json (its inputs and the boot's figures),
written last: a directory without it is not a checkpoint.  The boot runs in
the run directory's boot/ so that a failed boot leaves its logs with the run
that needed it.
"""

import dataclasses
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from hotline import paths
from hotline.cached import exclusive, staged
from hotline.console import elapsed, say
from hotline.inputs import read_text
from hotline.simulate.gem5 import params as gem5_params
from hotline.simulate.gem5 import stats
from hotline.hashing import hash_files, hash_json, short
from hotline.simulate import guest_log, scratch_disks
from hotline.simulate.supervise import supervise, write_command

CHECKPOINTS = "gem5-checkpoints"
CONFIGS = paths.CONFIGS / "gem5"
BOOT_SCRIPT = CONFIGS / "hotline_boot.py"
# The boot's own files: what the checkpoint's key names of hotline's config
# (tests/test_gem5_params.py checks them against the boot script's
# imports).
BOOT_FILES = ("hotline_boot.py", "hotline_gem5/boot_exit_handlers.py", "hotline_gem5/machine.py",
              "hotline_gem5/preflight.py", "hotline_gem5/run_params.py")
MARKER = "checkpoint.json"


@dataclass(frozen=True)
class ScratchImages:
    """The blank disks a workload writes, made by the boot into the
    checkpoint's directory: the checkpoint holds what the boot wrote to them
    (their copy-on-write layers), so every restore attaches these images."""
    count: int
    size_mib: int


@dataclass(frozen=True)
class Checkpoint:
    key: str
    directory: Path

    @property
    def cpt(self) -> Path:
        return self.directory / "cpt"

    @property
    def console(self) -> Path:
        return self.directory / guest_log.FILE

    def exists(self) -> bool:
        return (self.directory / MARKER).is_file()

    def info(self) -> dict:
        return json.loads(read_text(self.directory / MARKER))

    def scratch_disks(self) -> tuple[Path, ...]:
        """Its scratch disks' images (none for most workloads)."""
        count = self.info()["inputs"].get("scratch_disks", {}).get("count", 0)
        return tuple(self.directory / name for name in scratch_disks.names(count))


def checkpoint_inputs(machine, *, kernel_key: str, image_key: str, gem5_identity: str,
                      scratch: ScratchImages | None = None) -> dict:
    """What the guest's state at the region depends on.  The kernel and the
    image are named by their keys, not by their paths in the cache; the
    scratch disks, which the boot makes (blank), by their count and size."""
    described = gem5_params.run_params.to_dict(machine)
    del described["vmlinux"], described["disk_image"], described["scratch_disks"]
    inputs = {"machine": described, "kernel": kernel_key, "guest_image": image_key,
              "gem5": gem5_identity,
              "boot_config": hash_files([CONFIGS / f for f in BOOT_FILES], CONFIGS)}
    if scratch:
        inputs["scratch_disks"] = dataclasses.asdict(scratch)
    return inputs


def planned_checkpoint(inputs: dict) -> Checkpoint:
    key = hash_json(inputs)
    return Checkpoint(key, paths.cache_dir() / CHECKPOINTS / short(key))


def ensure_checkpoint(inputs: dict, machine, *, gem5: Path, work: Path, timeout_s: int,
                      label: str, cpus: int,
                      workloads: list[str]) -> tuple[Checkpoint | None, str | None]:
    """The cached checkpoint for these inputs, booting first if need be (in
    work/boot/).  Returns it, or None and why the boot did not reach the
    region."""
    checkpoint = planned_checkpoint(inputs)
    if checkpoint.exists():
        say(f"{label}: checkpoint {short(checkpoint.key)} restored, no boot "
            f"({checkpoint.directory})")
        return checkpoint, None
    with exclusive(checkpoint.directory):
        # Runs that need the same checkpoint wait for one boot.
        if checkpoint.exists():
            say(f"{label}: checkpoint booted meanwhile by another run, restored")
            return checkpoint, None
        failure = _boot(checkpoint, inputs, machine, gem5=gem5, boot_dir=work / "boot",
                        timeout_s=timeout_s, label=label, cpus=cpus, workloads=workloads)
    return (None, failure) if failure else (checkpoint, None)


def _boot(checkpoint: Checkpoint, inputs: dict, machine, *, gem5: Path, boot_dir: Path,
          timeout_s: int, label: str, cpus: int, workloads: list[str]) -> str | None:
    shutil.rmtree(boot_dir, ignore_errors=True)
    boot_dir.mkdir(parents=True)
    try:
        # A failed boot's staging holds no log (those are in boot_dir), only
        # what may be a memory image of the guest's size.
        with staged(checkpoint.directory, keep_failed=False) as staging:
            _boot_in(staging, checkpoint, inputs, machine, gem5=gem5, boot_dir=boot_dir,
                     timeout_s=timeout_s, label=label, cpus=cpus, workloads=workloads)
    except _NoCheckpoint as e:
        return str(e)
    return None


class _NoCheckpoint(Exception):
    """Why a boot made no checkpoint."""


def _boot_in(staging: Path, checkpoint: Checkpoint, inputs: dict, machine, *, gem5: Path,
             boot_dir: Path, timeout_s: int, label: str, cpus: int,
             workloads: list[str]) -> None:
    scratch = inputs.get("scratch_disks")
    if scratch:
        made = scratch_disks.make(staging, scratch["count"], scratch["size_mib"])
        machine = dataclasses.replace(machine, scratch_disks=[str(staging / d) for d in made])
    params = gem5_params.boot_params(machine, staging / "cpt")
    (boot_dir / "boot-params.json").write_text(
        json.dumps(gem5_params.run_params.to_dict(params), indent=2) + "\n")
    cmd = [str(gem5), "--outdir=gem5", "--listener-mode=off", str(BOOT_SCRIPT),
           "--params", "boot-params.json"]
    write_command(boot_dir, cmd, "gem5 boot")
    say(f"{label}: booting on gem5's atomic CPUs to the first region of interest "
        f"(checkpoint {short(checkpoint.key)})")
    console = boot_dir / "gem5" / gem5_params.CONSOLE
    ended = supervise(cmd, boot_dir, log=boot_dir / "gem5.log", console=console,
                      timeout_s=timeout_s, label=f"{label}: boot", poll_s=1)
    if console.exists():
        shutil.copyfile(console, boot_dir / guest_log.FILE)
    failure = _boot_failure(ended, boot_dir, cpus, workloads)
    if failure:
        # The run's directory is renamed when the run ends: named from it.
        raise _NoCheckpoint(f"gem5 boot (logs in the run directory's {boot_dir.name}/): "
                            f"{failure}")
    tick = json.loads(read_text(boot_dir / "gem5" / gem5_params.ROI_FILE))["checkpoint_tick"]
    boot_stats = stats.parse_dumps(read_text(boot_dir / "gem5" / "stats.txt"))
    figures = boot_stats[-1] if boot_stats else {}
    shutil.copyfile(boot_dir / guest_log.FILE, staging / guest_log.FILE)
    shutil.copyfile(boot_dir / "gem5" / "stats.txt", staging / "boot-stats.txt")
    info = {"key": checkpoint.key, "inputs": inputs, "tick": tick,
            "boot_wall_seconds": round(ended.wall_s, 1),
            "boot_instructions": figures.get("simInsts"),
            "boot_host_seconds": figures.get("hostSeconds")}
    (staging / MARKER).write_text(json.dumps(info, indent=2) + "\n")
    say(f"{label}: booted to the region in {elapsed(ended.wall_s)}; checkpoint at tick "
        f"{tick} in {checkpoint.directory}")


def _boot_failure(ended, boot_dir: Path, cpus: int, workloads: list[str]) -> str | None:
    roi = boot_dir / "gem5" / gem5_params.ROI_FILE
    if ended.killed_for:
        return ended.killed_for
    if ended.returncode != 0:
        return f"gem5 exited with status {ended.returncode}: {last_error(boot_dir / 'gem5.log')}"
    if not roi.is_file() or json.loads(read_text(roi))["checkpoint_tick"] is None:
        log = boot_dir / guest_log.FILE
        report = guest_log.parse(log.read_text(errors="replace") if log.exists() else "")
        why = guest_log.failure_reason(report, cpus, workloads)
        return "the guest ended before its first region of interest" + \
            (f": {why}" if why else "")
    return None


def last_error(log: Path) -> str:
    """gem5's own reason for stopping: hotline's config's one-line error, a
    fatal/panic line or failed assertion, or its last line."""
    lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
    for line in reversed(lines):
        if "hotline-gem5: error:" in line:
            return line.split("hotline-gem5: error:", 1)[1].strip()
    for line in reversed(lines):
        # gem5's own stops, and a Python exception in the config script
        # (its traceback follows it, under "At:").
        # (gem5's fatal() and panic() may name their source first:
        # "src/cpu/o3/fetch.cc:113: fatal: fetch buffer size ...".)
        if re.match(r"(\S+:\d+: )?(fatal|panic): |Exception|[A-Za-z]+Error: ", line) or \
                "Assertion" in line:
            return line.strip()
    return lines[-1] if lines else "(no output)"
