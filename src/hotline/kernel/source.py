"""Where the Linux source comes from, and what exactly it is.

By default Debian's linux-source-6.1 package (a tarball in /usr/src).  The
environment variable HOTLINE_KERNEL_SOURCE, or --kernel-source, names another
tarball or an unpacked tree instead.  Tarballs are unpacked once into the
cache, named by their hash, and only when a build needs the tree: naming the
source (its hash and the version in its Makefile) reads the tarball without
unpacking it, so that planning a sweep, or its dry run, writes nothing big
(Debian's unpacks to 1.5 GB).
"""

import functools
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from hotline import paths
from hotline.console import phase
from hotline.errors import HotlineError
from hotline.hashing import hash_file, short
from hotline.inputs import read_text

DEBIAN_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")


@dataclass(frozen=True)
class KernelSource:
    path: Path            # the source tree, or the tarball it is unpacked from
    identity: dict        # what the source is, for cache keys and manifests

    @property
    def version(self) -> str:
        return self.identity["kernel_version"]

    @property
    def tree(self) -> Path:
        """The unpacked source, never modified; a tarball is unpacked into the
        cache the first time this is asked for."""
        if self.identity["kind"] == "tarball":
            return _unpack(self.path, self.identity["sha256"])
        return self.path


def makefile_version(tree: Path) -> str:
    return _version(read_text(tree / "Makefile"))


def _version(makefile: str) -> str:
    fields = {}
    for line in makefile.splitlines()[:8]:
        if m := re.match(r"(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)", line):
            fields[m.group(1)] = m.group(2)
    return "{VERSION}.{PATCHLEVEL}.{SUBLEVEL}{EXTRAVERSION}".format(**fields)


def _debian_package_version(path: Path) -> str | None:
    owner = subprocess.run(["dpkg-query", "-S", str(path)], capture_output=True, text=True)
    if owner.returncode != 0:
        return None
    package = owner.stdout.split(":")[0]
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                             capture_output=True, text=True, check=True).stdout
    return f"{package} {version}"


def _unpacked(digest: str) -> Path:
    return paths.cache_dir() / "kernel-source" / short(digest)


def _unpack(tarball: Path, digest: str) -> Path:
    root = _unpacked(digest)
    tree = root / "tree"
    if (root / "complete").exists():
        return tree
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    with phase(f"unpacking {tarball.name}"):
        subprocess.run(["tar", "-xf", str(tarball), "-C", str(root)], check=True)
    tops = [p for p in root.iterdir()]
    if len(tops) != 1 or not (tops[0] / "Makefile").is_file():
        raise HotlineError(f"{tarball}: expected one top-level directory with a kernel Makefile")
    tops[0].rename(tree)
    (root / "complete").touch()
    return tree


def resolve(override: str | None = None) -> KernelSource:
    """The kernel source to build: override, else $HOTLINE_KERNEL_SOURCE, else Debian's."""
    named = override or os.environ.get("HOTLINE_KERNEL_SOURCE")
    path = Path(named) if named else DEBIAN_TARBALL
    if not path.exists():
        hint = ("install linux-source-6.1 (./hotline does it)" if not named
                else "set HOTLINE_KERNEL_SOURCE to a kernel tarball or source tree")
        raise HotlineError(f"kernel source {path} does not exist; {hint}")
    if path.is_dir():
        if not (path / "Makefile").is_file() or not (path / "mm").is_dir():
            raise HotlineError(f"{path} is not a kernel source tree (no Makefile and mm/)")
        tree = path.resolve()
        return KernelSource(tree, {"kind": "tree", "path": str(tree), "git_head": _git_head(tree),
                                   "kernel_version": makefile_version(tree)})
    if not tarfile.is_tarfile(path):
        raise HotlineError(f"{path} is neither a directory nor a tarball")
    digest = hash_file(path)
    return KernelSource(path.resolve(), {
        "kind": "tarball", "path": str(path.resolve()), "sha256": digest,
        "package": _debian_package_version(path),
        "kernel_version": _tarball_version(path.resolve(), digest)})


@functools.cache
def _tarball_version(tarball: Path, digest: str) -> str:
    """The version in the tarball's top-level Makefile, read from the
    unpacked tree if there is one, else from the tarball as a stream
    (Debian's has it 1.5 s in; nothing is written).  Per digest and
    process: a sweep names one source once per variant."""
    root = _unpacked(digest)
    if (root / "complete").exists():
        return makefile_version(root / "tree")
    with tarfile.open(tarball, "r|*") as stream:
        for member in stream:
            # As _unpack wants it: one top-level directory, its Makefile.
            if member.isfile() and len(PurePosixPath(member.name).parts) == 2 \
                    and PurePosixPath(member.name).name == "Makefile":
                return _version(stream.extractfile(member).read().decode(errors="replace"))
    raise HotlineError(f"{tarball}: expected one top-level directory with a kernel Makefile")


def _git_head(tree: Path) -> str | None:
    """A tree is identified by its git commit; a tree that is not a clean git
    checkout cannot be identified cheaply, so say so instead of guessing."""
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode != 0:
        raise HotlineError(f"{tree} is not a git checkout, so hotline cannot name what it "
                           "builds; give it a tarball, or commit the tree with git")
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain"],
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        raise HotlineError(f"{tree} has uncommitted changes; commit them, or put them in "
                           "a variant's patch series")
    return head.stdout.strip()
