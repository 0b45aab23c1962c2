"""What the gem5 configuration script (configs/gem5/hotline_x86.py) is told:
a system spec and a run's inputs translated into gem5's terms, written as one
JSON file that the script reads.  gem5 runs its own Python, without hotline's
packages, so this translation happens here, where it can be tested.

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
- Ruby MESI_Two_Level has private L1s and one shared, banked L2: it gets the
  spec's L1s and, as its L2, the spec's L3 if there is one, else the private
  L2s' total size; one bank per core.  Ruby's latencies are the stdlib's own.
"""

from pathlib import Path

from hotline.errors import HotlineError
from hotline.specs import Cache, SystemSpec

# Outputs the script writes into gem5's output directory (--outdir).
ROI_FILE = "hotline-roi.json"
LSQ_TRACE = "lsq.trace.gz"
TRACE_DIR = "traces"
# Monitor names: one per core and boundary; the trace file is NAME.req.trc.gz
# and NAME.resp.trc.gz (requests and responses seen by the same monitor).
L1D_MONITOR = "l1d_to_l2_cpu{cpu}"
L2_MONITOR = "l2_to_mem_cpu{cpu}"


def _size(kib: int) -> str:
    return f"{kib}KiB" if kib % 1024 else f"{kib // 1024}MiB"


def _cache(cache: Cache, above_cycles: int, *, mshrs: int, targets: int) -> dict:
    step = max(1, cache.latency_cycles - above_cycles)
    return {"size": _size(cache.size_kib), "assoc": cache.assoc,
            "tag_latency": step, "data_latency": step, "response_latency": 1,
            "mshrs": mshrs, "tgts_per_mshr": targets}


def classic_caches(system: SystemSpec) -> dict:
    c = system.caches
    exclusive = c.inclusion == "exclusive"
    l1 = max(c.l1i.latency_cycles, c.l1d.latency_cycles)
    caches = {
        "kind": "classic",
        "line_bytes": c.line_bytes,
        "l1i": _cache(c.l1i, 0, mshrs=4, targets=20),
        "l1d": _cache(c.l1d, 0, mshrs=16, targets=20),
        "l2": _cache(c.l2, l1, mshrs=20, targets=12),
        "l3": None,
    }
    caches["l2"]["clusivity"] = "mostly_incl"
    caches["l2"]["writeback_clean"] = exclusive and c.l3 is not None
    if c.l3 is not None:
        caches["l3"] = _cache(c.l3, c.l2.latency_cycles, mshrs=32, targets=16)
        caches["l3"]["clusivity"] = "mostly_excl" if exclusive else "mostly_incl"
        caches["l3"]["writeback_clean"] = False
    return caches


def ruby_caches(system: SystemSpec) -> dict:
    c = system.caches
    shared = c.l3 if c.l3 is not None else Cache(
        size_kib=c.l2.size_kib * system.cpus, assoc=c.l2.assoc,
        latency_cycles=c.l2.latency_cycles)
    return {"kind": "ruby-mesi-two-level", "line_bytes": c.line_bytes,
            "l1i_size": _size(c.l1i.size_kib), "l1i_assoc": c.l1i.assoc,
            "l1d_size": _size(c.l1d.size_kib), "l1d_assoc": c.l1d.assoc,
            "l2_size": _size(shared.size_kib), "l2_assoc": shared.assoc,
            "num_l2_banks": system.cpus}


def memory(system: SystemSpec) -> dict:
    settings = system.gem5
    if settings.memory == "ddr4-2400":
        return {"kind": "ddr4-2400", "size": f"{system.memory_mib}MiB"}
    latency_ns = system.latency.memory_cycles / settings.clock_ghz
    return {"kind": "simple", "size": f"{system.memory_mib}MiB",
            "latency": f"{latency_ns:g}ns", "latency_var": "0ns", "bandwidth": "32GiB/s"}


def config_params(system: SystemSpec, *, vmlinux: Path, disk_image: Path,
                  kernel_args: str) -> dict:
    """The parameters of one run, as configs/gem5/hotline_x86.py reads them."""
    settings = system.gem5
    if system.memory_mib > 3072:
        raise HotlineError(f"gem5's X86Board takes at most 3072 MiB of memory "
                           f"(the I/O hole); the system spec asks for {system.memory_mib}")
    if settings.boot_cpu == "kvm":
        # Under KVM the guest executes 0F 04 itself and takes an invalid-opcode
        # fault; gem5 sees m5ops from a KVM guest only as accesses to the m5op
        # address range, which hotline-roi does not use.
        raise HotlineError("gem5 boot_cpu \"kvm\" needs address-based m5ops, and hotline-roi "
                           "marks regions with the 0F 04 instruction: use boot_cpu = \"atomic\"")
    classic = settings.caches == "classic"
    return {
        "vmlinux": str(vmlinux),
        "disk_image": str(disk_image),
        # The project's command line with gem5's usual lpj (skips the delay
        # loop calibration, which is slow and pointless in simulation).
        "kernel_args": kernel_args.split() + ["lpj=7999923"],
        "cpus": system.cpus,
        "clock": f"{settings.clock_ghz:g}GHz",
        "boot_cpu": settings.boot_cpu,
        "roi_cpu": settings.roi_cpu,
        "caches": classic_caches(system) if classic else ruby_caches(system),
        "memory": memory(system),
        # Packet traces need the classic hierarchy's CommMonitors; the LSQ
        # trace needs the O3 CPU.
        "packet_traces": classic,
        "lsq_trace": settings.roi_cpu == "o3",
        "outputs": {"roi": ROI_FILE, "trace_dir": TRACE_DIR,
                    "l1d_monitor": L1D_MONITOR, "l2_monitor": L2_MONITOR},
    }
