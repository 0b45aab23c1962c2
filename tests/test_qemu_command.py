"""The QEMU command line for each mode (what DESIGN.md's measurements rely on)."""

from pathlib import Path

import pytest

from hotline.disk_image import DiskImage
from hotline.experiment import command_line, planning
from hotline.paths import REPO
from hotline.simulate import get_backend, scratch_disks
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu import simulator as qemu
from tests.conftest import require_tools


def cmd(mode, root="initramfs"):
    return qemu.command(bzimage=Path("/k/bzImage"), image=DiskImage("k", Path("/d")),
                        root=root, cpus=4, memory_mib=512, cpu_model="max,la57=off",
                        mode=mode, append="console=ttyS0", serial_log=Path("/r/guest.log"))


def option(command, name):
    return command[command.index(name) + 1]


def test_deterministic_mode():
    c = cmd("deterministic")
    assert option(c, "-accel") == "tcg,thread=single"
    assert option(c, "-icount") == "shift=0,sleep=off,align=off"
    assert option(c, "-rtc") == "base=2024-01-01T00:00:00,clock=vm"
    assert option(c, "-seed") == "1"


def test_parallel_mode():
    c = cmd("parallel")
    assert option(c, "-accel") == "tcg,thread=multi"
    assert "-icount" not in c


def test_common_settings():
    c = cmd("deterministic")
    assert option(c, "-smp") == "4" and option(c, "-m") == "512M"
    assert option(c, "-machine") == "pc"
    assert option(c, "-monitor") == "none" and option(c, "-display") == "none"
    assert option(c, "-serial") == "file:/r/guest.log"
    assert "-no-reboot" in c
    with pytest.raises(ValueError):
        cmd("fast")
    with pytest.raises(ValueError):
        cmd("deterministic", root="nfs")


def test_roots():
    """An initramfs boot attaches no disk at all; a disk boot has the image
    on the PIIX IDE controller, never written (snapshot=on)."""
    initramfs = cmd("deterministic", "initramfs")
    assert option(initramfs, "-initrd") == "/d/initramfs.cpio" and "-drive" not in initramfs
    disk = cmd("deterministic", "disk")
    assert option(disk, "-drive") == "file=/d/disk.img,format=raw,if=ide,index=0,media=disk,snapshot=on"
    assert "-initrd" not in disk


def test_kernel_command_line():
    workloads = [("forkstorm", {"instances": 4, "iterations": 10}), ("other", {"n": 2})]
    words = kernel_command_line(workloads).split()
    for required in ("nokaslr", "no5lvl", "console=ttyS0", "rdinit=/init",
                     "hotline.workload=forkstorm,other", "hotline.arg.forkstorm.instances=4",
                     "hotline.arg.forkstorm.iterations=10", "hotline.arg.other.n=2",
                     "hotline.markers=nop"):
        assert required in words
    disk = kernel_command_line([("forkstorm", {})], root="disk").split()
    assert {"root=/dev/sda", "ro", "init=/init"} <= set(disk) and "rdinit=/init" not in disk


def test_a_qemu_guest_keeps_time_with_the_tsc():
    # Left to itself the kernel marks TCG's TSC unstable and reads the HPET,
    # whose lock is a line every CPU writes.
    spec = planning.load_spec(REPO / "configs/experiments/sweep-smoke.toml")
    words = command_line(planning.plan(spec)[0], spec).split()
    assert {"clocksource=tsc", "tsc=reliable"} <= set(words)
    gem5 = kernel_command_line([("forkstorm", {})], root="disk", markers="m5",
                               clocksource=get_backend("gem5").clocksource).split()
    assert not any(word.startswith(("clocksource=", "tsc=")) for word in gem5)
    with pytest.raises(ValueError, match="clocksource"):
        kernel_command_line([("forkstorm", {})], clocksource="hpet")


def test_scratch_disks_are_virtio_drives(tmp_path):
    disks = scratch_disks.make(tmp_path, 2, 16)
    assert disks == (Path("scratch-0.img"), Path("scratch-1.img"))
    assert (tmp_path / "scratch-1.img").stat().st_size == 16 << 20
    c = qemu.command(bzimage=Path("/k/bzImage"), image=DiskImage("k", Path("/d")),
                     root="initramfs", cpus=4, memory_mib=512, cpu_model="max",
                     mode="deterministic", append="", serial_log=Path("guest.log"),
                     scratch_disks=disks)
    drives = [c[i + 1] for i, word in enumerate(c) if word == "-drive"]
    assert drives == ["file=scratch-0.img,format=raw,if=virtio",
                      "file=scratch-1.img,format=raw,if=virtio"]


def test_qemu_that_cannot_start_fails_with_its_own_message(tmp_path):
    require_tools("qemu-system-x86_64")
    c = qemu.command(bzimage=tmp_path / "no-such-bzImage", image=DiskImage("k", tmp_path),
                     root="initramfs", cpus=1, memory_mib=128, cpu_model="max",
                     mode="deterministic", append="", serial_log=Path("guest.log"))
    outcome = qemu.run(c, tmp_path, cpus=1, workloads=["forkstorm"], timeout_s=60, label="t")
    assert outcome.failure.startswith("QEMU exited with status 1: ")
    assert "no-such-bzImage" in outcome.failure
