"""QEMU TCG plugins (plugins/NAME.c, one file per tool, or plugins/NAME/ with
NAME.c its entry and a file per part) and the cache model those that include
cachemodel.h share (plugins/cachemodel/), built into the cache by a hash of
their sources and the compiler.  Every hotline plugin
takes out=FILE and writes its results there; the runner puts FILE in the run
directory as NAME.out."""

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hotline import paths
from hotline.cached import exclusive, staged
from hotline.console import say
from hotline.errors import HotlineError
from hotline.hashing import hash_file, hash_files, hash_json, short
from hotline.inputs import read_text
from hotline.tools import compiler_version

PLUGINS = paths.REPO / "plugins"
MODEL = PLUGINS / "cachemodel"
CFLAGS = ["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror"]
# A plugin exports only what QEMU looks up (qemu_plugin_install/_version),
# and is optimised across its files: hotline-cache's accounting of an
# access then takes the cache model's call in (-10% host instructions a
# model access, bench/README.md).
PLUGIN_CFLAGS = [*CFLAGS, "-fvisibility=hidden", "-flto"]


@dataclass(frozen=True)
class Plugin:
    """A built TCG plugin: the QEMU backend's tool (simulate/backend.py)."""
    name: str
    key: str
    path: Path
    kind = "plugin"

    def qemu_argument(self, out: Path, options: list[str] = ()) -> str:
        return ",".join([str(self.path), f"out={out}", *options])

    def manifest(self) -> dict:
        return {"name": self.name, "key": self.key, "sha256": hash_file(self.path)}


def available_plugins() -> list[str]:
    return sorted([p.stem for p in PLUGINS.glob("*.c")] +
                  [p.parent.name for p in PLUGINS.glob("*/*.c") if p.stem == p.parent.name])


def plugin_sources(name: str) -> list[Path]:
    """The C files a plugin is built from: its own, and the cache model's
    if it includes cachemodel.h."""
    if name not in available_plugins():
        raise HotlineError(f"unknown plugin '{name}'; available: {', '.join(available_plugins())}")
    single = PLUGINS / f"{name}.c"
    files = [single] if single.is_file() else sorted((PLUGINS / name).glob("*.[ch]"))
    own = [f for f in files if f.suffix == ".c"]
    if any(re.search(r'^#include "cachemodel\.h"', read_text(f), re.MULTILINE) for f in files):
        return [*own, MODEL / "cachemodel.c"]
    return own


def planned_plugin(name: str) -> Plugin:
    """Where the plugin with these sources is (or will be) cached, without
    building it."""
    key, path = _shared_object(name, plugin_sources(name), PLUGIN_CFLAGS)
    return Plugin(name, key, path)


def build_plugin(name: str) -> Plugin:
    key, path = _build_shared_object(name, plugin_sources(name), PLUGIN_CFLAGS)
    return Plugin(name, key, path)


def plugin_options(name: str, system, kernel_dir: Path, mode: str,
                   quantum: int | None = None, phase: int = 0,
                   interleave: str = "turn") -> list[str]:
    """What a plugin needs to know besides out=: hotline-cache takes the
    system's caches (cache_options), the kernel's struct page array, and in
    deterministic mode finds the executing CPU from the guest's per-CPU
    base and the kernel's cpu_number variable, and bounds the vCPU turns to
    quantum instructions if one is given, their deadlines phase virtual
    nanoseconds early, the model seeing each window's accesses as the
    interleave says (weave.c)."""
    if name != "hotline-cache":
        return []
    options = cache_options(system)
    # Misses on struct page are kept by field (results/objects.py).
    layout = json.loads(read_text(kernel_dir / "layout.json"))
    options += [f"vmemmap={layout['symbols']['vmemmap_base']}", f"page_size={layout['sizeof']}"]
    if mode == "deterministic":
        options += ["cpu=guest", f"cpu_number={_symbol(kernel_dir / 'System.map', 'cpu_number'):#x}"]
        if quantum:
            options.append(f"quantum={quantum}")
            if phase:
                options.append(f"phase={phase}")
            if interleave != "turn":
                options.append(f"interleave={interleave}")
    else:
        options.append("cpu=index")
    return options


def cache_options(system) -> list[str]:
    """hotline-cache's options for the system's caches; the L3's inclusion
    policy goes by its name, which the plugin looks up in the cache model's
    own list (cm_inclusion_name)."""
    c = system.caches
    level = lambda x: f"{x.size_kib * 1024}:{x.assoc}:{x.latency_cycles}"
    options = [f"cpus={system.cpus}", f"line={c.line_bytes}", f"l1i={level(c.l1i)}",
               f"l1d={level(c.l1d)}", f"l2={level(c.l2)}", f"inclusion={c.inclusion}",
               f"memory={system.latency.memory_cycles}",
               f"peer={system.latency.cache_to_cache_cycles}",
               f"sb={system.store_buffer.entries}:{system.store_buffer.window_instructions}"]
    if c.l3:
        options.append(f"l3={level(c.l3)}")
    return options


def _symbol(system_map: Path, name: str) -> int:
    for line in read_text(system_map).splitlines():
        address, _, symbol = line.split(maxsplit=2)
        if symbol == name:
            return int(address, 16)
    raise HotlineError(f"{system_map} has no symbol {name}")


def build_cache_model() -> Path:
    """The cache model alone (plugins/cachemodel/), as a shared library for
    driving it from Python (tests, reference comparisons)."""
    _, path = _build_shared_object("libcachemodel", [MODEL / "cachemodel.c"], CFLAGS)
    return path


def _shared_object(name: str, sources: list[Path], cflags: list[str]) -> tuple[str, Path]:
    """The key and cached path of NAME.so: keyed by every source and header
    hotline's C code has, the flags and the compiler."""
    inputs = {"sources": hash_files(list(PLUGINS.rglob("*.[ch]")), PLUGINS),
              "build": [str(s.relative_to(PLUGINS)) for s in sources],
              "cflags": cflags, "compiler": compiler_version()}
    key = hash_json(inputs)
    return key, paths.cache_dir() / "plugins" / f"{name}-{short(key)}" / f"{name}.so"


def _build_shared_object(name: str, sources: list[Path], cflags: list[str]) -> tuple[str, Path]:
    """Compile sources into NAME.so in the cache, unless it is there."""
    key, path = _shared_object(name, sources, cflags)
    if path.is_file():
        return key, path
    with exclusive(path.parent):
        if path.is_file():
            return key, path        # built meanwhile by another process
        with staged(path.parent) as staging:
            includes = [f"-I{d}" for d in dict.fromkeys(s.parent for s in sources)]
            result = subprocess.run(["gcc", *cflags, *includes, "-I", str(PLUGINS), "-o",
                                     str(staging / path.name), *map(str, sources)],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise HotlineError(f"{name} does not compile:\n{result.stderr.strip()}")
    say(f"{name}: built {short(key)}")
    return key, path
