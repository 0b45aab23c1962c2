"""Kernel design variants: kernel-patches/variants/NAME/ holds a `series` file
naming its patches in order (quilt style: one per line, # comments) and
optionally a `config` fragment merged after the common ones.  A series
names patches by paths relative to its directory, so that variants share
patches kept in kernel-patches/patches/ (../../patches/GROUP/NNNN-*.patch);
a path may not leave kernel-patches/.

A line `include PATH` reads another series file in its place (PATH relative
to the including series, the included series' own paths relative to it), so
that a group's patches are listed once, in the group's own series:

    include ../../patches/counters/series
    ../../patches/pte-chain/0001-....patch

A missing included file, an include cycle or a patch named twice is an error.
Every series file read is an input of the kernel (Variant.input_files).

    python3 -m hotline.kernel.variants NAME     # the patches, one per line
"""

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError, guarded
from hotline.inputs import read_text

VARIANTS = paths.KERNEL_PATCHES / "variants"


@dataclass(frozen=True)
class Variant:
    name: str
    patches: tuple[Path, ...]
    config_fragment: Path | None
    # The series files read: the variant's own, then those it includes.
    series: tuple[Path, ...] = ()

    def input_key(self, path: Path) -> str:
        """How a patch, series or fragment is named in the kernel's cache key:
        its path under kernel-patches/ (patch names repeat across groups)."""
        return str(path.resolve().relative_to(VARIANTS.parent.resolve()))

    def input_files(self) -> list[Path]:
        """Every file that decides the patched, configured source: the series
        files (their order is the patches' order), the patches, the fragment."""
        files = [*self.series, *self.patches]
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
    patches: list[Path] = []
    read: list[Path] = []
    _read_series(series.resolve(), [], patches, read)
    fragment = directory / "config"
    return Variant(name, tuple(patches), fragment if fragment.is_file() else None, tuple(read))


def _read_series(series: Path, including: list[Path], patches: list[Path],
                 read: list[Path]) -> None:
    """Append the patches `series` names, following includes, to `patches`
    and every series file read to `read`; `including` is the chain of series
    whose include led here."""
    root = VARIANTS.parent.resolve()
    read.append(series)
    for line in read_text(series).splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        words = entry.split(None, 1)
        included = len(words) == 2 and words[0] == "include"
        if included:
            entry = words[1]
        path = (series.parent / entry).resolve()
        if not path.is_relative_to(root):
            raise HotlineError(f"{series}: names '{entry}', which is outside {root}")
        if included:
            chain = [*including, series]
            if path in chain:
                cycle = " -> ".join(str(p.relative_to(root)) for p in [*chain, path])
                raise HotlineError(f"{series}: include cycle: {cycle}")
            if not path.is_file():
                raise HotlineError(f"{series}: includes '{entry}', which does not exist")
            _read_series(path, chain, patches, read)
            continue
        if not path.is_file():
            raise HotlineError(f"{series}: names '{entry}', which is not in {series.parent}")
        if path in patches:
            raise HotlineError(f"{series}: names '{entry}', which the series already applies")
        patches.append(path)


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


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return guarded(lambda: print("\n".join(str(p) for p in load_variant(argv[0]).patches)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
