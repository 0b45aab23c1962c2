"""One writer at a time in an experiment's results directory.

Two writers would clobber each other: each replaces the other's run
directories and records.  A writer is one `./hotline run` (the driver, the
Snakemake it starts and every step that starts) or one in-process
experiment.run_experiment (`./hotline demo`).

The lock is an flock on .sweep/lock, which the kernel releases when the last
descriptor of it closes, however its holders end.  A writer claims it
exclusively, so that a second one is refused at once; a sweep's driver then
holds it shared and passes its descriptor to Snakemake, and each step takes
it shared for itself, so that it stays held while any process of the sweep
runs, whichever of them is killed first.  The file lists the holders' pids,
for the message that refuses the next claimant.
"""

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from hotline import outputs
from hotline.errors import HotlineError

LOCK = ".sweep/lock"
STEP = "sweep step"  # the role the sweep's steps sign with

# This process's claims (path -> descriptor): ./hotline demo holds its
# experiment's lock around run_experiment, which claims it too.
_claimed: dict[Path, int] = {}


@contextmanager
def claim(out_dir: Path, role: str, *, shared: bool = False):
    """Hold the results directory out_dir for this process, or raise
    HotlineError naming who holds it.  Yields the lock's descriptor;
    shared: the processes this one starts may join() it."""
    path = _path(out_dir)
    if path in _claimed:
        yield _claimed[path]
        return
    fd = _open(path)
    try:
        _flock(fd, fcntl.LOCK_EX, path)
        os.ftruncate(fd, 0)
        note(fd, role)
        if shared:
            # Not atomic (flock(2)): a claimant may take it in between, and
            # then this one is refused.
            _flock(fd, fcntl.LOCK_SH, path)
        _claimed[path] = fd
        try:
            yield fd
        finally:
            del _claimed[path]
    finally:
        os.close(fd)


def join(out_dir: Path, role: str) -> None:
    """Hold the lock, shared, until this process ends: a step of the sweep
    that claimed it, which may outlive the driver and Snakemake."""
    path = _path(out_dir)
    fd = _open(path)
    _flock(fd, fcntl.LOCK_SH, path)
    note(fd, role)


def note(fd: int, role: str, pid: int | None = None) -> None:
    """Sign the lock file: pid (default: this process's) holds it as role."""
    try:
        os.write(fd, f"{pid or os.getpid()} {role}\n".encode())
    except OSError as e:
        raise outputs.cannot_write(Path(os.readlink(f"/proc/self/fd/{fd}")), e) from None


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise outputs.cannot_write(path, e) from None


def _path(out_dir: Path) -> Path:
    path = Path(out_dir) / LOCK
    outputs.make_dir(path.parent)
    return path.resolve()


def holders(out_dir: Path) -> list[tuple[int, str]]:
    """The pid and role of each process on this machine that signed the
    lock of out_dir and still has it open (none but this one: itself)."""
    return _holders(_path(out_dir))


def _flock(fd: int, operation: int, path: Path) -> None:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        holders = _holders(path)
        named = ", ".join(f"{role} (pid {pid})" for pid, role in holders) or "a process"
        stop = f"stop it (kill {' '.join(str(pid) for pid, _ in holders)})" if holders \
            else "stop it"
        raise HotlineError(f"{path}: the experiment {path.parent.parent.name} is being "
                           f"written by {named}; wait for it to end or {stop}, "
                           "then try again") from None


def _holders(path: Path) -> list[tuple[int, str]]:
    holders = []
    for line in path.read_text(errors="replace").splitlines():
        pid, _, role = line.partition(" ")
        if pid.isdigit() and int(pid) != os.getpid() and _has_open(int(pid), path):
            holders.append((int(pid), role))
    return list(dict.fromkeys(holders))


def _has_open(pid: int, path: Path) -> bool:
    # Also rules out a pid reused since, and a holder that is a zombie.
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    except PermissionError:
        return True
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                return True
        except OSError:
            continue
    return False
