"""Measure many: a checkpoint saved by hotline_boot.py at the workload's
first region of interest, restored into the measuring CPU (timing or O3)
with the system spec's caches and traced monitors, run to the guest's end.

    gem5.opt --outdir=OUT [--debug-file=lsq.trace] \\
        configs/gem5/hotline_measure.py --params MEASURE.json

MEASURE.json is written by hotline (configs/gem5/hotline_gem5/run_params.py,
MeasureParams).  Classic private L1I/L1D/L2 caches and an optional shared
L3 with traced CommMonitors at the core, below each L1D and below each L2,
or Ruby MESI_Two_Level without traces.  Stats are reset at each region's
start and dumped at its end; the init's m5 exit ends the run.  Outputs in
OUT: stats.txt, board.pc.com_1.device (the guest console from the
checkpoint on), the roi_file (region ticks), the traces and, with O3, the
LSQUnit debug trace inside the regions (--debug-file) and, with O3 and
classic caches in a gem5 built with hotline's extension (configs/gem5/
extras), each core's cycle profile of each region.  Written for gem5
v24.0.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hotline_gem5.preflight import check_build, check_files, fail, load_params  # noqa: E402
from hotline_gem5.run_params import NO_EXTENSION, MeasureParams, RubyCaches  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--params", required=True, help="the run's parameters (JSON from hotline)")
params = load_params(MeasureParams, parser.parse_args().params)
ruby = isinstance(params.caches, RubyCaches)
check_build(ruby_protocol_needed="mesi_two_level" if ruby else None)
check_files(params.machine)
if not os.path.isfile(os.path.join(params.checkpoint_dir, "m5.cpt")):
    fail(f"no checkpoint in {params.checkpoint_dir} (m5.cpt missing)")

import m5  # noqa: E402

from gem5.simulate.simulator import Simulator  # noqa: E402

from hotline_gem5 import machine  # noqa: E402
from hotline_gem5.roi_exit_handlers import RoiRecorder  # noqa: E402

caches = params.caches
if ruby:
    from gem5.components.cachehierarchies.ruby.mesi_two_level_cache_hierarchy import (
        MESITwoLevelCacheHierarchy,
    )
    cache_hierarchy = MESITwoLevelCacheHierarchy(
        l1i_size=caches.l1i_size, l1i_assoc=caches.l1i_assoc,
        l1d_size=caches.l1d_size, l1d_assoc=caches.l1d_assoc,
        l2_size=caches.l2_size, l2_assoc=caches.l2_assoc, num_l2_banks=caches.num_l2_banks)
else:
    from hotline_gem5.monitored_private_l1_private_l2_cache_hierarchy import (
        MonitoredPrivateL1PrivateL2CacheHierarchy, cycle_profile_built,
    )
    if params.cycle_profile and not cycle_profile_built():
        # One line, and the run goes on: its whole-run statistics need no
        # extension (the host says what is missing).
        print(f"hotline-gem5: {NO_EXTENSION}", flush=True)
        params = dataclasses.replace(params, cycle_profile=None)
    traces = params.traces
    monitors = {}
    if traces is not None:
        os.makedirs(os.path.join(m5.options.outdir, traces.directory), exist_ok=True)
        monitors = dict(trace_dir=traces.directory, core_monitor=traces.core_monitor,
                        l1d_monitor=traces.l1d_monitor, l2_monitor=traces.l2_monitor)
    as_dict = lambda c: None if c is None else dataclasses.asdict(c)  # noqa: E731
    cache_hierarchy = MonitoredPrivateL1PrivateL2CacheHierarchy(
        l1i=as_dict(caches.l1i), l1d=as_dict(caches.l1d), l2=as_dict(caches.l2),
        l3=as_dict(caches.l3), cycle_profile=bool(params.cycle_profile), **monitors)

board = machine.board(params.machine, cpu=params.roi_cpu, cache_hierarchy=cache_hierarchy,
                      checkpoint=params.checkpoint_dir, core=params.core)
board.cache_line_size = caches.line_bytes
roi = RoiRecorder(path=os.path.join(m5.options.outdir, params.roi_file),
                  debug_flags=params.lsq_debug_flags,
                  profiles=lambda: getattr(cache_hierarchy, "cycle_profiles", []),
                  profile_path=os.path.join(m5.options.outdir, params.cycle_profile or ""))
simulator = Simulator(board=board, on_exit_event=roi.handlers())
roi.attach(simulator)
simulator.run()
print(f"hotline-gem5: exit at tick {simulator.get_current_tick()}: "
      f"{simulator.get_last_exit_event_cause()}")
