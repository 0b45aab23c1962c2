"""The disk image is reproducible, cached by its inputs, and holds what the
guest needs."""

import subprocess

import pytest

from hotline import disk_image
from tests.conftest import require_tools


@pytest.fixture(autouse=True)
def tools():
    require_tools("mke2fs", "debugfs", "gcc", "busybox")


def ls(image, path):
    out = subprocess.run(["debugfs", "-R", f"ls -l {path}", str(image)],
                         capture_output=True, text=True, check=True).stdout
    return out


def test_same_inputs_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "a"))
    first = disk_image.build_image()
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "b"))
    second = disk_image.build_image()
    assert first.key == second.key
    assert first.info()["sha256"] == second.info()["sha256"]
    assert first.path.read_bytes() == second.path.read_bytes()
    assert first.info()["initramfs_sha256"] == second.info()["initramfs_sha256"]
    assert first.initramfs.read_bytes() == second.initramfs.read_bytes()


def test_second_build_is_reused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path))
    first = disk_image.build_image()
    second = disk_image.build_image()
    assert second.directory == first.directory
    assert "cached build" in capsys.readouterr().err


def test_contents(tmp_path, monkeypatch):
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path))
    image = disk_image.build_image().path
    root = ls(image, "/")
    for name in ("init", "bin", "workloads", "proc", "sys", "dev", "tmp"):
        assert f" {name}" in root
    bin_listing = ls(image, "/bin")
    for name in ("busybox", "hotline-roi", "sh", "cat", "wc", "reboot", "mount"):
        assert f" {name}" in bin_listing
    assert "run.sh" in ls(image, "/workloads/forkstorm")
    for program in ("dumpcopy", "cachebench", "lmbench-lite"):
        assert f" {program}" in bin_listing


def test_roi_helper_has_the_nop_markers(tmp_path):
    """The plugin recognises `nopl 0x686c00NN(%rax,%rax,1)`: 0F 1F 84 00 NN 00 6C 68."""
    binary = tmp_path / "roi"
    subprocess.run(["gcc", "-static", "-O2", "-o", str(binary),
                    str(disk_image.paths.DISK_IMAGES / "roi" / "hotline-roi.c")], check=True)
    data = binary.read_bytes()
    for op in range(1, 6):
        assert bytes([0x0F, 0x1F, 0x84, 0x00, op, 0x00, 0x6C, 0x68]) in data
    for func in (0x5A, 0x5B, 0x40, 0x41, 0x21):  # m5ops: 0F 04 + 16-bit function
        assert bytes([0x0F, 0x04, func, 0x00]) in data
    usage = subprocess.run([str(binary), "sideways"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage" in usage.stderr
