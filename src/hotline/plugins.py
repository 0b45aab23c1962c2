"""QEMU TCG plugins (plugins/NAME.c), built into the cache by a hash of their
sources and the compiler.  Every hotline plugin takes out=FILE and writes its
results there; the runner puts FILE in the run directory as NAME.out."""

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hotline import paths
from hotline.console import say
from hotline.errors import HotlineError
from hotline.hashing import hash_file, hash_files, hash_json, short
from hotline.tools import compiler_version

PLUGINS = paths.REPO / "plugins"
CFLAGS = ["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden"]


@dataclass(frozen=True)
class Plugin:
    name: str
    key: str
    path: Path

    def qemu_argument(self, out: Path) -> str:
        return f"{self.path},out={out}"

    def manifest(self) -> dict:
        return {"name": self.name, "key": self.key, "sha256": hash_file(self.path)}


def available_plugins() -> list[str]:
    return sorted(p.stem for p in PLUGINS.glob("*.c"))


def build_plugin(name: str) -> Plugin:
    source = PLUGINS / f"{name}.c"
    if not source.is_file():
        raise HotlineError(f"unknown plugin '{name}'; available: {', '.join(available_plugins())}")
    inputs = {"sources": hash_files([source, *PLUGINS.glob("*.h")], PLUGINS),
              "cflags": CFLAGS, "compiler": compiler_version()}
    key = hash_json(inputs)
    directory = paths.cache_dir() / "plugins" / f"{name}-{short(key)}"
    plugin = Plugin(name, key, directory / f"{name}.so")
    if plugin.path.is_file():
        return plugin
    staging = directory.with_name(directory.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    result = subprocess.run(["gcc", *CFLAGS, "-o", str(staging / f"{name}.so"), str(source)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise HotlineError(f"plugin {name} does not compile:\n{result.stderr.strip()}")
    staging.rename(directory)
    say(f"plugin {name}: built {short(key)}")
    return plugin
