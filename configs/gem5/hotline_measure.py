"""Measure many: a checkpoint saved by hotline_boot.py at the workload's
first region of interest, restored into the measuring CPU (timing or O3,
or atomic with O3 windows when sampled) with the system spec's caches, run
to the guest's end.

    gem5.opt --outdir=OUT configs/gem5/hotline_measure.py --params MEASURE.json

MEASURE.json is written by hotline (configs/gem5/hotline_gem5/run_params.py,
MeasureParams).  Classic private L1I/L1D/L2 caches and an optional shared
L3, with hotline's miss profile of every L1D and L2, or Ruby MESI_Two_Level
without it.  Stats are reset at each region's start and dumped at its end;
the init's m5 exit ends the run.  Outputs in OUT: stats.txt,
board.pc.com_1.device (the guest console from the checkpoint on), the
roi_file (region ticks) and, in a gem5 built with hotline's extension
(configs/gem5/extras), the miss profile of each region and, with O3, each
core's cycle profile of each region, or of each sampled window.  A gem5
built without the extension runs with gem5's own statistics only and says
so in one line (run_params.no_extension).  Written for gem5 v24.0.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hotline_gem5.preflight import check_build, check_files, fail, load_params  # noqa: E402
from hotline_gem5.run_params import (  # noqa: E402
    NO_EXTENSION_FILE, RETIRE_CORES, MeasureParams, RubyCaches, build_extension, no_extension,
)

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--params", required=True, help="the run's parameters (JSON from hotline)")
params = load_params(MeasureParams, parser.parse_args().params)
ruby = isinstance(params.caches, RubyCaches)
check_build(ruby_protocol_needed="mesi_two_level" if ruby else None)
check_files(params.machine)
if not os.path.isfile(os.path.join(params.checkpoint_dir, "m5.cpt")):
    fail(f"no checkpoint in {params.checkpoint_dir} (m5.cpt missing)")
# hotline's gem5 extension, which this checkout's gem5 should be built with.
EXTRAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extras")

import m5  # noqa: E402

from gem5.simulate.simulator import Simulator  # noqa: E402

from hotline_gem5 import machine  # noqa: E402
from hotline_gem5.measure_exit_handlers import RoiRecorder, Sampler  # noqa: E402
from hotline_gem5.probes import Probes, extension_built  # noqa: E402
from hotline_gem5.sampled_processor import SampledProcessor  # noqa: E402

caches = params.caches
probes = None
if ruby:
    from gem5.components.cachehierarchies.ruby.mesi_two_level_cache_hierarchy import (
        MESITwoLevelCacheHierarchy,
    )
    cache_hierarchy = MESITwoLevelCacheHierarchy(
        l1i_size=caches.l1i_size, l1i_assoc=caches.l1i_assoc,
        l1d_size=caches.l1d_size, l1d_assoc=caches.l1d_assoc,
        l2_size=caches.l2_size, l2_assoc=caches.l2_assoc, num_l2_banks=caches.num_l2_banks)
else:
    from hotline_gem5.spec_cache_hierarchy import SpecCacheHierarchy
    if params.sampling and not extension_built("HotlineCycleProfile"):
        fail("sampled simulation measures its windows with the cycle profile, which this "
             f"gem5 lacks (HotlineCycleProfile): {build_extension(EXTRAS)}")
    for sim_object, how in (("HotlineRetireCount", "counts its micro-ops"),
                            ("HotlineTranslationCarry", "carries the TLBs across its switches")):
        if params.sampling and not extension_built(sim_object):
            fail(f"sampled simulation {how} with {sim_object}, which this gem5's extension "
                 f"predates: {build_extension(EXTRAS)}")
    # What the extension measures, by the object that measures it.
    wanted = {"HotlineCycleProfile": "cycle_profile", "HotlineMissProfile": "miss_profile"}
    missing = [name for name, field in wanted.items()
               if getattr(params, field) and not extension_built(name)]
    if missing:
        # One line, and the run goes on: gem5's own statistics need no
        # extension (the host reads the line from its file and says it
        # again).
        line = no_extension(missing, EXTRAS)
        print(f"hotline-gem5: {line}", flush=True)
        with open(os.path.join(m5.options.outdir, NO_EXTENSION_FILE), "w") as said:
            said.write(line + "\n")
        params = dataclasses.replace(params, **{wanted[name]: None for name in missing})
    as_dict = lambda c: None if c is None else dataclasses.asdict(c)  # noqa: E731
    cache_hierarchy = SpecCacheHierarchy(
        l1i=as_dict(caches.l1i), l1d=as_dict(caches.l1d), l2=as_dict(caches.l2),
        l3=as_dict(caches.l3))
    probes = Probes(
        cycle_profile=bool(params.cycle_profile or params.sampling),
        sampled=params.sampling is not None,
        miss_profile=None if params.miss_profile is None else {
            k: v for k, v in dataclasses.asdict(params.miss_profile).items() if k != "path"})

board = machine.board(params.machine, cpu=params.roi_cpu, cache_hierarchy=cache_hierarchy,
                      checkpoint=params.checkpoint_dir, core=params.core,
                      processor=None if params.sampling is None
                      else SampledProcessor(params.machine.cpus, params.core),
                      after_connect=[probes.attach] if probes else [])
board.cache_line_size = caches.line_bytes
# gem5's O3 fetch buffer (64 bytes unless set) may not be larger than a
# line, so it holds one line, as it does on 64-byte lines: the seeds'
# 32-byte lines would stop gem5 otherwise.
o3_cores = board.get_processor().o3_cores() if params.sampling is not None \
    else board.get_processor().get_cores() if params.roi_cpu == "o3" else []
for core in o3_cores:
    core.get_simobject().fetchBufferSize = caches.line_bytes
if params.perturbation is not None:
    # A repeat's jitter (run_params.Perturbation); its seed is set when the
    # region opens (RoiRecorder), after the restore.
    for controller in board.get_memory().get_memory_controllers():
        controller.latency_var = params.perturbation.latency_var


def cycle_profiles(path: str) -> list:
    """Each core's cycle profile and where it writes its table (path with
    {cpu} filled in)."""
    return [(profile, os.path.join(m5.options.outdir, path.replace("{cpu}", str(cpu))))
            for cpu, profile in enumerate(probes.cycle_profiles if probes else [])]


def retire_counts(path: str) -> list:
    """A sampled run's retire counts, the atomic cores' then the O3 cores'
    (RETIRE_CORES' order), and where each writes its table."""
    counts = probes.retire_counts
    n = len(counts) // len(RETIRE_CORES)
    return [(count, os.path.join(m5.options.outdir, path.format(
                region="{region}", cpu=i % n, core=RETIRE_CORES[i // n])))
            for i, count in enumerate(counts)]


def profiles() -> list:
    """The extension's objects that measure whole regions, and where each
    writes a region's table."""
    found = cycle_profiles(params.cycle_profile) if params.cycle_profile else []
    if params.sampling is not None:
        found += retire_counts(params.sampling.retire_path)
    if probes and probes.miss_profile is not None:
        found.append((probes.miss_profile,
                      os.path.join(m5.options.outdir, params.miss_profile.path)))
    return found


sampler = None
if params.sampling is not None:
    s = params.sampling
    sampler = Sampler(processor=board.get_processor(),
                      carries=lambda: probes.translation_carries,
                      profiles=lambda: cycle_profiles(s.path),
                      interval=s.interval_cycles, warmup=s.warmup_micro_ops,
                      measure=s.measure_micro_ops, cap=s.cap_cycles,
                      clock_hz=float(params.machine.clock.removesuffix("GHz")) * 1e9)
roi = RoiRecorder(path=os.path.join(m5.options.outdir, params.roi_file),
                  profiles=profiles, sampler=sampler,
                  random_seed=params.perturbation.seed if params.perturbation else None)
simulator = Simulator(board=board, on_exit_event=roi.handlers())
roi.attach(simulator)
simulator.run()
print(f"hotline-gem5: exit at tick {simulator.get_current_tick()}: "
      f"{simulator.get_last_exit_event_cause()}")
