"""Kernel configuration: fragments merged with the kernel's own
scripts/kconfig/merge_config.sh on top of allnoconfig, and a check that every
requested option survived Kconfig's dependency resolution.

A configuration is a dict {option name without CONFIG_: value}; "n" stands for
"# CONFIG_X is not set", and an option absent from a .config is also "n".
"""

import lzma
import re
import subprocess
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError
from hotline.inputs import read_text

CONFIG_DIR = paths.KERNEL_PATCHES / "config"
BASE_FRAGMENT = CONFIG_DIR / "base.config"
DEBIAN_MATCHED = CONFIG_DIR / "debian-matched.options"
DEBIAN_CONFIG = Path("/usr/src/linux-config-6.1/config.amd64_none_amd64.xz")

_SET = re.compile(r"^CONFIG_(\w+)=(.*)$")
_UNSET = re.compile(r"^# CONFIG_(\w+) is not set$")


def parse_config(text: str) -> dict[str, str]:
    options = {}
    for line in text.splitlines():
        if m := _SET.match(line):
            options[m.group(1)] = m.group(2)
        elif m := _UNSET.match(line):
            options[m.group(1)] = "n"
    return options


def read_config(path: Path) -> dict[str, str]:
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt") as f:
        return parse_config(f.read())


def format_fragment(options: dict[str, str]) -> str:
    return "".join(f"# CONFIG_{k} is not set\n" if v == "n" else f"CONFIG_{k}={v}\n"
                   for k, v in options.items())


def debian_matched(options_file: Path | None = None,
                   debian_config: Path | None = None) -> dict[str, str]:
    """Debian's values for the options listed in options_file."""
    options_file = options_file or DEBIAN_MATCHED
    debian_config = debian_config or DEBIAN_CONFIG
    if not debian_config.is_file():
        raise HotlineError(f"Debian's kernel config {debian_config} is missing; "
                           "install the linux-config-6.1 package (./hotline does it)")
    debian = read_config(debian_config)
    wanted = [line.split("#", 1)[0].strip() for line in read_text(options_file).splitlines()]
    values = {}
    for name in filter(None, wanted):
        if name not in debian:
            raise HotlineError(f"{options_file}: option {name} does not appear in "
                               f"{debian_config}; remove it or fix its name")
        values[name] = debian[name]
    return values


def requested_options(fragments: list[dict[str, str]]) -> dict[str, str]:
    """What the fragments ask for together; a later fragment wins, as in merge_config.sh."""
    merged = {}
    for fragment in fragments:
        merged.update(fragment)
    return merged


def dropped_options(requested: dict[str, str], final: dict[str, str]) -> list[str]:
    """Requested options whose value Kconfig did not keep, one description each."""
    problems = []
    for name, want in requested.items():
        have = final.get(name, "n")
        if have != want:
            problems.append(f"CONFIG_{name}: requested {want}, got {have if name in final else 'absent'}")
    return problems


def merge(source: Path, objdir: Path, fragment_files: list[Path], log) -> None:
    """allnoconfig, then the fragments in order, written to objdir/.config."""
    result = subprocess.run(
        ["scripts/kconfig/merge_config.sh", "-n", "-O", str(objdir),
         *map(str, fragment_files)],
        cwd=source, stdout=log, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise HotlineError(f"merge_config.sh failed (exit {result.returncode}); see {log.name}")
