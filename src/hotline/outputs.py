"""The one way hotline writes a file it hands to a user or to a later step:
written beside its final name (NAME.partial), flushed, fsynced, then renamed
over NAME.  A reader therefore sees the old file, or the whole new one, never
a part; a write that fails (a full disk, a read-only mount, a directory
where the file goes) leaves nothing under NAME and ends in one HotlineError
that names the path and what to do.

    with outputs.replacing(path) as partial:
        table.to_parquet(partial)            # any writer that takes a path

    outputs.write_text(path, text)           # the common cases
    outputs.make_dir(directory)

The same failures while making a directory, or while staging a whole
directory of results (experiment/, the build caches), go through
cannot_write(), so that every write failure reads the same."""

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from hotline.errors import HotlineError

SUFFIX = ".partial"

# What to do about each failure, by errno; the strerror says what it was.
_FIXES = {
    errno.ENOSPC: "free some space there (or write elsewhere) and run the command again",
    errno.EDQUOT: "free some of your quota there (or write elsewhere) and run the command "
                  "again",
    errno.EROFS: "it is on a read-only file system: write elsewhere (for results, set "
                 "HOTLINE_RESULTS) or remount it read-write",
    errno.EACCES: "you may not write there: write elsewhere or change its permissions",
    errno.EPERM: "you may not write there: write elsewhere or change its permissions",
    errno.ENOTDIR: "a part of the path is a file, not a folder: move that file or write "
                   "elsewhere",
    errno.EISDIR: "a folder stands where the file goes: remove or rename it, or write "
                  "elsewhere",
    errno.ENOENT: "its folder does not exist: create it or write elsewhere",
    errno.EEXIST: "a file stands where a folder goes: remove or rename it, or write "
                  "elsewhere",
}


def cannot_write(path: Path, e: OSError) -> HotlineError:
    """A failed write as the one line the user reads."""
    fix = _FIXES.get(e.errno, "check the path and run the command again")
    # The C library's words where there is an errno: pyarrow's own are longer.
    why = os.strerror(e.errno) if e.errno and not isinstance(e, _Said) else e.strerror or e
    return HotlineError(f"{path}: cannot be written ({why}); {fix}")


class _Said(OSError):
    """A failure hotline words itself (a file where a folder goes)."""


def staging_path(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


@contextmanager
def replacing(path: Path, *, sync: bool = True) -> Iterator[Path]:
    """A path beside `path` to write in full; renamed over `path` when the
    block ends without an exception, removed when it raises.  sync=False
    skips the fsync, for files that are cheap to make again (pictures)."""
    path = Path(path)
    if path.is_dir():
        raise cannot_write(path, OSError(errno.EISDIR, os.strerror(errno.EISDIR)))
    if path.exists() and not path.is_file():
        # A device or a pipe (/dev/stdout, /dev/full): written in place, as
        # there is no file to replace (and renaming over it would replace
        # the device itself).
        try:
            yield path
        except OSError as e:
            raise cannot_write(path, e) from None
        return
    partial = staging_path(path)
    try:
        yield partial
        if sync:
            _fsync(partial)
        os.replace(partial, path)
    except BaseException as e:
        try:
            partial.unlink(missing_ok=True)
        except OSError:
            pass  # not there, or its folder went; nothing under the final name either way
        if isinstance(e, OSError):
            raise cannot_write(path, e) from None
        raise


def write_bytes(path: Path, data: bytes, *, sync: bool = True) -> Path:
    with replacing(path, sync=sync) as partial:
        partial.write_bytes(data)
    return path


def write_text(path: Path, text: str, *, sync: bool = True) -> Path:
    return write_bytes(path, text.encode("utf-8"), sync=sync)


def make_dir(path: Path) -> Path:
    """`path` and its parents, as folders; one line if one cannot be made."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise cannot_write(path, _Said(errno.EEXIST, "a file, not a folder")) from None
    except OSError as e:
        raise cannot_write(path, e) from None
    return path


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
