"""A one-node Slurm cluster on this machine, from Debian's packages, for
tests/test_slurm.py.

Everything lives in a scratch directory: slurm.conf, a munge key and the
socket of a munged of its own, slurmctld's state, slurmd's spool, the logs
and the job completion log.  The daemons run in a network namespace of
their own, which has nothing but a loopback interface, and in a mount
namespace in which the scratch directory's etc/ is mounted over
/etc/slurm: they listen on that namespace's loopback only, cannot clash
with the ports of a Slurm the machine may run, and every Slurm command run
there (slurmd's jobs included) finds this cluster's slurm.conf where Slurm
looks by default.  The default path matters: the Snakemake executor's job
step (snakemake-executor-plugin-slurm-jobstep 0.6.1) drops SLURM_CONF from
the environment of the srun it runs in the job.

Client commands (sbatch, squeue, scancel, and the sweep that calls them) run
in the same namespaces through nsenter (cluster.command()).

No accounting: the profile follows its jobs with squeue (profiles/slurm),
so nothing here needs slurmdbd; jobs stay in squeue for MinJobAge and are
written to the job completion log when they end.

Stopping it (stop(), also when starting failed half-way): every job
cancelled, the daemons sent SIGTERM, then every process left in the
network namespace (slurmstepd, a job's processes, the process that holds
the namespaces) killed; it raises if one survives.  A cluster left by a
test run that was itself killed is stopped the same way by the next one
(the holders' pids are in /run/hotline-slurm-test/).  Needs root.
"""

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

# What the cluster needs from the machine: Debian's slurmctld, slurmd,
# slurm-client and munge (scripts/apt-packages.txt), util-linux and iproute2.
TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "scontrol",
         "unshare", "nsenter", "mount", "ip")
NODE_CPUS = 16
NODE_MEMORY_MB = 16000
SLURM_CONF = """\
# A one-node cluster for hotline's tests (tests/slurm_cluster.py).
ClusterName=hotline-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={scratch}/munge/munged.socket
StateSaveLocation={scratch}/state
SlurmdSpoolDir={scratch}/spool
SlurmctldPidFile={scratch}/state/slurmctld.pid
SlurmdPidFile={scratch}/spool/slurmd.pid
SlurmctldLogFile={scratch}/log/slurmctld.log
SlurmdLogFile={scratch}/log/slurmd.log
# No cgroups in a container: processes are tracked by parentage, tasks
# are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
# The node is what slurm.conf says, not what slurmd finds.
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={scratch}/log/jobcomp.txt
# Finished jobs stay in squeue this long: the executor follows them there
# (it wants at least 3 x its first status-check interval), and the test
# reads them after each sweep.
MinJobAge=1800
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
# The pids of the clusters' namespace holders (a file each, holding its
# start time), for the next test run to clean up after one that was killed.
HOLDERS = Path("/run/hotline-slurm-test")
# The namespaces: loopback up, this cluster's etc/ over /etc/slurm.  A
# second address on lo: Slurm's getaddrinfo(AI_ADDRCONFIG) finds no address
# to listen on where 127.0.0.1 is the only one.
HOLDER = 'ip link set lo up && ip addr add 10.254.254.254/32 dev lo && mount --bind "$1" /etc/slurm && echo ready && exec sleep infinity'


class NotPossible(Exception):
    """The machine cannot run the cluster (not root, no namespaces): skip."""


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


class Cluster:
    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.log = scratch / "log"
        self.holder: subprocess.Popen | None = None
        self.namespace: str | None = None     # the network namespace's ns/net link
        self.daemons: dict[str, subprocess.Popen] = {}

    # ---- running commands in the cluster's namespaces ---------------------

    def command(self, *argv: str, cwd: Path | None = None) -> list[str]:
        """argv run in the cluster's network and mount namespaces, in cwd
        (default: this process's).  Entering a mount namespace starts at the
        namespace's / (outside a chroot, if the test runs in one): --root
        is the holder's, which is this process's."""
        return ["nsenter", f"--target={self.holder.pid}", "--net", "--mount", "--root",
                f"--wd={cwd or os.getcwd()}", "--", *argv]

    def run(self, *argv: str, check: bool = True) -> str:
        done = subprocess.run(self.command(*argv), capture_output=True, text=True, timeout=60)
        if check and done.returncode:
            raise RuntimeError(f"{' '.join(argv)} exited with status {done.returncode}: "
                               f"{done.stderr.strip()}")
        return done.stdout

    def version(self) -> str:
        return self.run("sinfo", "--version").strip()

    # ---- starting and stopping ---------------------------------------------

    def start(self) -> None:
        if os.geteuid() != 0:
            raise NotPossible("needs root: slurmd runs jobs as their users, and the cluster "
                              "gets network and mount namespaces of its own")
        if missing := missing_tools():
            raise NotPossible(f"needs {', '.join(missing)} (./hotline test installs them)")
        if not Path("/etc/slurm").is_dir():
            raise NotPossible("needs /etc/slurm (Debian's slurm-client makes it) to mount "
                              "the cluster's configuration over")
        clean_up_after_killed_runs()
        self._write_configuration()
        self.holder = subprocess.Popen(
            ["unshare", "--net", "--mount", "--propagation", "private",
             "sh", "-c", HOLDER, "sh", str(self.scratch / "etc")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        if self.holder.stdout.readline().strip() != "ready":
            self.holder.wait(timeout=10)
            error = self.holder.stderr.read().strip()
            if "Operation not permitted" in error or "Permission denied" in error:
                raise NotPossible(f"cannot make network and mount namespaces: {error}")
            raise RuntimeError(f"making the cluster's namespaces failed: {error}")
        self.namespace = os.readlink(f"/proc/{self.holder.pid}/ns/net")
        HOLDERS.mkdir(parents=True, exist_ok=True)
        (HOLDERS / str(self.holder.pid)).write_text(start_time(self.holder.pid))
        munge = self.scratch / "munge"
        # --force: the socket's directory is reachable by root only (pytest's
        # temporary directories are private), which munged warns about.
        self._daemon("munged", "munged", "--foreground", "--force",
                     f"--socket={munge}/munged.socket", f"--key-file={munge}/munge.key",
                     f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
                     f"--seed-file={munge}/munged.seed")
        self._wait("munged's socket", lambda: (munge / "munged.socket").exists())
        self._daemon("slurmctld", "slurmctld", "-D")
        self._wait("slurmctld", lambda: "UP" in self.run("scontrol", "ping", check=False))
        self._daemon("slurmd", "slurmd", "-D", "-N", "localhost")
        self._wait("the node", lambda: self.run("sinfo", "--noheader", "--format=%t",
                                                check=False).strip() == "idle")

    def _write_configuration(self) -> None:
        for directory in ("etc", "munge", "state", "spool", "log"):
            (self.scratch / directory).mkdir(parents=True, exist_ok=True)
        (self.scratch / "etc" / "slurm.conf").write_text(SLURM_CONF.format(
            scratch=self.scratch, cpus=NODE_CPUS, memory=NODE_MEMORY_MB))
        key = self.scratch / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        # munged wants its socket's directory open to everyone (to enter).
        (self.scratch / "munge").chmod(0o755)

    def _daemon(self, name: str, *argv: str) -> None:
        """A daemon in the foreground in the namespaces, in a process
        group of its own, its output in log/NAME.out."""
        with open(self.log / f"{name}.out", "w") as out:
            self.daemons[name] = subprocess.Popen(
                self.command(*argv), stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)

    def _wait(self, what: str, ready, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            for name, daemon in self.daemons.items():
                if daemon.poll() is not None:
                    raise RuntimeError(f"{name} exited with status {daemon.returncode} while "
                                       f"waiting for {what}:\n{self.tail(name)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} not ready after {timeout:.0f} s; logs in "
                                   f"{self.log}")
            time.sleep(0.5)

    def tail(self, name: str, lines: int = 20) -> str:
        path = self.log / f"{name}.out"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) \
            if path.exists() else ""

    def stop(self) -> None:
        """Nothing of the cluster left running; raises if something is."""
        if self.holder is None:
            return
        if self.daemons.get("slurmctld") and self.daemons["slurmctld"].poll() is None:
            jobs = self.run("squeue", "--noheader", "--format=%i", check=False).split()
            if jobs:
                self.run("scancel", *jobs, check=False)
                # Let slurmstepd end the jobs' processes itself.
                deadline = time.monotonic() + 30
                while self.run("squeue", "--noheader", "--format=%i", check=False).split() \
                        and time.monotonic() < deadline:
                    time.sleep(1)
        for name in ("slurmd", "slurmctld", "munged"):
            daemon = self.daemons.get(name)
            if daemon and daemon.poll() is None:
                os.killpg(daemon.pid, signal.SIGTERM)
                try:
                    daemon.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(daemon.pid, signal.SIGKILL)
                    daemon.wait()
        # Whatever is left in the namespace: job steps, their processes,
        # and the holder, which is the namespace's last process.
        kill_namespace(self.namespace)
        self.holder.wait(timeout=10)
        if left := processes_in(self.namespace):
            raise RuntimeError(f"processes left in the Slurm cluster's namespace: "
                               f"{', '.join(command_of(pid) for pid in left)}")
        (HOLDERS / str(self.holder.pid)).unlink(missing_ok=True)


def clean_up_after_killed_runs() -> None:
    """The clusters of test runs that were themselves killed, which stop()
    never reached: each holder's pid is in HOLDERS, with its start time
    (a pid is reused); every process in its namespace is killed."""
    for entry in HOLDERS.glob("*") if HOLDERS.is_dir() else []:
        pid = int(entry.name)
        try:
            alive = start_time(pid) == entry.read_text()
            namespace = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            alive = False
        if alive:
            print(f"slurm cluster: killing a cluster left by a killed test run: "
                  f"{', '.join(command_of(p) for p in processes_in(namespace))}")
            kill_namespace(namespace)
        entry.unlink()


def start_time(pid: int) -> str:
    """When a process started (/proc/PID/stat's 22nd field), to tell it
    from a later one with its pid."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def kill_namespace(namespace: str | None) -> None:
    """SIGTERM, then SIGKILL, to every process in a network namespace."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = processes_in(namespace)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if pids:
            time.sleep(1)


def command_of(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return str(pid)
    return f"{pid} ({b' '.join(argv).decode(errors='replace').strip()})"


def processes_in(namespace: str | None) -> list[int]:
    """The pids of the processes in a network namespace (its ns/net link)."""
    if namespace is None:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "net") == namespace:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found
