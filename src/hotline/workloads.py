"""The workload catalogue: disk-images/workloads/NAME/ holds a run.sh that the
guest init runs and a workload.toml that declares its parameters and scales.

A scale (smoke, default, seed) is a named set of parameter values; a spec may
override single parameters.  The guest receives them on the kernel command
line as hotline.arg.NAME.KEY=VALUE and the workload reads ARG_KEY.

A workload that writes to disks declares scratch_disks = { count = PARAM,
size_mib = PARAM }: the runner attaches that many blank ext4 disks, each big
enough for a file of that many MiB.
"""

import tomllib
from dataclasses import dataclass

from hotline import paths
from hotline.errors import HotlineError

WORKLOADS = paths.DISK_IMAGES / "workloads"


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


def available_workloads() -> list[str]:
    return sorted(p.parent.name for p in WORKLOADS.glob("*/workload.toml"))


def load_workload(name: str) -> Workload:
    path = WORKLOADS / name / "workload.toml"
    if not path.is_file():
        raise HotlineError(f"unknown workload '{name}'; available: "
                           f"{', '.join(available_workloads())}")
    with open(path, "rb") as f:
        data = tomllib.load(f)
    params = {k: Param(k, v["description"], v["min"], v["max"])
              for k, v in data["params"].items()}
    scales = data["scales"]
    for scale, values in scales.items():
        if set(values) != set(params):
            raise HotlineError(f"{path}: scale '{scale}' must set exactly the parameters "
                               f"{', '.join(params)}")
    scratch = None
    if "scratch_disks" in data:
        scratch = ScratchDisks(data["scratch_disks"]["count"], data["scratch_disks"]["size_mib"])
        for param in (scratch.count_param, scratch.size_mib_param):
            if param not in params:
                raise HotlineError(f"{path}: scratch_disks names '{param}', not a parameter")
    return Workload(name, data["description"], params, scales, scratch)
