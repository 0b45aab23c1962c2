"""The C source a run's kernel was built from, line by line, for annotated
listings: the unpacked kernel source of the build (kernel.json's `source`)
with the build's variant patches applied to the files they touch.

The build's own patched tree is deleted after the build (kernel/build.py);
the patched files are made again here, in a temporary directory, from the
series in this checkout, but only when every patch and fragment still has
the hash the build recorded, so that the text shown is the text compiled.
Where that cannot be had (the patches changed since, the source is gone),
lines have no text and `missing` says why."""

import json
import shutil
import tempfile
from functools import cached_property
from pathlib import Path

from hotline.errors import HotlineError
from hotline.hashing import hash_file
from hotline.inputs import read_text
from hotline.kernel import source as kernel_source
from hotline.kernel.variants import apply_patches, load_variant


def touched_files(patch: Path) -> set[str]:
    """Paths (relative to the tree) a -p1 patch changes or creates."""
    files = set()
    for line in patch.read_text(errors="replace").splitlines():
        if line.startswith("+++ ") and not line.startswith("+++ /dev/null"):
            name = line[4:].split("\t")[0].strip()
            files.add(name.split("/", 1)[1] if "/" in name else name)
    return files


class SourceText:
    def __init__(self, kernel_info: dict):
        self.info = kernel_info
        self.missing: str | None = None      # why some or all text is missing
        self._files: dict[str, list[str] | None] = {}
        self._patched_dir: Path | None = None

    @classmethod
    def of_build(cls, kernel_dir: Path) -> "SourceText":
        return cls(json.loads(read_text(kernel_dir / "kernel.json")))

    @cached_property
    def tree(self) -> Path | None:
        identity = self.info["inputs"]["source"]
        try:
            tree = kernel_source.KernelSource(Path(identity["path"]), identity).tree
        except (HotlineError, OSError) as e:
            self.missing = f"the kernel source is not available ({e})"
            return None
        if not tree.is_dir():
            self.missing = f"the kernel source {tree} is gone"
            return None
        return tree

    @cached_property
    def patched(self) -> dict[str, Path | None]:
        """Files the variant's patches touch -> their patched copy (None
        where it cannot be made)."""
        inputs = self.info["inputs"]
        try:
            variant = load_variant(inputs["variant"])
        except HotlineError as e:
            self.missing = f"patched files not shown: {e}"
            return {}
        recorded = inputs.get("variant_files", {})
        current = {variant.input_key(p): hash_file(p) for p in variant.input_files()}
        if current != recorded:
            changed = sorted(k for k in set(current) | set(recorded)
                             if current.get(k) != recorded.get(k))
            self.missing = (f"the files variant {variant.name}'s patches touch are not shown: "
                            f"{', '.join(changed)} changed since the build")
            return {name: None for p in variant.patches for name in touched_files(p)}
        touched = sorted({name for p in variant.patches for name in touched_files(p)})
        if not touched or self.tree is None:
            return {}
        self._patched_dir = Path(tempfile.mkdtemp(prefix="hotline-source-"))
        for name in touched:
            if (self.tree / name).is_file():
                (self._patched_dir / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.tree / name, self._patched_dir / name)
        try:
            apply_patches(variant, self._patched_dir)
        except HotlineError as e:
            self.missing = f"patched files not shown: {e}"
            return {name: None for name in touched}
        return {name: self._patched_dir / name for name in touched}

    def _read(self, name: str) -> list[str] | None:
        if name not in self._files:
            if name in self.patched:
                path = self.patched[name]
            else:
                path = self.tree / name if self.tree else None
            try:
                self._files[name] = path.read_text(errors="replace").splitlines() \
                    if path is not None else None
            except OSError:
                self._files[name] = None
        return self._files[name]

    def line(self, location: str) -> str | None:
        """The text of `file:line` (as the tables write source lines)."""
        name, _, number = location.rpartition(":")
        if not name or not number.isdigit():
            return None
        lines = self._read(name)
        n = int(number)
        if lines is None or not 1 <= n <= len(lines):
            return None
        return lines[n - 1]

    def close(self) -> None:
        if self._patched_dir is not None:
            shutil.rmtree(self._patched_dir, ignore_errors=True)
            self._patched_dir = None
