"""The workload catalogue: disk-images/workloads/NAME/ holds a run.sh that the
guest init runs and a workload.toml that declares its parameters and scales.

A scale (smoke, default, seed) is a named set of parameter values; a spec may
override single parameters.  The guest receives them on the kernel command
line as hotline.arg.NAME.KEY=VALUE and the workload reads ARG_KEY.

A workload declares what it needs of the machine beyond its parameters:

- scratch_disks = { count = PARAM, size_mib = PARAM }: it writes to disks;
  the runner attaches that many blank ext4 disks, each big enough for a file
  of that many MiB.
- tmpfs_mib = PARAM: it keeps a file of PARAM MiB in /tmp, a tmpfs in guest
  memory; a system too small to hold it is refused before anything runs.
- min_cpus = N: it runs threads on CPUs 0 to N-1; a system with fewer is
  refused before anything runs.
"""

import re
from dataclasses import dataclass

from pydantic import Field, model_validator

from hotline import paths, tomlfile
from hotline.errors import HotlineError
from hotline.tomlfile import Strict

WORKLOADS = paths.DISK_IMAGES / "workloads"
# A workload's name is a directory name and a word on the kernel command line.
NAME = re.compile(r"[a-z0-9][a-z0-9-]*")

# The guest's /tmp is a tmpfs of the kernel's default size: half of the
# memory the kernel manages (MemTotal; totalram_pages() / 2 in mm/shmem.c).
# MemTotal is the guest's memory less what the kernel keeps for itself: its
# struct page array (1/64 of memory), boot-time hash tables sized by memory
# (under 1/512), its image and reservations, and from 3.5 GiB up (where
# QEMU's pc machine puts memory above 4 GiB) a 64 MiB swiotlb buffer.
# Measured with the baseline kernel under QEMU 10.0 (MiB of memory: MiB of
# MemTotal): 128: 112.5, 512: 490.0, 1024: 993.2, 2048: 1999.7, 3500:
# 3424.7, 3584: 3443.9, 4096: 3947.9, 8192: 7973.9, 16384: 16025.9;
# guest_memtotal_mib() is below every one of them.
GUEST_KERNEL_FIXED_MIB = 96


def guest_memtotal_mib(memory_mib: int) -> int:
    """At least the MemTotal of a guest with memory_mib of memory."""
    return memory_mib - memory_mib // 64 - memory_mib // 512 - GUEST_KERNEL_FIXED_MIB


def guest_tmpfs_mib(memory_mib: int) -> int:
    """The most MiB a file in the guest's /tmp may have on a machine with
    memory_mib of memory."""
    return guest_memtotal_mib(memory_mib) // 2


def memory_for_tmpfs_mib(file_mib: int) -> int:
    """The least memory_mib whose /tmp holds a file of file_mib."""
    memory_mib = 2 * file_mib
    while guest_tmpfs_mib(memory_mib) < file_mib:
        memory_mib += 1
    return memory_mib


@dataclass(frozen=True)
class Param:
    name: str
    description: str
    minimum: int
    maximum: int


@dataclass(frozen=True)
class ScratchDisks:
    count_param: str
    size_mib_param: str

    def count(self, params: dict[str, int]) -> int:
        return params[self.count_param]

    def size_mib(self, params: dict[str, int]) -> int:
        # Room for the file plus ext4's journal, inode tables and reserve.
        return params[self.size_mib_param] * 11 // 10 + 64


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    params: dict[str, Param]
    scales: dict[str, dict[str, int]]
    scratch_disks: ScratchDisks | None = None
    tmpfs_param: str | None = None      # the parameter giving its /tmp file's MiB
    min_cpus: int = 1

    def resolve_params(self, scale: str, overrides: dict[str, int]) -> dict[str, int]:
        """The parameter values for a scale with overrides, all range-checked."""
        if scale not in self.scales:
            raise HotlineError(f"workload {self.name}: unknown scale '{scale}'; "
                               f"available: {', '.join(self.scales)}")
        values = dict(self.scales[scale])
        for key, value in overrides.items():
            if key not in self.params:
                raise HotlineError(f"workload {self.name}: unknown parameter '{key}'; "
                                   f"allowed: {', '.join(self.params)}")
            values[key] = value
        for key, value in values.items():
            p = self.params[key]
            if not p.minimum <= value <= p.maximum:
                raise HotlineError(f"workload {self.name}: parameter '{key}' = {value} is "
                                   f"outside {p.minimum}..{p.maximum}")
        return values

    def cpus_problem(self, cpus: int, system: str) -> str | None:
        """Why `system`, a machine of `cpus` CPUs, cannot run the workload,
        or None if it can."""
        if cpus >= self.min_cpus:
            return None
        return (f"workload {self.name} runs on {self.min_cpus} CPUs; {system} has {cpus}: "
                f"give it a system with at least {self.min_cpus}")

    def memory_problem(self, params: dict[str, int], memory_mib: int,
                       system: str) -> str | None:
        """Why `system`, a machine with memory_mib of memory, cannot run the
        workload with these parameters, or None if it can."""
        if self.tmpfs_param is None:
            return None
        file_mib, room = params[self.tmpfs_param], guest_tmpfs_mib(memory_mib)
        if file_mib <= room:
            return None
        holds = f"holds at most {room} MiB" if room > 0 else "has no room for it"
        return (f"workload {self.name}: {self.tmpfs_param} = {file_mib} does not fit in the "
                f"guest's /tmp (a tmpfs of half the memory the kernel manages) on {system}, "
                f"whose memory_mib = {memory_mib} {holds}; give it a system "
                f"with memory_mib >= {memory_for_tmpfs_mib(file_mib)} or a smaller "
                f"{self.tmpfs_param}")


class _ParamFile(Strict):
    description: str
    min: int
    max: int

    @model_validator(mode="after")
    def _range(self):
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class _ScratchDisksFile(Strict):
    count: str
    size_mib: str


class _WorkloadFile(Strict):
    """workload.toml, as written."""
    description: str
    params: dict[str, _ParamFile] = Field(min_length=1)
    scales: dict[str, dict[str, int]] = Field(min_length=1)
    scratch_disks: _ScratchDisksFile | None = None
    tmpfs_mib: str | None = None
    min_cpus: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _names_are_parameters(self):
        for scale, values in self.scales.items():
            if set(values) != set(self.params):
                raise ValueError(f"scale '{scale}' must set exactly the parameters "
                                 f"{', '.join(self.params)}")
        named = [self.tmpfs_mib] if self.tmpfs_mib else []
        if self.scratch_disks:
            named += [self.scratch_disks.count, self.scratch_disks.size_mib]
        for param in named:
            if param not in self.params:
                raise ValueError(f"'{param}' is not a parameter; parameters: "
                                 f"{', '.join(self.params)}")
        return self


def available_workloads() -> list[str]:
    return sorted(p.parent.name for p in WORKLOADS.glob("*/workload.toml")
                  if NAME.fullmatch(p.parent.name))


def load_workload(name: str) -> Workload:
    # The name is checked before any path is made of it ("../x" is no name).
    if not NAME.fullmatch(name) or name not in available_workloads():
        raise HotlineError(f"unknown workload '{name}'; available: "
                           f"{', '.join(available_workloads())}")
    data = tomlfile.parse(WORKLOADS / name / "workload.toml", _WorkloadFile)
    params = {k: Param(k, v.description, v.min, v.max) for k, v in data.params.items()}
    scratch = ScratchDisks(data.scratch_disks.count, data.scratch_disks.size_mib) \
        if data.scratch_disks else None
    return Workload(name, data.description, params, data.scales, scratch, data.tmpfs_mib,
                    data.min_cpus)
