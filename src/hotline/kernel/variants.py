"""Kernel design variants: kernel-patches/variants/NAME/ holds a `series` file
naming its patches in order (quilt style: one per line, # comments) and
optionally a `config` fragment merged after the common ones.  A series
names patches by paths relative to its directory, so that variants share
patches kept in kernel-patches/patches/ (../../patches/GROUP/NNNN-*.patch);
a path may not leave kernel-patches/.
"""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError

VARIANTS = paths.KERNEL_PATCHES / "variants"


@dataclass(frozen=True)
class Variant:
    name: str
    patches: tuple[Path, ...]
    config_fragment: Path | None

    def input_key(self, path: Path) -> str:
        """How a patch or fragment is named in the kernel's cache key: its path
        under kernel-patches/ (patch names repeat across groups)."""
        return str(path.resolve().relative_to(VARIANTS.parent.resolve()))

    def input_files(self) -> list[Path]:
        files = list(self.patches)
        if self.config_fragment:
            files.append(self.config_fragment)
        return files


def available_variants() -> list[str]:
    return sorted(p.parent.name for p in VARIANTS.glob("*/series"))


def load_variant(name: str) -> Variant:
    directory = VARIANTS / name
    series = directory / "series"
    if not series.is_file():
        raise HotlineError(f"unknown kernel variant '{name}'; available: "
                           f"{', '.join(available_variants())}")
    patches = []
    for line in series.read_text().splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        patch = (directory / entry).resolve()
        if not patch.is_relative_to(VARIANTS.parent.resolve()):
            raise HotlineError(f"{series}: names '{entry}', which is outside {VARIANTS.parent}")
        if not patch.is_file():
            raise HotlineError(f"{series}: names '{entry}', which is not in {directory}")
        patches.append(patch)
    fragment = directory / "config"
    return Variant(name, tuple(patches), fragment if fragment.is_file() else None)


def _rejected_file(patch_output: str) -> str:
    """The file whose hunks failed, from GNU patch's output."""
    current = "?"
    for line in patch_output.splitlines():
        m = re.match(r"(?:checking|patching) file '?([^']+)'?$", line)
        if m:
            current = m.group(1)
        elif "FAILED" in line or "can't find file" in line or "No file to patch" in line:
            return current
    return current


def apply_patches(variant: Variant, tree: Path) -> None:
    """Apply the series with patch -p1, each patch checked with --dry-run first
    so that a patch that does not apply leaves no half-applied change."""
    for patch in variant.patches:
        base = ["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch",
                "-d", str(tree), "-i", str(patch)]
        check = subprocess.run(base + ["--dry-run"], capture_output=True, text=True)
        if check.returncode != 0:
            raise HotlineError(
                f"variant {variant.name}: patch {patch.name} does not apply: rejected in "
                f"{_rejected_file(check.stdout + check.stderr)}")
        subprocess.run(base + ["--quiet"], check=True)
