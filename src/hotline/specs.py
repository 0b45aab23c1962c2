"""System specs and experiment specs: TOML files in configs/, validated in full
before anything is built.

A system spec (configs/systems/NAME.toml) describes a simulated machine for
both backends: cores, memory, cache geometry and latencies.  An experiment spec
(configs/experiments/NAME.toml) is the matrix kernel variants x workloads x
systems x repeats.  Errors name the file, the key and what is allowed.
"""

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from hotline import names, paths, tomlfile
from hotline.errors import HotlineError
from hotline.kernel.variants import available_variants
from hotline.tomlfile import Strict
from hotline.workloads import load_workload


# The most memory QEMU 10.0's pc machine gives a guest: the `max` CPU under
# TCG has 40 physical address bits, and RAM above 4 GiB, the PCI hole and
# the hotplug region must fit below them (measured with qemu-system-x86_64
# 10.0.2: 1033216 MiB starts, 1033217 does not; rounded down to whole GiB).
# gem5's X86Board takes at most 3072 MiB (hotline.simulate.gem5.params).  What the
# host has is checked where a run starts (check_host_memory).
QEMU_MAX_MEMORY_MIB = 1008 * 1024


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class Cache(Strict):
    size_kib: int = Field(gt=0)
    assoc: int = Field(gt=0)
    latency_cycles: int = Field(gt=0)


class Caches(Strict):
    line_bytes: int = 64
    inclusion: Literal["inclusive", "non-inclusive", "exclusive"] = "non-inclusive"
    l1i: Cache
    l1d: Cache
    l2: Cache
    l3: Cache | None = None

    @model_validator(mode="after")
    def _geometry(self):
        if not _power_of_two(self.line_bytes) or self.line_bytes < 8:
            raise ValueError(f"line_bytes {self.line_bytes} must be a power of two >= 8")
        for level in ("l1i", "l1d", "l2", "l3"):
            cache = getattr(self, level)
            if cache is None:
                continue
            size = cache.size_kib * 1024
            ways_bytes = cache.assoc * self.line_bytes
            if size % ways_bytes or not _power_of_two(size // ways_bytes):
                raise ValueError(
                    f"{level}: {cache.size_kib} KiB with {cache.assoc} ways of "
                    f"{self.line_bytes}-byte lines does not give a power-of-two number of sets")
        return self


class Latency(Strict):
    memory_cycles: int = Field(gt=0)
    cache_to_cache_cycles: int = Field(gt=0)


class StoreBuffer(Strict):
    entries: int = Field(default=32, gt=0)
    window_instructions: int = Field(default=64, gt=0)


class QemuSettings(Strict):
    cpu_model: str = "max,la57=off"


# A window's cap, per micro-op it is given: far above what whole windows
# take (the smoke fork storm's: 1.4 cycles a micro-op on the P6-shaped O3
# cores, its slowest instructions about 18).
WINDOW_CAP_CYCLES_PER_MICRO_OP = 50


class Sampling(Strict):
    """Sampled simulation of the regions (`[gem5] sampling`), SMARTS's
    systematic sampling (Wunderlich et al., ISCA 2003): atomic cores run the
    regions with the caches kept warm (functional warming) for
    `interval_cycles` (one micro-op a cycle), then the O3 cores take over:
    each core commits `warmup_micro_ops` of detailed warm-up, then
    `measure_micro_ops` that its cycle profile measures, and the atomic
    cores take back over.  The profile of the measured windows estimates the
    region's, each share with a 95% interval over the windows
    (docs/gem5.md).  Windows are counted in micro-ops, as SMARTS counts its
    units in instructions: a window of fixed cycles over-weighs slow code."""
    interval_cycles: int = Field(ge=1)
    warmup_micro_ops: int = Field(ge=0)
    measure_micro_ops: int = Field(ge=1)

    @property
    def cap_cycles(self) -> int:
        """The cycles after which a window ends whatever its cores did (a
        core that spins, or one that wakes and sleeps without end)."""
        return WINDOW_CAP_CYCLES_PER_MICRO_OP * (self.warmup_micro_ops + self.measure_micro_ops)


class Gem5Settings(Strict):
    """How the gem5 backend builds this machine (configs/gem5/)."""
    clock_ghz: float = Field(default=3.0, gt=0)
    boot_cpu: Literal["atomic", "kvm"] = "atomic"
    roi_cpu: Literal["o3", "timing"] = "o3"
    caches: Literal["classic", "ruby-mesi-two-level"] = "classic"
    memory: Literal["ddr4-2400", "simple"] = "ddr4-2400"
    sampling: Sampling | None = None

    @model_validator(mode="after")
    def _sampled_o3(self):
        if self.sampling is not None and (self.roi_cpu != "o3" or self.caches != "classic"):
            raise ValueError("sampling needs roi_cpu = \"o3\" and caches = \"classic\": the "
                             "cycle profile measures the O3 windows through classic caches")
        return self


class Core(Strict):
    """The out-of-order core gem5's O3 CPU models (`[gem5] roi_cpu = "o3"`):
    its widths (fetch, decode, rename, dispatch, issue, write-back, commit
    alike) and queues.  The defaults are gem5 v24's O3 defaults.  At most 8
    wide: the cycle profile splits a cycle among at most 8 commits
    (configs/gem5/extras/cycle_profile.hh)."""
    width: int = Field(default=8, ge=1, le=8)
    rob_entries: int = Field(default=192, ge=1)
    iq_entries: int = Field(default=64, ge=1)
    lq_entries: int = Field(default=32, ge=1)
    sq_entries: int = Field(default=32, ge=1)


class SystemSpec(Strict):
    description: str
    cpus: int = Field(ge=1, le=64)
    # 64: seed 001's page replacement at a size gem5 can run
    # (pentium3-4way-64m); the guest boots in it, its initramfs some 7 MB.
    memory_mib: int = Field(ge=64)
    caches: Caches
    latency: Latency
    store_buffer: StoreBuffer = StoreBuffer()
    qemu: QemuSettings = QemuSettings()
    gem5: Gem5Settings = Gem5Settings()
    core: Core = Core()

    @field_validator("memory_mib")
    @classmethod
    def _addressable(cls, memory_mib: int) -> int:
        if memory_mib > QEMU_MAX_MEMORY_MIB:
            raise ValueError(f"{memory_mib} MiB is more than QEMU's pc machine can give a "
                             f"guest: at most {QEMU_MAX_MEMORY_MIB} MiB (40 physical "
                             "address bits)")
        return memory_mib


class WorkloadRef(Strict):
    name: str
    scale: str = "default"
    params: dict[str, int] = {}


class Group(Strict):
    """More runs in the same experiment: its own cross product of variants,
    systems and workloads, each list defaulting to the experiment's."""
    variants: list[str] | None = Field(default=None, min_length=1)
    systems: list[str] | None = Field(default=None, min_length=1)
    workloads: list[WorkloadRef] | None = Field(default=None, min_length=1)


# The backends a spec can name, each the package hotline/simulate/NAME/
# (simulate.get_backend).
BACKENDS = ("qemu", "gem5")

# Bounds on what one spec may ask, far above any study's (claims-default
# plans 25 runs) and far below what would make planning it take minutes.
MAX_REPEATS = 1000
MAX_RUNS = 10_000
# A turn of 10^9 instructions is longer than any region hotline runs.
MAX_QUANTUM = 10**9


class QemuRun(Strict):
    """How the QEMU backend runs an experiment's guests (`[qemu]`)."""
    mode: Literal["deterministic", "parallel"] = "deterministic"
    # Deterministic mode with hotline-cache: at most this many instructions
    # per vCPU turn; 0: QEMU's own turns, up to the next virtual-timer
    # deadline.  Unset: the QEMU backend's default (docs/interleaving.md
    # says how it was chosen).
    quantum: int | None = Field(default=None, ge=0, le=MAX_QUANTUM)
    # With a quantum: how the cache model sees the CPUs between two of the
    # quantum's deadlines, "block" woven block by block as CPUs running at
    # once, "turn" turn by turn as QEMU ran them.  Unset: the QEMU
    # backend's default (docs/interleaving.md).
    interleave: Literal["turn", "block"] | None = None
    # The TCG plugin the runs load (plugins/NAME/), none if unset.
    plugin: str | None = None


class ExperimentSpec(Strict):
    description: str
    backend: Literal[BACKENDS] = "qemu"
    # The settings of one backend, a table named after it; only the table
    # of the spec's backend may be given (experiment.load_spec).
    qemu: QemuRun = QemuRun()
    root: Literal["initramfs", "disk"] = "initramfs"
    repeats: int = Field(default=1, ge=1, le=MAX_REPEATS)
    timeout_s: int = Field(default=1800, gt=0)
    # The scale of every workload that names none, so that one matrix can
    # be run at two scales (an experiment that includes another and sets
    # its own scale).
    scale: str = "default"
    variants: list[str] = Field(min_length=1)
    systems: list[str] = Field(min_length=1)
    workloads: list[WorkloadRef] = Field(min_length=1)
    # [[also]] tables: further cross products, so that one experiment can hold
    # every result a study needs without running every combination.
    also: list[Group] = []

    @model_validator(mode="before")
    @classmethod
    def _scale_fills_workloads(cls, data):
        """A workload that names no scale gets the experiment's."""
        if not isinstance(data, dict):
            return data
        scale = data.get("scale", "default")

        def fill(refs):
            if not isinstance(refs, list):
                return refs
            return [dict(ref, scale=scale) if isinstance(ref, dict) and "scale" not in ref
                    else ref for ref in refs]
        data = dict(data)
        if "workloads" in data:
            data["workloads"] = fill(data["workloads"])
        if isinstance(data.get("also"), list):
            data["also"] = [dict(g, workloads=fill(g["workloads"]))
                            if isinstance(g, dict) and "workloads" in g else g
                            for g in data["also"]]
        return data

    def groups(self) -> list[Group]:
        """The cross products to run: the experiment's own lists, then each
        [[also]] with the experiment's lists filling what it leaves out."""
        own = Group(variants=self.variants, systems=self.systems, workloads=self.workloads)
        return [own] + [Group(variants=g.variants or self.variants,
                              systems=g.systems or self.systems,
                              workloads=g.workloads or self.workloads) for g in self.also]


def system_path(name: str) -> Path:
    return paths.CONFIGS / "systems" / f"{name}.toml"


def available_systems() -> list[str]:
    return sorted(p.stem for p in (paths.CONFIGS / "systems").glob("*.toml"))


def load_system(name: str) -> SystemSpec:
    """A system spec by name.  `extends = "OTHER"` takes OTHER's spec and
    changes only the keys given: a machine with another L2 or another gem5
    CPU is a few lines, not a copy that drifts from its original."""
    path = system_path(name)
    try:
        return SystemSpec.model_validate(_system_table(name, ()))
    except ValidationError as e:
        raise HotlineError(tomlfile.one_line(path, SystemSpec, e)) from None


def _system_table(name: str, seen: tuple[str, ...]) -> dict:
    # A name, not a path: checked before a path is made of it.
    if name not in available_systems():
        raise HotlineError(f"unknown system '{name}'; available: {', '.join(available_systems())}")
    path = system_path(name)
    table = tomlfile.read(path)
    base = table.pop("extends", None)
    if base is None:
        return table
    if not isinstance(base, str):
        raise HotlineError(f"{path}: key 'extends': the name of another system, not {base!r}")
    if base in seen + (name,):
        raise HotlineError(f"{path}: key 'extends': '{base}' extends '{name}' in turn")
    try:
        return _merged(_system_table(base, seen + (name,)), table)
    except HotlineError as e:
        raise HotlineError(f"{path}: key 'extends': {e}") from None


def _merged(base: dict, changes: dict) -> dict:
    out = dict(base)
    for key, value in changes.items():
        out[key] = _merged(base[key], value) \
            if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


def host_memory_mib() -> int:
    """The memory of the machine this runs on (MemTotal)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    raise HotlineError("/proc/meminfo has no MemTotal")


def check_host_memory(name: str, system: SystemSpec) -> None:
    """A simulator allocates the guest's memory whole; Linux refuses an
    allocation larger than the machine's memory, so a system with more
    memory than this host cannot run here."""
    host = host_memory_mib()
    if system.memory_mib > host:
        raise HotlineError(f"{system_path(name)}: key 'memory_mib': {system.memory_mib} MiB is "
                           f"more than this host's memory ({host} MiB, MemTotal in "
                           "/proc/meminfo), which the simulator must allocate for the guest; "
                           "run it on a larger machine or give the system less memory")


def _check_group(path: Path, spec: ExperimentSpec, prefix: str, group: Group) -> None:
    """The names a group (the experiment's own lists, or an [[also]] table)
    gives: each must exist, and each workload must fit each system.  Errors
    name the key, e.g. also.0.variants.1."""
    variants, systems = available_variants(), available_systems()
    for i, name in enumerate(group.variants or ()):
        if name not in variants:
            raise HotlineError(f"{path}: key '{prefix}variants.{i}': unknown variant '{name}'; "
                               f"available: {', '.join(variants)}")
    for i, name in enumerate(group.systems or ()):
        if name not in systems:
            raise HotlineError(f"{path}: key '{prefix}systems.{i}': unknown system '{name}'; "
                               f"available: {', '.join(systems)}")
        try:
            load_system(name)
        except HotlineError as e:
            raise HotlineError(f"{path}: key '{prefix}systems.{i}': {e}") from None
    # Each workload against each system of the group (its own or the
    # experiment's), the error naming the key of whichever list the group sets.
    workloads_key = prefix if group.workloads else ""
    systems_key = prefix if group.systems else ""
    for i, ref in enumerate(group.workloads or spec.workloads):
        try:
            workload = load_workload(ref.name)
            params = workload.resolve_params(ref.scale, ref.params)
        except HotlineError as e:
            raise HotlineError(f"{path}: key '{workloads_key}workloads.{i}': {e}") from None
        for j, name in enumerate(group.systems or spec.systems):
            system, where = load_system(name), f"system '{name}' ({systems_key}systems.{j})"
            if problem := (workload.cpus_problem(system.cpus, where) or
                           workload.memory_problem(params, system.memory_mib, where)):
                raise HotlineError(f"{path}: key '{workloads_key}workloads.{i}': {problem}")


def _experiment_table(path: Path) -> dict:
    """An experiment spec's table: its own keys, over those of the spec it
    includes (`include = "NAME.toml"`, beside it), which must be a valid
    experiment of its own and include none."""
    table = tomlfile.read(path)
    if "include" not in table:
        return table
    include = table.pop("include")
    if not isinstance(include, str):
        raise HotlineError(f"{path}: key 'include': the file name of an experiment spec "
                           f"beside it, not {tomlfile.toml_value(include)}")
    # A file name beside the spec, nothing else: an include names no path.
    if names.problem(include) or not include.endswith(".toml"):
        raise HotlineError(f"{path}: key 'include': '{include}' is not the file name of a spec "
                           f"beside it (NAME.toml: {names.ALLOWED})")
    included = path.parent / include
    try:
        if "include" in tomlfile.read(included):
            raise HotlineError(f"{included} includes another spec; include one that does not")
        load_experiment(included)
    except HotlineError as e:
        raise HotlineError(f"{path}: key 'include': {e}") from None
    return _merged(tomlfile.read(included), table)


def load_experiment(path: Path) -> ExperimentSpec:
    """Parse and check an experiment spec, including every system, variant and
    workload it names, in its own lists and in every [[also]] table, so that
    a bad spec fails before anything is built.  What of it its backend
    cannot run is the backend's to say: experiment.load_spec() asks it."""
    # The file's name is the experiment's, and names its results folder.
    names.check(Path(path).stem, f"{path}: the experiment's name (its file name)")
    table = _experiment_table(path)
    for key in QemuRun.model_fields:
        if key in table:
            raise HotlineError(f"{path}: key '{key}': a setting of the QEMU backend, in its "
                               f"table: write it under [qemu] (`[qemu]` then "
                               f"`{key} = {tomlfile.toml_value(table[key])}`)")
    spec = tomlfile.validate(path, table, ExperimentSpec)
    for other in sorted(set(BACKENDS) & ExperimentSpec.model_fields.keys() - {spec.backend}):
        if other in spec.model_fields_set:
            raise HotlineError(f"{path}: key '{other}': the settings of backend \"{other}\", "
                               f"but the experiment runs on backend \"{spec.backend}\": remove "
                               f"the [{other}] table")
    # Counted before each name is looked up, which takes long for many.
    runs = sum(len(g.variants) * len(g.systems) * len(g.workloads) for g in spec.groups()) \
        * spec.repeats
    if runs > MAX_RUNS:
        raise HotlineError(f"{path}: asks for {runs:,} runs (variants x systems x workloads x "
                           f"repeats, over every group); at most {MAX_RUNS:,}: split it into "
                           "several experiments")
    _check_group(path, spec, "", Group(variants=spec.variants, systems=spec.systems,
                                       workloads=spec.workloads))
    for i, group in enumerate(spec.also):
        _check_group(path, spec, f"also.{i}.", group)
    return spec
