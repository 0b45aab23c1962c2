"""What the gem5 configuration scripts (configs/gem5/hotline_boot.py and
hotline_measure.py) are told: a system spec and a run's inputs translated
into gem5's terms, as the typed parameters of configs/gem5/hotline_gem5/
run_params.py (the one definition both sides check), written as JSON.  gem5
runs its own Python, without hotline's packages, so this translation happens
here, where it can be tested.

Translation choices (the README's gem5 section repeats them):
- Cache latencies: the spec gives each level's load-to-use latency in core
  cycles.  A gem5 classic cache charges max(tag, data) cycles for a lookup
  (parallel tag and data access) at every level on the way down, plus a
  response latency on the way back up; so each level gets tag = data = its
  latency minus the level above's (at least 1) and response = 1, which makes a
  hit at level k cost about the spec's latency_cycles, plus gem5's crossbar
  cycles.
- Inclusion: gem5's classic caches are "mostly inclusive" (no
  back-invalidation) or "mostly exclusive"; an exclusive spec makes the L3
  mostly exclusive and the L2s write back clean lines, anything else is
  mostly inclusive.
- No prefetchers: the QEMU model has none either.
- Memory: "ddr4-2400" is gem5's DDR4 model (the spec's memory_cycles does not
  apply); "simple" is a fixed latency of memory_cycles at the core clock.
- Repeats: a single run runs as the spec says; where the spec asks for
  more than one, every repeat, the first too, adds to every access of the
  fixed-latency memory a delay of up to JITTER, drawn by gem5's generator
  seeded with the repeat's index plus one (Alameldeen and Wood, HPCA 2003:
  small random perturbations show the spread of a multi-threaded
  workload's outcomes that one deterministic run hides), so that the
  repeats are alike and none is the unperturbed run.  gem5's DDR4 model
  has nothing to jitter, so repeats need memory = "simple".
- Ruby MESI_Two_Level has private L1s and one shared, banked L2: it gets the
  spec's L1s and, as its L2, the spec's L3 if there is one, else the private
  L2s' total size; one bank per core.  Ruby's latencies are the stdlib's own.
"""

import importlib.util
import sys
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError
from hotline.simulate.gem5.miss_profile import USER_SPACE_END
from hotline.specs import Cache, SystemSpec


def _load_run_params():
    """configs/gem5/hotline_gem5/run_params.py, the definition the scripts
    inside gem5 import, imported here from the same file."""
    name = "hotline_gem5_run_params"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, paths.CONFIGS / "gem5" / "hotline_gem5" / "run_params.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module      # dataclasses resolve their annotations through it
        spec.loader.exec_module(module)
    return sys.modules[name]


run_params = _load_run_params()

# Outputs the scripts write into gem5's output directory (--outdir).
ROI_FILE = "hotline-roi.json"
CONSOLE = "board.pc.com_1.device"  # the guest's serial console, as the board names it
CYCLE_PROFILE = "cycles/region{region}.cpu{cpu}.csv"   # configs/gem5/extras/cycle_profile.hh
MISS_PROFILE = "misses/region{region}.csv"     # configs/gem5/extras/miss_profile.hh
SAMPLED_PROFILE = "cycles/region{region}.sample{sample}.cpu{cpu}.csv"   # the same, per window
RETIRE_COUNT = "retired/region{region}.cpu{cpu}.{core}.csv"   # extras/retire_count.hh
# gem5's usual lpj: skips the delay-loop calibration, slow and pointless in
# simulation.
LPJ = "lpj=7999923"
MAX_MEMORY_MIB = 3072
# The most a repeat's memory access is delayed beyond the spec's latency:
# about 3% of the Pentium III specs' 120 ns, a few of their bus cycles.
JITTER = "4ns"


def _size(kib: int) -> str:
    return f"{kib}KiB" if kib % 1024 else f"{kib // 1024}MiB"


def _cache(cache: Cache, above_cycles: int, *, mshrs: int, targets: int, **more):
    step = max(1, cache.latency_cycles - above_cycles)
    return run_params.CacheParams(size=_size(cache.size_kib), assoc=cache.assoc,
                                  tag_latency=step, data_latency=step, response_latency=1,
                                  mshrs=mshrs, tgts_per_mshr=targets, **more)


def classic_caches(system: SystemSpec):
    c = system.caches
    exclusive = c.inclusion == "exclusive"
    l1 = max(c.l1i.latency_cycles, c.l1d.latency_cycles)
    l3 = None
    if c.l3 is not None:
        l3 = _cache(c.l3, c.l2.latency_cycles, mshrs=32, targets=16,
                    clusivity="mostly_excl" if exclusive else "mostly_incl")
    return run_params.ClassicCaches(
        kind="classic", line_bytes=c.line_bytes,
        l1i=_cache(c.l1i, 0, mshrs=4, targets=20),
        l1d=_cache(c.l1d, 0, mshrs=16, targets=20),
        l2=_cache(c.l2, l1, mshrs=20, targets=12, clusivity="mostly_incl",
                  writeback_clean=exclusive and c.l3 is not None),
        l3=l3)


def l1d_lines(system: SystemSpec) -> int:
    """The lines of one L1D, for the miss profile's shadow of it, which
    tells its misses' causes: the same L1D as the caches above."""
    return system.caches.l1d.size_kib * 1024 // system.caches.line_bytes


def l2_lines(system: SystemSpec) -> int:
    """The lines of one L2, for the miss profile's shadow of it."""
    return system.caches.l2.size_kib * 1024 // system.caches.line_bytes


def ruby_caches(system: SystemSpec):
    c = system.caches
    shared = c.l3 if c.l3 is not None else Cache(
        size_kib=c.l2.size_kib * system.cpus, assoc=c.l2.assoc,
        latency_cycles=c.l2.latency_cycles)
    return run_params.RubyCaches(
        kind="ruby-mesi-two-level", line_bytes=c.line_bytes,
        l1i_size=_size(c.l1i.size_kib), l1i_assoc=c.l1i.assoc,
        l1d_size=_size(c.l1d.size_kib), l1d_assoc=c.l1d.assoc,
        l2_size=_size(shared.size_kib), l2_assoc=shared.assoc, num_l2_banks=system.cpus)


def memory(system: SystemSpec):
    settings = system.gem5
    if settings.memory == "ddr4-2400":
        return run_params.Memory(kind="ddr4-2400", size=f"{system.memory_mib}MiB")
    latency_ns = system.latency.memory_cycles / settings.clock_ghz
    return run_params.Memory(kind="simple", size=f"{system.memory_mib}MiB",
                             latency=f"{latency_ns:g}ns", latency_var="0ns",
                             bandwidth="32GiB/s")


def check_system(system: SystemSpec) -> None:
    """What gem5 cannot build of a valid system spec, as a one-line error."""
    if system.memory_mib > MAX_MEMORY_MIB:
        raise HotlineError(f"gem5's X86Board takes at most {MAX_MEMORY_MIB} MiB of memory "
                           f"(the I/O hole); the system spec asks for {system.memory_mib}")
    if system.gem5.boot_cpu == "kvm":
        # Under KVM the guest executes 0F 04 itself and takes an invalid-opcode
        # fault; gem5 sees m5ops from a KVM guest only as accesses to the m5op
        # address range, which hotline-roi does not use.
        raise HotlineError("gem5 boot_cpu \"kvm\" needs address-based m5ops, and hotline-roi "
                           "marks regions with the 0F 04 instruction: use boot_cpu = \"atomic\"")


def machine(system: SystemSpec, *, vmlinux: Path, disk_image: Path, kernel_args: str):
    """What the boot and every restore of its checkpoint build alike (the
    scratch disks' paths, which the two differ in, are set by each)."""
    check_system(system)
    return run_params.Machine(
        vmlinux=str(vmlinux), disk_image=str(disk_image),
        kernel_args=kernel_args.split() + [LPJ], cpus=system.cpus,
        clock=f"{system.gem5.clock_ghz:g}GHz", memory=memory(system))


def boot_params(machine, checkpoint_dir: Path):
    return run_params.BootParams(schema=run_params.SCHEMA, machine=machine,
                                 checkpoint_dir=str(checkpoint_dir), roi_file=ROI_FILE)


def perturbation(system: SystemSpec, repeat: int, repeats: int):
    """What varies this repeat of `repeats`: the memory's jitter, seeded
    with the repeat's index plus one; None for an experiment of one run."""
    if repeats == 1:
        return None
    if system.gem5.memory != "simple":
        raise HotlineError(f"repeats on gem5 differ by a jitter of the memory's latency, which "
                           f"only fixed-latency memory takes: give the system memory = "
                           f"\"simple\" (it has \"{system.gem5.memory}\"), or repeats = 1")
    return run_params.Perturbation(seed=repeat + 1, latency_var=JITTER)


def measure_params(system: SystemSpec, machine, checkpoint_dir: Path, repeat: int = 0,
                   repeats: int = 1):
    """The measuring run: the miss profile needs the classic hierarchy; the
    cycle profile, whole or sampled, needs it and the O3 CPU.
    The repeats of an experiment of more than one are perturbed
    (perturbation)."""
    classic = system.gem5.caches == "classic"
    o3 = system.gem5.roi_cpu == "o3"
    sampled = system.gem5.sampling    # O3 and classic caches only (specs.Gem5Settings)
    return run_params.MeasureParams(
        schema=run_params.SCHEMA, machine=machine, checkpoint_dir=str(checkpoint_dir),
        roi_cpu=system.gem5.roi_cpu,
        caches=classic_caches(system) if classic else ruby_caches(system),
        roi_file=ROI_FILE,
        core=run_params.Core(**system.core.model_dump()) if o3 else None,
        cycle_profile=CYCLE_PROFILE if o3 and classic and not sampled else None,
        sampling=run_params.Sampling(
            interval_cycles=sampled.interval_cycles, warmup_micro_ops=sampled.warmup_micro_ops,
            measure_micro_ops=sampled.measure_micro_ops, cap_cycles=sampled.cap_cycles,
            path=SAMPLED_PROFILE,
            retire_path=RETIRE_COUNT) if sampled else None,
        # Not sampled: the caches notify no probe point of an atomic access.
        miss_profile=run_params.MissProfile(
            path=MISS_PROFILE, l1d_lines=l1d_lines(system), l2_lines=l2_lines(system),
            user_space_end=USER_SPACE_END) if classic and not sampled else None,
        perturbation=perturbation(system, repeat, repeats))
