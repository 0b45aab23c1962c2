"""Builds kept in the cache (kernels, guest images, plugins, gem5
checkpoints): each is made in NAME.partial beside its final directory and
renamed to NAME only when it is whole, so that a directory with the final
name is always a complete build.  A build that fails leaves NAME.partial
(with its log, for the error to point at), which no reader takes for a
build and the next build of it empties first; or, where what it holds is
only bulk (a checkpoint's memory image), removes it."""

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hotline.outputs import staging_path


@contextmanager
def staged(final: Path, keep_failed: bool = True) -> Iterator[Path]:
    """An empty directory to build `final` in, renamed to `final` (replacing
    what was there) when the block ends; if the block raises, left as it is
    (keep_failed) or removed."""
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
