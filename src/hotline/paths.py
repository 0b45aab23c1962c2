"""Where hotline keeps its inputs, build artifacts and results."""

import os
from pathlib import Path

from hotline.errors import HotlineError

REPO = Path(__file__).resolve().parents[2]
KERNEL_PATCHES = REPO / "kernel-patches"
DISK_IMAGES = REPO / "disk-images"
CONFIGS = REPO / "configs"

# The trees already found usable, by (variable, path): checked once.
_usable: set[tuple[str, Path]] = set()


def cache_dir() -> Path:
    """Build artifacts (kernel source, kernels, disk images, ccache).

    Every artifact lives under a hash of its inputs, so one cache can serve
    several checkouts; HOTLINE_CACHE moves it.
    """
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hotline"
    return _writable("HOTLINE_CACHE", default)


def results_dir() -> Path:
    """Run directories; HOTLINE_RESULTS moves them."""
    return _writable("HOTLINE_RESULTS", REPO / "results")


def _writable(variable: str, default: Path) -> Path:
    """The tree `variable` names (or the default), checked once: a directory
    hotline can write in, or one it can create.  A one-line error naming the
    variable and the path otherwise."""
    value = os.environ.get(variable)
    path = Path(value) if value else default
    if (variable, path) in _usable:
        return path
    where = f"{variable}={value}" if value else f"{path} (the default; {variable} moves it)"
    # The path, or the nearest of its parents that exists, which hotline
    # would create it in.
    existing = path
    while not existing.exists() and existing != existing.parent:
        if existing.is_symlink():
            raise HotlineError(f"{where}: {existing} is a broken symbolic link")
        existing = existing.parent
    if not existing.is_dir():
        what = "is" if existing == path else f"cannot be created: {existing} is"
        raise HotlineError(f"{where}: {what} a file, not a directory; point {variable} at "
                           "a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "is" if existing == path else f"cannot be created: {existing} is"
        raise HotlineError(f"{where}: {what} not writable; point {variable} at a directory "
                           "you can write in")
    _usable.add((variable, path))
    return path
