"""A clean Debian root made by Debian's own debootstrap, and commands run
inside it under chroot, for tests/test_fresh_root.py.

The base root (debootstrap --variant=minbase, its downloaded packages
deleted) is made once and kept as a tarball in the hotline cache, keyed by
suite, architecture and debootstrap version; every use unpacks a pristine
copy of it under the cache's fresh-root/roots/.  While a command runs there,
/proc, /sys and /dev are mounted in the root; afterwards every process whose
root is that directory is killed and everything mounted under it is
unmounted, whatever happened, and the copy is deleted only once findmnt shows
nothing mounted under it.  A copy left behind by a test run that was itself
killed is cleaned up the same way by the next one.
"""

import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from hotline import paths

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"


def home() -> Path:
    return paths.cache_dir() / "fresh-root"


def base_root() -> Path:
    """The base root's tarball, made on first use (a minute or two)."""
    version = subprocess.run(["debootstrap", "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    tarball = home() / f"{SUITE}-minbase-{arch}-debootstrap-{version}.tar.gz"
    if tarball.is_file():
        return tarball
    tarball.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="debootstrap.", dir=tarball.parent))
    try:
        root, log = scratch / "root", scratch / "debootstrap.log"
        with log.open("w") as out:
            done = subprocess.run(["debootstrap", "--variant=minbase", SUITE, str(root), MIRROR],
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        if done.returncode:
            raise RuntimeError(f"debootstrap {SUITE} failed with status {done.returncode}:\n"
                               + tail(log))
        # The packages debootstrap downloaded are a cache, not part of the system.
        for deb in (root / "var/cache/apt/archives").glob("*.deb"):
            deb.unlink()
        partial = tarball.with_name(tarball.name + ".partial")
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-czf", str(partial), "."],
                       check=True)
        partial.rename(tarball)
    finally:
        remove(scratch)
    return tarball


@contextmanager
def fresh_root():
    """A pristine copy of the base root, deleted afterwards.  One at a time
    on a machine: they share the download caches."""
    home().mkdir(parents=True, exist_ok=True)
    with (home() / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        roots = home() / "roots"
        roots.mkdir(exist_ok=True)
        # Left by a test run that was killed.
        for stale in [*roots.iterdir(), *home().glob("debootstrap.*")]:
            remove(stale)
        for partial in home().glob("*.partial"):
            partial.unlink()
        tarball = base_root()
        scratch = Path(tempfile.mkdtemp(prefix="root.", dir=roots))
        try:
            subprocess.run(["tar", "--numeric-owner", "-C", str(scratch), "-xpzf",
                            str(tarball)], check=True)
            yield scratch
        finally:
            remove(scratch)


@contextmanager
def mounted(root: Path, binds: dict[str, Path]):
    """/proc, /sys and /dev in root, and each host directory of binds at its
    path inside root.  On the way out, whatever happened: every process
    running in root is killed and everything under root unmounted."""
    try:
        subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)
        for place in ("sys", "dev"):
            # rslave: nothing unmounted here reaches the host's own /sys or /dev.
            subprocess.run(["mount", "--rbind", f"/{place}", str(root / place)], check=True)
            subprocess.run(["mount", "--make-rslave", str(root / place)], check=True)
        for inside, host in binds.items():
            host.mkdir(parents=True, exist_ok=True)
            (root / inside.lstrip("/")).mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "--bind", str(host), str(root / inside.lstrip("/"))],
                           check=True)
        yield root
    finally:
        release(root)


# What a machine at this site has besides its distribution, and apt and pip
# need to reach the package registries: the resolver, the local CA
# certificates (a proxy that re-signs TLS), the bundle made with them, and
# pip's own configuration (which may name that bundle).
NETWORK_FILES = ["/etc/resolv.conf", "/etc/ssl/certs/ca-certificates.crt", "/etc/pip.conf"]
LOCAL_CERTIFICATES = Path("/usr/local/share/ca-certificates")
PROXY_VARIABLES = ["http_proxy", "https_proxy", "no_proxy"]


def share_network(root: Path) -> dict[str, str]:
    """The host's network configuration copied into root; the proxy
    variables to run commands there with."""
    certificates = [p for p in LOCAL_CERTIFICATES.rglob("*") if p.is_file()] \
        if LOCAL_CERTIFICATES.is_dir() else []
    for source in [*map(Path, NETWORK_FILES), *certificates]:
        if source.is_file():
            copy = root / source.relative_to("/")
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.unlink(missing_ok=True)  # a link in the root would point elsewhere
            copy.write_bytes(source.read_bytes())
    return {k: v for k, v in os.environ.items() if k.lower() in PROXY_VARIABLES}


def run_in(root: Path, command: str, log: Path, timeout: float, env: dict[str, str]) -> int:
    """command (bash) as root in root, with only env and a minimal
    environment, no input, output to log; its exit status.  On timeout its
    processes are killed and the status is 124."""
    environment = {"HOME": "/root", "LANG": "C.UTF-8", "TERM": "dumb",
                   "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", **env}
    with log.open("a") as out:
        process = subprocess.Popen(["chroot", str(root), "/usr/bin/env", "-i",
                                    *(f"{k}={v}" for k, v in environment.items()),
                                    "/bin/bash", "-c", command],
                                   stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            out.write(f"\nfresh root: timed out after {timeout:.0f} s\n")
            return 124


def release(root: Path) -> None:
    """Kill every process running in root, then unmount everything under
    it, innermost first; raises if something stays."""
    kill_processes(root)
    for target in reversed(mounts_under(root)):
        if subprocess.run(["umount", target], capture_output=True).returncode:
            # Busy although nothing runs there any more: detach it now.
            subprocess.run(["umount", "--lazy", target], capture_output=True)
    left = mounts_under(root)
    if left:
        raise RuntimeError(f"still mounted under {root}: {', '.join(left)}")


def remove(directory: Path) -> None:
    """Delete a root (or debootstrap's scratch directory), only once nothing
    runs in it and nothing is mounted under it."""
    release(directory)
    subprocess.run(["rm", "-rf", "--one-file-system", str(directory)], check=True)


def processes_in(root: Path) -> list[int]:
    where = os.path.realpath(root)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            link = os.readlink(entry / "root")
        except OSError:
            continue
        if link == where or link.startswith(where + "/"):
            found.append(int(entry.name))
    return found


def kill_processes(root: Path) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        pids = processes_in(root)
        if not pids:
            return
        print(f"fresh root: {signal.Signals(sig).name} to {len(pids)} process(es) left in "
              f"{root}: {', '.join(command_of(p) for p in pids)}")
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while processes_in(root) and time.monotonic() < deadline:
            time.sleep(0.1)
    if processes_in(root):
        raise RuntimeError(f"processes still running in {root}: {processes_in(root)}")


def command_of(pid: int) -> str:
    try:
        return f"{pid} " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(
            b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return str(pid)


def mounts_under(root: Path) -> list[str]:
    """Mount points at or under root, in the order they were mounted, as
    findmnt lists them."""
    where = os.path.realpath(root)
    listed = subprocess.run(["findmnt", "--list", "--noheadings", "--output", "TARGET"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    return [t for t in listed if t == where or t.startswith(where + "/")]


def copy_checkout(repo: Path, destination: Path) -> str:
    """The checkout's tracked files as they are now (committed or not) into
    destination, by git archive; the commit archived."""
    tree = subprocess.run(["git", "-C", str(repo), "stash", "create"], capture_output=True,
                          text=True, check=True).stdout.strip() or "HEAD"
    destination.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", "--format=tar", tree],
                               stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(destination)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait():
        raise RuntimeError(f"git archive {tree} failed in {repo}")
    return tree


def tail(log: Path, lines: int = 60) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def missing(*tools: str) -> list[str]:
    return [t for t in tools if shutil.which(t) is None]
