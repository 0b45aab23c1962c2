"""Builds kept in the cache (kernels, guest images, plugins, gem5
checkpoints): each is made in NAME.partial beside its final directory and
renamed to NAME only when it is whole, so that a directory with the final
name is always a complete build.  A build that fails leaves NAME.partial
(with its log, for the error to point at), which no reader takes for a
build and the next build of it empties first; or, where what it holds is
only bulk (a checkpoint's memory image), removes it."""

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hotline.outputs import staging_path


@contextmanager
def exclusive(final: Path) -> Iterator[None]:
    """Held while a process checks whether `final` is built and builds it:
    two processes (two runs of a sweep, a test beside a run) that need the
    same build would otherwise empty each other's NAME.partial.  The other
    waits, then finds it built.  An flock on NAME.lock, which the kernel
    releases if the holder dies."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.with_name(final.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextmanager
def staged(final: Path, keep_failed: bool = True) -> Iterator[Path]:
    """An empty directory to build `final` in, renamed to `final` (replacing
    what was there) when the block ends; if the block raises, left as it is
    (keep_failed) or removed.  Inside exclusive(final), where another
    process may build the same."""
    staging = staging_path(final)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        if not keep_failed:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
