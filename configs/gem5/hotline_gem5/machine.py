"""The board both phases build alike: gem5's X86Board with hotline's
kernel, disk image, command line, CPU count and memory (run_params.Machine).
A checkpoint restores only into a board whose objects have the names of the
one that saved it, so the phases differ only in what a checkpoint does not
hold: the CPUs' model and the caches.  A sampled measuring run has two sets
of cores: the atomic ones under the boot's names ("cores", restored from
the checkpoint) and O3 ones ("o3cores", which gem5 restores nothing into
and which take over from the atomic ones at each window)."""

from __future__ import annotations

from pathlib import Path

from gem5.components.boards.x86_board import X86Board
from gem5.components.memory.simple import SingleChannelSimpleMemory
from gem5.components.memory.single_channel import SingleChannelDDR4_2400
from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.boards.mem_mode import MemMode
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_core import SimpleCore
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.components.processors.switchable_processor import SwitchableProcessor
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


class SampledProcessor(SwitchableProcessor):
    """Atomic cores ("cores", as the boot named its cores) that start, and O3
    cores ("o3cores") that take over for each sampled window."""

    def __init__(self, num_cores: int, core: Core | None) -> None:
        cores = {name: [SimpleCore(cpu_type=kind, core_id=i, isa=ISA.X86)
                        for i in range(num_cores)]
                 for name, kind in (("cores", CPUTypes.ATOMIC), ("o3cores", CPUTypes.O3))}
        if core is not None:
            shape(cores["o3cores"], core)
        super().__init__(switchable_cores=cores, starting_cores="cores")
        self._o3_cores = cores["o3cores"]
        self._on_o3 = False

    def incorporate_processor(self, board: AbstractBoard) -> None:
        super().incorporate_processor(board)
        # Atomic accesses through the classic caches: they stay warm.
        board.set_mem_mode(MemMode.ATOMIC)

    def o3_cores(self) -> list:
        return self._o3_cores

    def on_o3(self) -> bool:
        return self._on_o3

    def switch(self) -> None:
        """To the O3 cores, or back to the atomic ones."""
        self.switch_to_processor("cores" if self._on_o3 else "o3cores")
        self._on_o3 = not self._on_o3


def board(machine: Machine, *, cpu: str, cache_hierarchy, checkpoint: str | None = None,
          core: Core | None = None, sampled: bool = False):
    """The X86Board running hotline's workload on `cpu` cores (O3 cores
    shaped as `core` says, if given), or, sampled, on a SampledProcessor;
    restored from `checkpoint` if given."""
    if sampled:
        processor = SampledProcessor(machine.cpus, core)
    else:
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
