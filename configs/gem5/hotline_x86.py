"""hotline's gem5 configuration: one run of a hotline experiment on gem5's
X86Board, from the parameters hotline writes (src/hotline/gem5/params.py).

    gem5.opt --outdir=OUT [--debug-file=lsq.trace.gz] \\
        configs/gem5/hotline_x86.py --params PARAMS.json

Targets gem5 v24.0 (written against its source, v24.0.0.1; not yet run under
gem5). The machine: N cores that boot on the atomic CPU and switch to the O3
(or timing) CPU at the workload's work_begin m5op; classic private
L1I/L1D/L2 caches and an optional shared L3 from the system spec, with
traced CommMonitors below each L1D and L2 (or Ruby MESI_Two_Level, without
traces); the spec's memory size; hotline's vmlinux and raw ext4 disk image
as local resources; hotline's kernel command line (hotline.markers=m5 makes
hotline-roi issue m5ops). Stats are reset at work_begin and dumped at
work_end; the init's m5 exit ends the run. Outputs in OUT: stats.txt,
board.pc.com_1.device (the guest console), hotline-roi.json (region ticks),
traces/*.trc.gz and, with O3, the LSQUnit debug trace inside the regions
(--debug-file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import m5  # noqa: E402

from hotline_gem5.preflight import check_build, fail  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--params", required=True, help="the run's parameters (JSON from hotline)")
args = parser.parse_args()
with open(args.params) as f:
    params = json.load(f)

# Fail fast on a gem5 build that cannot run this.
ruby = params["caches"]["kind"] == "ruby-mesi-two-level"
check_build(ruby_protocol_needed="mesi_two_level" if ruby else None)
for path in (params["vmlinux"], params["disk_image"]):
    if not os.path.isfile(path):
        fail(f"no such file: {path}")

from gem5.components.boards.x86_board import X86Board  # noqa: E402
from gem5.components.memory.simple import SingleChannelSimpleMemory  # noqa: E402
from gem5.components.memory.single_channel import SingleChannelDDR4_2400  # noqa: E402
from gem5.components.processors.cpu_types import CPUTypes  # noqa: E402
from gem5.components.processors.simple_switchable_processor import (  # noqa: E402
    SimpleSwitchableProcessor,
)
from gem5.isas import ISA  # noqa: E402
from gem5.resources.resource import DiskImageResource, KernelResource  # noqa: E402
from gem5.simulate.simulator import Simulator  # noqa: E402

from hotline_gem5.monitored_private_l1_private_l2_cache_hierarchy import (  # noqa: E402
    MonitoredPrivateL1PrivateL2CacheHierarchy,
)
from hotline_gem5.roi_exit_handlers import RoiRecorder  # noqa: E402

outputs = params["outputs"]
caches = params["caches"]

# Caches: classic with traced monitors, or Ruby MESI_Two_Level.
if ruby:
    from gem5.components.cachehierarchies.ruby.mesi_two_level_cache_hierarchy import (
        MESITwoLevelCacheHierarchy,
    )
    cache_hierarchy = MESITwoLevelCacheHierarchy(
        l1i_size=caches["l1i_size"], l1i_assoc=caches["l1i_assoc"],
        l1d_size=caches["l1d_size"], l1d_assoc=caches["l1d_assoc"],
        l2_size=caches["l2_size"], l2_assoc=caches["l2_assoc"],
        num_l2_banks=caches["num_l2_banks"])
else:
    trace_dir = None
    if params["packet_traces"]:
        trace_dir = outputs["trace_dir"]
        os.makedirs(os.path.join(m5.options.outdir, trace_dir), exist_ok=True)
    cache_hierarchy = MonitoredPrivateL1PrivateL2CacheHierarchy(
        l1i=caches["l1i"], l1d=caches["l1d"], l2=caches["l2"], l3=caches["l3"],
        trace_dir=trace_dir, l1d_monitor=outputs["l1d_monitor"],
        l2_monitor=outputs["l2_monitor"])

# Memory: gem5's DDR4 model, or a fixed latency.
memory_params = params["memory"]
if memory_params["kind"] == "ddr4-2400":
    memory = SingleChannelDDR4_2400(size=memory_params["size"])
else:
    memory = SingleChannelSimpleMemory(
        latency=memory_params["latency"], latency_var=memory_params["latency_var"],
        bandwidth=memory_params["bandwidth"], size=memory_params["size"])

# Processor: boot on a fast CPU, switch to the detailed one for the regions.
cpu_types = {"atomic": CPUTypes.ATOMIC, "kvm": CPUTypes.KVM, "o3": CPUTypes.O3,
             "timing": CPUTypes.TIMING}
processor = SimpleSwitchableProcessor(
    starting_core_type=cpu_types[params["boot_cpu"]],
    switch_core_type=cpu_types[params["roi_cpu"]],
    num_cores=params["cpus"], isa=ISA.X86)

# Board.
board = X86Board(clk_freq=params["clock"], processor=processor, memory=memory,
                 cache_hierarchy=cache_hierarchy)
board.cache_line_size = caches["line_bytes"]

# Workload: hotline's kernel and disk image, hotline's command line.
board.set_kernel_disk_workload(
    kernel=KernelResource(local_path=params["vmlinux"]),
    disk_image=DiskImageResource(local_path=params["disk_image"]),
    kernel_args=params["kernel_args"])

# Run: regions of interest switch CPUs, reset and dump stats, trace the LSQ.
roi = RoiRecorder(processor=processor,
                  path=os.path.join(m5.options.outdir, outputs["roi"]),
                  debug_flags=("LSQUnit",) if params["lsq_trace"] else ())
simulator = Simulator(board=board, on_exit_event=roi.handlers())
simulator.run()
print(f"hotline-gem5: exit at tick {simulator.get_current_tick()}: "
      f"{simulator.get_last_exit_event_cause()}")
