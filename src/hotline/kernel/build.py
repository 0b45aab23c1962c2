"""Cached kernel builds.

A kernel is named by a hash of everything that goes into it: the source
identity, the common config fragments, Debian's values for the matched
options, the variant's series files (included ones too), patches and
fragment, the compiler and this recipe.
An existing artifact with that key is reused; otherwise the variant is built
in a fixed work directory (fixed paths let ccache share objects between
variants) and its outputs are moved into place only when complete.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hotline import names, paths
from hotline.cached import staged
from hotline.console import Ticker, elapsed, phase, say
from hotline.errors import HotlineError
from hotline.hashing import hash_file, hash_json, short
from hotline.inputs import read_text
from hotline.kernel import config, layout, source as kernel_source
from hotline.kernel.variants import apply_patches, load_variant
from hotline.tools import compiler_version

# Bump when the build steps change in a way that changes the outputs.
RECIPE = 1
OUTPUTS = ("bzImage", "vmlinux", "System.map", "config")
# Reproducible builds: no host name, user or date in the image.
BUILD_ENV = {"KBUILD_BUILD_TIMESTAMP": "2024-01-01 00:00:00 UTC",
             "KBUILD_BUILD_USER": "hotline", "KBUILD_BUILD_HOST": "hotline"}


@dataclass(frozen=True)
class Kernel:
    variant: str
    key: str
    directory: Path

    @property
    def bzimage(self) -> Path:
        return self.directory / "bzImage"

    @property
    def vmlinux(self) -> Path:
        return self.directory / "vmlinux"

    def info(self) -> dict:
        return json.loads(read_text(self.directory / "kernel.json"))


def kernel_inputs(variant_name: str, src: kernel_source.KernelSource) -> dict:
    """Everything the build depends on, as a JSON-able dict; its hash is the key."""
    variant = load_variant(variant_name)
    return {
        "recipe": RECIPE,
        "source": src.identity,
        "base_fragment": hash_file(config.BASE_FRAGMENT),
        "debian_matched": config.debian_matched(),
        "variant": variant_name,
        "variant_files": {variant.input_key(p): hash_file(p) for p in variant.input_files()},
        "compiler": compiler_version(),
    }


def kernel_directory(variant_name: str, key: str) -> Path:
    """Where the build of this variant with this key is cached."""
    return paths.cache_dir() / "kernels" / f"{variant_name}-{short(key)}"


def kernel_dir(manifest: dict) -> Path:
    """The kernel build a run used, from its manifest (builds are cached by key)."""
    kernel = manifest["inputs"]["kernel"]
    # From a results folder, which may have come from anywhere.
    variant = names.check(kernel["variant"], "the run's manifest: its kernel variant")
    if not isinstance(kernel["key"], str) or not re.fullmatch(r"[0-9a-f]{16,64}", kernel["key"]):
        raise HotlineError(f"the run's manifest: its kernel key {kernel['key']!r} is not a "
                           "hotline key (hexadecimal)")
    directory = kernel_directory(variant, kernel["key"])
    if not (directory / "vmlinux").is_file():
        raise HotlineError(f"the run's kernel build {directory.name} is not in the cache; "
                           f"rebuild it with ./hotline build-kernel {kernel['variant']} "
                           "(same inputs give the same key)")
    return directory


def planned_kernel(variant_name: str, source_override: str | None = None) -> Kernel:
    """Where the kernel with these inputs is (or will be) cached, without
    building it; its kernel.json exists once the build is complete."""
    key = hash_json(kernel_inputs(variant_name, kernel_source.resolve(source_override)))
    return Kernel(variant_name, key, kernel_directory(variant_name, key))


def build_kernel(variant_name: str, source_override: str | None = None,
                 jobs: int | None = None) -> Kernel:
    """The cached kernel, built first if need be with `jobs` parallel
    compilers (default: every core this process may use)."""
    src = kernel_source.resolve(source_override)
    inputs = kernel_inputs(variant_name, src)
    key = hash_json(inputs)
    final = kernel_directory(variant_name, key)
    root = final.parent
    kernel = Kernel(variant_name, key, final)
    if (final / "kernel.json").is_file():
        say(f"kernel {variant_name}: cached build {short(key)} reused ({final})")
        return kernel

    root.mkdir(parents=True, exist_ok=True)
    with open(root / "build.lock", "w") as lock:
        # One build at a time: they share the work directory (and two on two
        # cores would only slow each other down).
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "kernel.json").is_file():
            say(f"kernel {variant_name}: built meanwhile by another process, reused")
            return kernel
        _build(variant_name, src, inputs, key, final, jobs or len(os.sched_getaffinity(0)))
    return kernel


def _build(variant_name, src, inputs, key, final: Path, jobs: int) -> None:
    variant = load_variant(variant_name)
    work = paths.cache_dir() / "kernel-work"
    tree, objdir = work / "src", work / "obj"
    shutil.rmtree(work, ignore_errors=True)
    objdir.mkdir(parents=True)
    start = time.monotonic()
    with staged(final) as staging:
        _build_in(staging, variant, src, inputs, key, tree, objdir, jobs, start)
    shutil.rmtree(work, ignore_errors=True)
    say(f"kernel {variant_name}: built in {elapsed(time.monotonic() - start)} -> {final}")


def _build_in(staging: Path, variant, src, inputs, key, tree: Path, objdir: Path,
              jobs: int, start: float) -> None:
    """The build's outputs, made in `staging`: the kernel, its layout facts
    and kernel.json, which names its inputs."""
    variant_name = variant.name
    log_path = staging / "build.log"
    say(f"kernel {variant_name}: building Linux {src.version} (key {short(key)}), "
        f"log in {log_path}")

    with open(log_path, "w") as log:
        with phase(f"kernel {variant_name}: preparing source"):
            # Hard links: a cheap private copy; patch(1) replaces the files it
            # changes instead of writing through the links.
            subprocess.run(["cp", "-al", str(src.tree), str(tree)], check=True)
            apply_patches(variant, tree)

        with phase(f"kernel {variant_name}: configuring"):
            debian_fragment = objdir.parent / "debian-matched.config"
            debian_fragment.write_text(config.format_fragment(inputs["debian_matched"]))
            fragments = [config.BASE_FRAGMENT, debian_fragment]
            if variant.config_fragment:
                fragments.append(variant.config_fragment)
            config.merge(tree, objdir, fragments, log)
            requested = config.requested_options([config.read_config(f) for f in fragments])
            dropped = config.dropped_options(requested, config.read_config(objdir / ".config"))
            if dropped:
                raise HotlineError(f"kernel {variant_name}: Kconfig dropped {len(dropped)} "
                                   f"requested option(s): {'; '.join(dropped)}")

        _make(tree, objdir, log, log_path, variant_name, jobs)

    for name, built in zip(OUTPUTS, ("arch/x86/boot/bzImage", "vmlinux", "System.map", ".config")):
        shutil.copy2(objdir / built, staging / name)
    with phase(f"kernel {variant_name}: reading struct page layout from vmlinux"):
        facts = layout.read_layout(staging / "vmlinux")
    (staging / "layout.json").write_text(json.dumps(facts, indent=2) + "\n")
    info = {"variant": variant_name, "key": key, "inputs": inputs,
            "kernel_version": src.version, "build_seconds": round(time.monotonic() - start, 1),
            "outputs": {name: hash_file(staging / name) for name in OUTPUTS}}
    (staging / "kernel.json").write_text(json.dumps(info, indent=2) + "\n")


def _make(tree: Path, objdir: Path, log, log_path: Path, variant_name: str, jobs: int) -> None:
    ccache = paths.cache_dir() / "ccache"
    env = dict(os.environ, **BUILD_ENV, CCACHE_DIR=str(ccache), CCACHE_MAXSIZE="5G")
    command = ["make", "-C", str(tree), f"O={objdir}", f"-j{jobs}", "CC=ccache gcc",
               "bzImage", "vmlinux"]
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    total = files_to_compile()
    ticker = Ticker(f"kernel {variant_name}: compiling")
    with phase(f"kernel {variant_name}: compiling with {jobs} jobs"):
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            time.sleep(1)
            ticker.tick(compile_progress(_count_objects(log_path), total,
                                         time.monotonic() - ticker.start))
    if proc.returncode != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        raise HotlineError(f"kernel {variant_name}: make failed (exit {proc.returncode}); "
                           f"last lines of {log_path}:\n{tail}")


def _count_objects(log_path: Path) -> int:
    """The C files make has compiled so far (kbuild's "  CC " lines; the
    same whether ccache had the object or not)."""
    with open(log_path, errors="replace") as f:
        return sum(1 for line in f if line.startswith("  CC "))


def built_here() -> list[Path]:
    """The directories of the complete kernel builds in this machine's
    cache, newest first."""
    markers = sorted((paths.cache_dir() / "kernels").glob("*/kernel.json"),
                     key=lambda m: m.stat().st_mtime, reverse=True)
    return [m.parent for m in markers]


def build_seconds_here() -> list[float]:
    """How long each kernel build in this machine's cache took, newest
    first (kernel.json's build_seconds)."""
    seconds = []
    for directory in built_here():
        try:
            seconds.append(float(json.loads(read_text(directory / "kernel.json"))
                                 ["build_seconds"]))
        except (HotlineError, ValueError, KeyError, TypeError):
            continue
    return seconds


def files_to_compile() -> int | None:
    """About how many C files a build compiles: as many as the newest build
    here did (its build.log).  Variants differ by a few files, their
    patches' and config fragments'; None before the first build here."""
    for directory in built_here():
        if (log := directory / "build.log").is_file():
            return _count_objects(log) or None
    return None


# Files compiled before the rate so far is taken as the rest's: the time
# before the first ones went to the host tools and the generated headers.
RATE_AFTER_FILES = 50


def compile_progress(done: int, total: int | None, seconds: float) -> str:
    """The compile's progress line: files done of files to do, with the time
    left at the rate so far, where the total is known."""
    if not total or done > total:
        return f"{done} files compiled"
    line = f"{done} of about {total} files compiled"
    if done >= min(RATE_AFTER_FILES, total):
        line += f", about {elapsed(seconds / done * (total - done))} left"
    return line
