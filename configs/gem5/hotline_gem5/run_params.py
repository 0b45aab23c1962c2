"""The parameters of one gem5 run: what hotline writes (src/hotline/simulate/
gem5/) and what the config scripts beside this package read, as one typed
definition that both sides check.

gem5 runs its own Python without hotline's packages, so this module uses the
standard library only; hotline imports this very file.  A run is two gem5
invocations (boot once, measure many):

- boot (hotline_boot.py): atomic CPUs without caches boot the guest; at the
  workload's first work_begin the script saves a checkpoint and exits.
- measure (hotline_measure.py): the checkpoint restored into the measuring
  CPU (timing or O3) with the spec's caches and hotline's extension's
  profiles, run to the guest's m5 exit.  Classic caches are not part of a
  checkpoint, so one checkpoint serves every cache geometry, CPU model and
  repeat.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass
from typing import Literal, Optional, Union

# Bumped whenever a field is added, dropped or changes meaning, so that a
# script never reads parameters written for another version of itself.
SCHEMA = 9

# X86Board's one IDE controller takes four disks: the root disk and at most
# three scratch disks (Machine.scratch_disks).
MAX_SCRATCH_DISKS = 3


# What a gem5 built without hotline's extension (or with an older one) does
# not measure, and how to build it: one line (no_extension), which the
# measuring script prints into gem5.log and writes alone into
# NO_EXTENSION_FILE in its output directory, where hotline reads it to say
# it again.
NO_EXTENSION = "this gem5 lacks hotline's extension"
NO_EXTENSION_FILE = "no-extension.txt"


def build_extension(extras: str) -> str:
    """How to build gem5 with the extension whose directory is `extras`
    (docs/gem5.md, "Building gem5 with hotline's extension")."""
    return f"build gem5 with scons EXTRAS={extras} build/X86/gem5.opt (docs/gem5.md)"


def no_extension(missing: list, extras: str) -> str:
    """The one line for a gem5 without the extension's `missing` objects."""
    return (f"{NO_EXTENSION} ({', '.join(missing)}): the run has gem5's own statistics "
            "but not what the extension adds, the miss profile (misses by instruction, data "
            "field and cause) and the cycle profile (O3 cycles by instruction); "
            + build_extension(extras))


class ParamsError(ValueError):
    """Parameters that do not match this definition."""


@dataclass(frozen=True)
class CacheParams:
    """One classic cache, as gem5's Cache SimObject takes it."""
    size: str
    assoc: int
    tag_latency: int
    data_latency: int
    response_latency: int
    mshrs: int
    tgts_per_mshr: int
    clusivity: Literal["mostly_incl", "mostly_excl"] = "mostly_incl"
    writeback_clean: bool = False


@dataclass(frozen=True)
class ClassicCaches:
    kind: Literal["classic"]
    line_bytes: int
    l1i: CacheParams
    l1d: CacheParams
    l2: CacheParams
    l3: Optional[CacheParams]


@dataclass(frozen=True)
class RubyCaches:
    kind: Literal["ruby-mesi-two-level"]
    line_bytes: int
    l1i_size: str
    l1i_assoc: int
    l1d_size: str
    l1d_assoc: int
    l2_size: str
    l2_assoc: int
    num_l2_banks: int


@dataclass(frozen=True)
class Core:
    """The O3 core's widths and queues (the system spec's [core])."""
    width: int
    rob_entries: int
    iq_entries: int
    lq_entries: int
    sq_entries: int


@dataclass(frozen=True)
class Memory:
    kind: Literal["ddr4-2400", "simple"]
    size: str
    latency: Optional[str] = None
    latency_var: Optional[str] = None
    bandwidth: Optional[str] = None


@dataclass(frozen=True)
class Machine:
    """What both phases build alike: the restore needs the same board, CPU
    count, memory and disk as the boot that saved the checkpoint."""
    vmlinux: str
    disk_image: str
    kernel_args: list[str]
    cpus: int
    clock: str
    memory: Memory
    # Blank disks for the workload to write (workloads' scratch_disks), raw
    # images attached after the root disk, as the guest's /dev/sdb, sdc, ...
    # The boot writes to them (mounting) and the checkpoint keeps what it
    # wrote, so a restore attaches the very images the boot did.
    scratch_disks: list[str] = dataclasses.field(default_factory=list)


@dataclass(frozen=True)
class MissProfile:
    """hotline's miss profile (configs/gem5/extras/miss_profile.hh) of each
    region, written to `path` in --outdir ({region} is a number from 0)."""
    path: str
    l1d_lines: int
    l2_lines: int
    user_space_end: int   # data addresses of instructions below it are not kept


# The {core} of Sampling.retire_path: each core's atomic and O3 core, in the
# order the cache hierarchy makes their retire counts.
RETIRE_CORES = ("atomic", "o3")


@dataclass(frozen=True)
class Sampling:
    """SMARTS's systematic sampling of the regions (hotline.specs.Sampling):
    atomic cores for interval_cycles between the windows, O3 cores in them
    (warmup_micro_ops, then measure_micro_ops, per core, ended at
    cap_cycles whatever the cores did); each window's measured part
    profiled into `path` in --outdir ({region}, {sample} and {cpu} are
    numbers from 0); each core's micro-ops per instruction over
    the whole region, its atomic and its O3 core's apart, counted into
    `retire_path` ({region}, {cpu}, and {core}: "atomic" or "o3"), the run's
    own figures for what the windows estimate."""
    interval_cycles: int
    warmup_micro_ops: int
    measure_micro_ops: int
    cap_cycles: int
    path: str
    retire_path: str


@dataclass(frozen=True)
class Perturbation:
    """What makes a repeat differ from the others (Alameldeen and Wood,
    HPCA 2003): every access to the fixed-latency memory takes up to
    latency_var more, drawn by gem5's random generator seeded with seed when
    the region opens."""
    seed: int
    latency_var: str


@dataclass(frozen=True)
class BootParams:
    schema: int
    machine: Machine
    checkpoint_dir: str       # where the checkpoint is saved
    roi_file: str             # in --outdir, JSON: the tick the checkpoint was taken at


@dataclass(frozen=True)
class MeasureParams:
    schema: int
    machine: Machine
    checkpoint_dir: str       # the boot's checkpoint, restored
    roi_cpu: Literal["timing", "o3"]
    caches: Union[ClassicCaches, RubyCaches]
    roi_file: str             # in --outdir, JSON: every region's first and last tick
    core: Optional[Core] = None   # O3 only
    # O3 with classic caches: each core's cycle profile of each region, from
    # hotline's gem5 extension (configs/gem5/extras), written to this name in
    # --outdir ({region} and {cpu} are numbers from 0).  A gem5 built without
    # the extension writes none and says so in one line (no_extension).
    cycle_profile: Optional[str] = None
    # Classic caches: the misses counted inside gem5 by hotline's extension;
    # a gem5 without it writes none and says so in the same line.
    miss_profile: Optional[MissProfile] = None
    # O3 with classic caches, sampled: the regions run on atomic cores with
    # O3 windows, each window's measured part profiled (cycle_profile is
    # then None: no window covers a whole region).
    sampling: Optional[Sampling] = None
    # Every repeat of an experiment of more than one: the memory latency
    # jitter that varies them (None for a single run).
    perturbation: Optional[Perturbation] = None


def _check(kind, value, where: str):
    """value as the type `kind`, or ParamsError naming `where`."""
    origin = typing.get_origin(kind)
    if dataclasses.is_dataclass(kind):
        if not isinstance(value, dict):
            raise ParamsError(f"{where}: expected a table for {kind.__name__}, got {value!r}")
        hints = typing.get_type_hints(kind)
        names = {f.name for f in dataclasses.fields(kind)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ParamsError(f"{where}: unknown key(s) {', '.join(unknown)} for {kind.__name__}")
        args = {}
        for field in dataclasses.fields(kind):
            if field.name in value:
                args[field.name] = _check(hints[field.name], value[field.name],
                                          f"{where}.{field.name}")
            elif (field.default is dataclasses.MISSING
                  and field.default_factory is dataclasses.MISSING):
                raise ParamsError(f"{where}: missing key '{field.name}'")
        return kind(**args)
    if origin is Union:
        errors = []
        for alternative in typing.get_args(kind):
            if alternative is type(None):
                if value is None:
                    return None
                continue
            try:
                return _check(alternative, value, where)
            except ParamsError as e:
                errors.append(str(e))
        raise ParamsError(errors[-1] if len(errors) == 1 else
                          f"{where}: {value!r} matches none of: " + "; ".join(errors))
    if origin is Literal:
        if value not in typing.get_args(kind):
            raise ParamsError(f"{where}: {value!r} is not one of {typing.get_args(kind)}")
        return value
    if origin is list:
        (item,) = typing.get_args(kind)
        if not isinstance(value, list):
            raise ParamsError(f"{where}: expected a list, got {value!r}")
        return [_check(item, v, f"{where}.{i}") for i, v in enumerate(value)]
    # bool is an int in Python; a spec's `true` must not pass as 1.
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ParamsError(f"{where}: expected an integer, got {value!r}")
    if not isinstance(value, kind):
        raise ParamsError(f"{where}: expected {kind.__name__}, got {value!r}")
    return value


def from_dict(kind, data: dict):
    """Parameters of `kind` (BootParams or MeasureParams), checked."""
    params = _check(kind, data, kind.__name__)
    if params.schema != SCHEMA:
        raise ParamsError(f"{kind.__name__}: schema {params.schema}, this script reads {SCHEMA}")
    return params


def load(kind, path: str):
    with open(path) as f:
        return from_dict(kind, json.load(f))


def to_dict(params) -> dict:
    """The JSON form, checked on the way out too (what the script will read)."""
    data = dataclasses.asdict(params)
    _check(type(params), data, type(params).__name__)   # any part: a Machine has no schema
    return data
