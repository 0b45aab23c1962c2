"""The interface every simulation backend has, and what a run gives back.

A backend is one package of simulate/ (qemu/, gem5/) whose __init__.py
holds its Backend as BACKEND; simulate.get_backend(name) is the one place
a backend is chosen by the name an experiment spec gives.  The experiment
(experiment/) and the sweep workflow (sweep/) ask it:

  check_spec(spec, path)   as the spec is read: what of a valid experiment
                           this backend cannot run (a one-line HotlineError)
  check(spec, path)        before anything is built: what else it needs
                           (its binary, machines it can build)
  mode(spec)               how it runs the guest's CPUs: "deterministic"
                           (the same run from the same inputs) or "parallel"
  identity()               what names it in a run's conditions and key (its
                           version, its configuration)
  settings(spec, system, repeat)
                           the spec's settings only it has, as a run of this
                           repeat has them (QEMU: the quantum, the phase)
  perturbation(spec)       what makes the spec's repeats differ, or None
  planned_tool(spec)       the build of its own the spec's runs load, planned
                           (where it is cached; QEMU: the TCG plugin the spec
                           names), or None; build_tool(spec) builds it
  recorded(settings, name) a setting as a run's record implies it (the
                           default it ran with where the record leaves the
                           setting out), None if the backend has no such
                           setting: what an index of runs shows
  contends_as_hardware     whether its CPUs contend for a lock in time as
                           hardware's do (spins per contended lock mean
                           something)
  threads(spec, system)    host threads one run keeps busy
  memory_mib(spec, system) host memory one run may use, the guest's included
  run(job)                 the simulator in the run directory to the
                           guest's end, then its outputs as the results
                           tables every backend makes (results/schema.py)

and `markers`: how the guest marks its regions of interest for it (the
kernel command line's hotline.markers); `clocksource`: the clocksource
the guest is told to use (command_line.CLOCKSOURCES), None where the
kernel's own choice is the one a real machine makes.  A third backend, another QEMU or
gem5 with other caches, is one more package with one more Backend.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from hotline.simulate import guest_log

if TYPE_CHECKING:
    from hotline.disk_image import DiskImage
    from hotline.kernel.build import Kernel
    from hotline.specs import ExperimentSpec, SystemSpec


class Tool(Protocol):
    """A build of a backend's own that its runs load, cached by the hash of
    its inputs (QEMU: a TCG plugin, plugins.Plugin)."""
    kind: str       # what it is, in a word: "plugin"
    name: str
    key: str
    path: Path      # the built file, which marks the build complete

    def manifest(self) -> dict:
        """What names it in a run's inputs (and so its key)."""


@dataclass
class Outcome:
    failure: str | None       # None: the guest ran to its end and reported success
    report: guest_log.GuestReport
    wall_s: float
    # The results tables the run's outputs became, by name (misses: its
    # misses.parquet, ...), for the manifest.
    tables: dict[str, Path] = field(default_factory=dict)
    # What else the backend says of its outputs, for the manifest.
    account: dict | None = None


@dataclass(frozen=True)
class Job:
    """One run, as a backend is given it: what to boot, on what, and where."""
    run_id: str
    workload: str
    params: dict[str, int]
    spec: "ExperimentSpec"
    system: "SystemSpec"
    kernel: "Kernel"
    image: "DiskImage"
    tool: "Tool | None"       # the backend's build the run loads (planned_tool)
    append: str               # the kernel command line
    work: Path                # the run directory, the simulator's working directory
    repeat: int = 0           # which repeat of the spec's runs (settings)


class Backend(ABC):
    name: ClassVar[str]
    markers: ClassVar[str]    # "nop" (multi-byte NOPs) or "m5" (gem5's m5ops)
    clocksource: ClassVar[str | None]
    contends_as_hardware: ClassVar[bool]

    @abstractmethod
    def check_spec(self, spec: "ExperimentSpec", path: Path) -> None:
        """What of a valid experiment spec this backend cannot run: a
        HotlineError naming the file and the key.  Needs no simulator."""

    @abstractmethod
    def check(self, spec: "ExperimentSpec", path: Path) -> None:
        """What else a run needs, checked before anything is built."""

    def mode(self, spec: "ExperimentSpec") -> str:
        """How the simulator runs the guest's CPUs: "deterministic" (a run
        is the same from the same inputs) or "parallel" (host threads)."""
        return "deterministic"

    @abstractmethod
    def identity(self) -> dict:
        """The simulator's identity in a run's conditions (and so its key)."""

    def settings(self, spec: "ExperimentSpec", system: "SystemSpec", repeat: int) -> dict:
        """The spec's settings only this backend has, as they take effect
        for this repeat on this system (defaults filled in), in a run's
        conditions (and so its key)."""
        return {}

    def perturbation(self, spec: "ExperimentSpec") -> str | None:
        """What makes the spec's repeats differ, in a few words; None where
        they are identical (a deterministic simulator given nothing to vary)."""
        return None

    def planned_tool(self, spec: "ExperimentSpec") -> "Tool | None":
        """The build of the backend's own that the spec's runs load, where
        it is (or will be) cached, without building it; None if none."""
        return None

    def build_tool(self, spec: "ExperimentSpec") -> "Tool | None":
        """The same, built (or found in the cache)."""
        return None

    def recorded(self, settings: dict, name: str):
        """The setting `name` as a run's recorded settings (its manifest's
        inputs.backend) imply it; None where this backend has no such
        setting."""
        return None

    @abstractmethod
    def threads(self, spec: "ExperimentSpec", system: "SystemSpec") -> int:
        """Host threads one simulation keeps busy."""

    @abstractmethod
    def memory_mib(self, spec: "ExperimentSpec", system: "SystemSpec") -> int:
        """MiB one simulation may use, the guest's memory included."""

    @abstractmethod
    def run(self, job: Job) -> Outcome:
        """Run the simulator in job.work to the guest's end (killed on a
        panic or past the spec's timeout), then turn its outputs into the
        results tables."""
