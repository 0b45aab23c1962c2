"""The board both phases build alike: gem5's X86Board with hotline's
kernel, disk image, command line, CPU count and memory (run_params.Machine).
A checkpoint restores only into a board whose objects have the names of the
one that saved it, so the phases differ only in what a checkpoint does not
hold: the CPUs' model and the caches.  A sampled measuring run brings a
processor of its own (sampled_processor.py, which is not the boot's and so
not in the checkpoints' key)."""

from __future__ import annotations

from pathlib import Path

from gem5.components.boards.x86_board import X86Board
from gem5.components.memory.simple import SingleChannelSimpleMemory
from gem5.components.memory.single_channel import SingleChannelDDR4_2400
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.isas import ISA
from gem5.resources.resource import DiskImageResource, KernelResource

from hotline_gem5.run_params import Core, Machine

CPU_TYPES = {"atomic": CPUTypes.ATOMIC, "timing": CPUTypes.TIMING, "o3": CPUTypes.O3}


def memory(machine: Machine):
    """gem5's DDR4 model, or a fixed latency."""
    m = machine.memory
    if m.kind == "ddr4-2400":
        return SingleChannelDDR4_2400(size=m.size)
    return SingleChannelSimpleMemory(latency=m.latency, latency_var=m.latency_var,
                                     bandwidth=m.bandwidth, size=m.size)


def shape(cores: list, core: Core) -> None:
    """O3 cores of the spec's widths and queue sizes."""
    for each in cores:
        o3 = each.get_simobject()
        for width in ("fetchWidth", "decodeWidth", "renameWidth", "dispatchWidth",
                      "issueWidth", "wbWidth", "commitWidth", "squashWidth"):
            setattr(o3, width, core.width)
        o3.numROBEntries = core.rob_entries
        o3.numIQEntries = core.iq_entries
        o3.LQEntries = core.lq_entries
        o3.SQEntries = core.sq_entries


def board(machine: Machine, *, cpu: str, cache_hierarchy, checkpoint: str | None = None,
          core: Core | None = None, processor=None):
    """The X86Board running hotline's workload on `cpu` cores (O3 cores
    shaped as `core` says, if given), or on `processor` if given (a sampled
    run's); restored from `checkpoint` if given."""
    if processor is None:
        processor = SimpleProcessor(cpu_type=CPU_TYPES[cpu], num_cores=machine.cpus,
                                    isa=ISA.X86)
        if core is not None and cpu == "o3":
            shape(processor.get_cores(), core)
    x86 = X86Board(clk_freq=machine.clock, processor=processor, memory=memory(machine),
                   cache_hierarchy=cache_hierarchy)
    x86.set_kernel_disk_workload(
        kernel=KernelResource(local_path=machine.vmlinux),
        disk_image=DiskImageResource(local_path=machine.disk_image),
        kernel_args=machine.kernel_args,
        checkpoint=Path(checkpoint) if checkpoint else None)
    return x86
