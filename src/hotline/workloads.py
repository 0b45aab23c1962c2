"""The workload catalogue: disk-images/workloads/NAME/ holds a run.sh that the
guest init runs and a workload.toml that declares its parameters and scales.

A scale (smoke, default, seed) is a named set of parameter values; a spec may
override single parameters.  The guest receives them on the kernel command
line as hotline.arg.NAME.KEY=VALUE and the workload reads ARG_KEY.

A workload that writes to disks declares scratch_disks = { count = PARAM,
size_mib = PARAM }: the runner attaches that many blank ext4 disks, each big
enough for a file of that many MiB.
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

    @model_validator(mode="after")
    def _names_are_parameters(self):
        for scale, values in self.scales.items():
            if set(values) != set(self.params):
                raise ValueError(f"scale '{scale}' must set exactly the parameters "
                                 f"{', '.join(self.params)}")
        named = [self.scratch_disks.count, self.scratch_disks.size_mib] \
            if self.scratch_disks else []
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
    return Workload(name, data.description, params, data.scales, scratch)
