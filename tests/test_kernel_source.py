"""Naming a kernel source without unpacking it: the identity that keys every
kernel build is the same whether read from the tarball or from its tree."""

import subprocess

import pytest

from hotline.errors import HotlineError
from hotline.kernel import source


def tarball(tmp_path, name: str, top: str = "linux-6.1.7"):
    tree = tmp_path / "make" / top
    (tree / "mm").mkdir(parents=True)
    (tree / "Makefile").write_text("# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\n"
                                   "PATCHLEVEL = 1\nSUBLEVEL = 7\nEXTRAVERSION = -rc1\n")
    (tree / "mm" / "memory.c").write_text("")
    path = tmp_path / name
    subprocess.run(["tar", "-cJf", str(path), "-C", str(tree.parent), "."], check=True)
    return path


def test_a_tarball_is_named_before_it_is_unpacked(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("HOTLINE_CACHE", str(cache))
    src = source.resolve(str(tarball(tmp_path, "linux.tar.xz")))
    assert src.identity["kind"] == "tarball" and src.version == "6.1.7-rc1"
    assert not cache.exists()
    # The build asks for the tree: unpacked now, and it says what the
    # tarball said (so kernels keyed before this change keep their keys).
    tree = src.tree
    assert (tree / "mm" / "memory.c").is_file()
    assert source.makefile_version(tree) == src.version
    assert src.tree == tree


def test_a_tarball_without_a_kernel_is_refused_before_unpacking(tmp_path, monkeypatch):
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "other.tar.xz"
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "README").write_text("")
    subprocess.run(["tar", "-cJf", str(path), "-C", str(tmp_path), "x"], check=True)
    with pytest.raises(HotlineError, match="one top-level directory with a kernel Makefile"):
        source.resolve(str(path))
    assert not (tmp_path / "cache").exists()
