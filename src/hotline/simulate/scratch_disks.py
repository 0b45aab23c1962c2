"""Workloads' scratch disks (workloads.py's scratch_disks): blank ext4 file
systems as sparse raw images, made by the runner for either backend.  QEMU
attaches them as virtio disks (/dev/vda, /dev/vdb, ...), gem5 as IDE disks
after the root disk (/dev/sdb, /dev/sdc, ...); the workload finds them in
that order."""

import subprocess
from pathlib import Path

from hotline.errors import HotlineError


def names(count: int) -> tuple[Path, ...]:
    """The images' file names, relative to the directory that holds them."""
    return tuple(Path(f"scratch-{i}.img") for i in range(count))


def make(directory: Path, count: int, size_mib: int) -> tuple[Path, ...]:
    """Blank ext4 disks (sparse files) in directory, named relative to it."""
    made = names(count)
    for name in made:
        result = subprocess.run(
            ["mke2fs", "-q", "-t", "ext4", "-F", "-E", "lazy_itable_init=1,lazy_journal_init=1",
             str(directory / name), f"{size_mib}M"], capture_output=True, text=True)
        if result.returncode != 0:
            raise HotlineError(f"mke2fs of scratch disk {name} failed: {result.stderr.strip()}")
    return made
