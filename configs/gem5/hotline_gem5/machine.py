"""The board both phases build alike: gem5's X86Board with hotline's
kernel, disk image, scratch disks, command line, CPU count and memory
(run_params.Machine).
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
from m5.objects import CowDiskImage, IdeDisk, RawDiskImage, X86IntelMPIOIntAssignment

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


def ide_disk(index: int, path: str):
    """Disk `index` of the IDE controller, made as X86Board makes its root
    disk: the image read-only under a copy-on-write layer, which holds what
    the guest writes (and which a checkpoint saves).  The controller puts
    disk `index` on channel index // 2 as its master (device0) or slave
    (device1)."""
    disk = IdeDisk(driveID=f"device{index % 2}")
    disk.image = CowDiskImage(child=RawDiskImage(read_only=True), read_only=False)
    disk.image.child.image_file = path
    return disk


def with_more(parent, vector: str, more: list) -> None:
    """parent's vector of SimObjects with `more` after its items.  gem5
    adopts a vector as a child only if none of its items has a parent, so
    the items are released first and the whole vector adopted again (the
    new items would be orphans otherwise)."""
    items = list(getattr(parent, vector))
    parent.clear_child(vector)
    setattr(parent, vector, items + more)


def isa_interrupt(io_apic_id: int, irq: int) -> list:
    """The MP table's entries routing an ISA interrupt through the 8259s
    and to the I/O APIC's pin of the same number, as X86Board routes IRQs
    3-14 (x86_board.py)."""
    return [X86IntelMPIOIntAssignment(interrupt_type=kind, polarity="ConformPolarity",
                                      trigger="ConformTrigger", source_bus_id=1,
                                      source_bus_irq=irq, dest_io_apic_id=io_apic_id,
                                      dest_io_apic_intin=pin)
            for kind, pin in (("ExtInt", 0), ("INT", irq))]


# The IDE controller's secondary channel (disks 2 and 3) interrupts on ISA
# IRQ 15 (SouthBridge.py), which X86Board's MP table leaves out: the guest's
# driver would time out on every command there.
SECONDARY_IDE_IRQ = 15


class Board(X86Board):
    """X86Board with the workload's scratch disks after its root disk (the
    root disk is made as X86Board makes it), and hooks that run once gem5
    has connected its memory, caches and cores (after_connect: each is
    called with the board)."""

    def __init__(self, *, scratch_disks: list[str], after_connect=(), **kwargs):
        super().__init__(**kwargs)
        self._scratch_disks = scratch_disks
        self._after_connect = list(after_connect)
        if len(scratch_disks) >= 2:
            with_more(self.workload.intel_mp_table, "base_entries",
                      isa_interrupt(self.pc.south_bridge.io_apic.apic_id, SECONDARY_IDE_IRQ))

    def _pre_instantiate(self):
        super()._pre_instantiate()
        for hook in self._after_connect:
            hook(self)

    def _add_disk_to_board(self, disk_image):
        paths = [disk_image.get_local_path(), *self._scratch_disks]
        self.pc.south_bridge.ide.disks = [ide_disk(i, path) for i, path in enumerate(paths)]


def board(machine: Machine, *, cpu: str, cache_hierarchy, checkpoint: str | None = None,
          core: Core | None = None, processor=None, after_connect=()):
    """The X86Board running hotline's workload on `cpu` cores (O3 cores
    shaped as `core` says, if given), or on `processor` if given (a sampled
    run's); restored from `checkpoint` if given; after_connect as Board's."""
    if processor is None:
        processor = SimpleProcessor(cpu_type=CPU_TYPES[cpu], num_cores=machine.cpus,
                                    isa=ISA.X86)
        if core is not None and cpu == "o3":
            shape(processor.get_cores(), core)
    x86 = Board(clk_freq=machine.clock, processor=processor, memory=memory(machine),
                cache_hierarchy=cache_hierarchy, scratch_disks=machine.scratch_disks,
                after_connect=after_connect)
    x86.set_kernel_disk_workload(
        kernel=KernelResource(local_path=machine.vmlinux),
        disk_image=DiskImageResource(local_path=machine.disk_image),
        kernel_args=machine.kernel_args,
        checkpoint=Path(checkpoint) if checkpoint else None)
    return x86
