"""The guest's userland, in two containers made from one staging tree:

- disk.img: a raw ext4 file system (no partition table) made without root
  privileges or mounting, by mke2fs -d; the root disk on the PIIX IDE
  controller (and gem5's X86Board).
- initramfs.cpio: the same files as an uncompressed newc cpio archive, for
  boots that must not touch a disk (see simulate/qemu/simulator.py: deterministic mode).

Both hold busybox-static with a link per applet, the guest init, the
hotline-roi marker helper (static C) and every workload under /workloads.
They are reproducible: fixed UUID, hash seed and timestamps, so the same
inputs give the same bytes, and they are cached by a hash of those inputs.
"""

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hotline import paths
from hotline.cached import exclusive, staged
from hotline.console import phase, say
from hotline.errors import HotlineError
from hotline.hashing import hash_file, hash_files, hash_json, short
from hotline.inputs import read_text
from hotline.tools import compiler_version, tool_version

RECIPE = 2
BUSYBOX = Path("/bin/busybox")
SIZE_MIB = 128
EPOCH = 1704067200  # 2024-01-01T00:00:00Z, every timestamp in the image
UUID = "6f8c3a1e-0000-4000-8000-686f746c696e"
SOURCES = ("init", "roi", "workloads")
# Where a guest program's quoted #includes are found besides its own directory.
GUEST_INCLUDES = ["-I", str(paths.DISK_IMAGES / "roi")]


@dataclass(frozen=True)
class DiskImage:
    key: str
    directory: Path

    @property
    def path(self) -> Path:
        return self.directory / "disk.img"

    @property
    def initramfs(self) -> Path:
        return self.directory / "initramfs.cpio"

    def info(self) -> dict:
        return json.loads(read_text(self.directory / "image.json"))


def image_inputs() -> dict:
    if not BUSYBOX.is_file():
        raise HotlineError(f"{BUSYBOX} is missing; install busybox-static (./hotline does it)")
    sources = [p for d in SOURCES for p in (paths.DISK_IMAGES / d).rglob("*") if p.is_file()]
    return {
        "recipe": RECIPE,
        "size_mib": SIZE_MIB,
        "busybox": hash_file(BUSYBOX),
        "busybox_version": tool_version(str(BUSYBOX)),
        "mke2fs": tool_version("mke2fs", "-V"),
        "compiler": compiler_version(),
        "sources": hash_files(sources, paths.DISK_IMAGES),
        "included": hash_files(_included_from_elsewhere(), paths.REPO),
    }


def _guest_programs() -> list[Path]:
    """Every C program the image compiles: the ROI helper, the workloads' own."""
    return [paths.DISK_IMAGES / "roi" / "hotline-roi.c",
            *sorted((paths.DISK_IMAGES / "workloads").glob("*/*.c"))]


def _included_from_elsewhere() -> list[Path]:
    """The files outside disk-images/ that the guest programs #include, as
    the compiler finds them: a workload may build a source that lives
    elsewhere in the repository (groundtruth builds bench/groundtruth.c), and
    the image's key must change when it does."""
    found = set()
    for source in _guest_programs():
        result = subprocess.run(["gcc", "-MM", *GUEST_INCLUDES, str(source)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise HotlineError(f"disk image: gcc -MM {source} failed: {result.stderr.strip()}")
        # "target: source dep dep \\\n dep": every word after the colon.
        words = result.stdout.split(":", 1)[1].replace("\\\n", " ").split()
        for word in words:
            path = Path(word).resolve()
            if path.is_relative_to(paths.DISK_IMAGES.resolve()):
                continue
            if not path.is_relative_to(paths.REPO):
                raise HotlineError(f"disk image: {source} includes {path}, outside the "
                                   f"repository: the image's key could not name it")
            found.add(path)
    return sorted(found)


def planned_image() -> DiskImage:
    """Where the image with these inputs is (or will be) cached, without
    building it; its image.json exists once the build is complete."""
    key = hash_json(image_inputs())
    return DiskImage(key, paths.cache_dir() / "disk-images" / short(key))


def build_seconds_here() -> list[float]:
    """How long each image build in this machine's cache took, newest first
    (image.json's build_seconds; images built before it was recorded have
    none)."""
    markers = sorted((paths.cache_dir() / "disk-images").glob("*/image.json"),
                     key=lambda m: m.stat().st_mtime, reverse=True)
    seconds = []
    for marker in markers:
        try:
            seconds.append(float(json.loads(read_text(marker))["build_seconds"]))
        except (HotlineError, ValueError, KeyError, TypeError):
            continue
    return seconds


def build_image() -> DiskImage:
    inputs = image_inputs()
    key = hash_json(inputs)
    final = paths.cache_dir() / "disk-images" / short(key)
    image = DiskImage(key, final)
    if (final / "image.json").is_file():
        say(f"disk image: cached build {short(key)} reused ({image.path})")
        return image
    with exclusive(final):
        if (final / "image.json").is_file():
            say(f"disk image: built meanwhile by another process, reused ({image.path})")
            return image
        _build(final, key, inputs)
    return image


def _build(final: Path, key: str, inputs: dict) -> None:
    start = time.monotonic()
    with staged(final) as staging, phase(f"disk image: building {short(key)}"):
        root = staging / "root"
        _populate(root)
        entries = _entries(root)
        _make_cpio(root, entries, staging / "initramfs.cpio")
        _make_ext4(root, entries, staging / "disk.img")
        shutil.rmtree(root)
        info = {"key": key, "inputs": inputs, "sha256": hash_file(staging / "disk.img"),
                "initramfs_sha256": hash_file(staging / "initramfs.cpio"),
                "build_seconds": round(time.monotonic() - start, 1)}
        (staging / "image.json").write_text(json.dumps(info, indent=2) + "\n")


def _populate(root: Path) -> None:
    for d in ("bin", "dev", "proc", "sys", "tmp", "workloads"):
        (root / d).mkdir(parents=True)
    shutil.copy2(BUSYBOX, root / "bin" / "busybox")
    applets = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    for applet in applets:
        if applet != "busybox":
            (root / "bin" / applet).symlink_to("busybox")
    shutil.copy2(paths.DISK_IMAGES / "init" / "init", root / "init")
    # Every C program (the ROI helper, the workloads' own) becomes a static
    # binary in /bin, named after its source file.
    for source in _guest_programs():
        compile_guest_program(source, root / "bin" / source.stem)
    shutil.copytree(paths.DISK_IMAGES / "workloads", root / "workloads", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.c", "*.h"))


def _entries(root: Path) -> list[str]:
    """Every path in the tree, root first, in a fixed order."""
    return ["/"] + sorted("/" + str(p.relative_to(root)) for p in root.rglob("*"))


def _make_cpio(root: Path, entries: list[str], archive: Path) -> None:
    for entry in entries:
        os.utime(root / entry.lstrip("/"), (EPOCH, EPOCH), follow_symlinks=False)
    # Names relative to root: "." for the root itself, "./bin" and so on.
    names = "".join(f".{e.rstrip('/')}\0" for e in entries)
    with open(archive, "wb") as out:
        result = subprocess.run(["cpio", "--null", "--create", "--format=newc", "--reproducible",
                                 "--owner=0:0", "--quiet"], cwd=root, input=names.encode(),
                                stdout=out, stderr=subprocess.PIPE)
    if result.returncode != 0:
        raise HotlineError(f"disk image: cpio failed: {result.stderr.decode().strip()}")


def compile_guest_program(source: Path, output: Path) -> None:
    """A guest program as the image has it: static, so the same source gives
    the same code (and addresses) wherever it is compiled with this gcc."""
    _run(["gcc", "-static", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror",
          *GUEST_INCLUDES, "-o", str(output), str(source)])


def guest_program_symbols(source: Path, directory: Path) -> dict[str, tuple[int, int]]:
    """{name: (address, size)} of a guest program's sized symbols, compiled
    into directory as the image compiles it, so at the guest's addresses."""
    binary = directory / source.stem
    compile_guest_program(source, binary)
    out = subprocess.run(["nm", "-S", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    return {f[3]: (int(f[0], 16), int(f[1], 16)) for f in map(str.split, out.splitlines())
            if len(f) == 4}


def _make_ext4(root: Path, entries: list[str], image: Path) -> None:
    # mke2fs copies each file's ctime from the staging directory, where it
    # cannot be set; debugfs then sets every inode's times to EPOCH.
    env = {"E2FSPROGS_FAKE_TIME": str(EPOCH), "PATH": "/usr/sbin:/sbin:/usr/bin:/bin"}
    _run(["mke2fs", "-q", "-t", "ext4", "-d", str(root), "-U", UUID,
          "-E", f"hash_seed={UUID},root_owner=0:0", "-L", "hotline", "-F",
          str(image), f"{SIZE_MIB}M"], env=env)
    commands = "".join(f'sif "{p}" {field} @{EPOCH}\n'
                       for p in entries for field in ("atime", "mtime", "ctime", "crtime"))
    _run(["debugfs", "-w", "-f", "-", str(image)], input=commands, env=env)


def _run(command: list[str], **kwargs) -> None:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise HotlineError(f"disk image: {command[0]} failed (exit {result.returncode}): "
                           f"{result.stderr.strip()}")
