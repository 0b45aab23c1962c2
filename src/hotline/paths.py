"""Where hotline keeps its inputs, build artifacts and results."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNEL_PATCHES = REPO / "kernel-patches"
DISK_IMAGES = REPO / "disk-images"
CONFIGS = REPO / "configs"


def cache_dir() -> Path:
    """Build artifacts (kernel source, kernels, disk images, ccache).

    Every artifact lives under a hash of its inputs, so one cache can serve
    several checkouts; HOTLINE_CACHE moves it.
    """
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hotline"
    return Path(os.environ.get("HOTLINE_CACHE", default))


def results_dir() -> Path:
    """Run directories; HOTLINE_RESULTS moves them."""
    return Path(os.environ.get("HOTLINE_RESULTS", REPO / "results"))
