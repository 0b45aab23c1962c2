"""A sampled measuring run's processor (SMARTS; measure_exit_handlers.Sampler
switches it): two sets of cores, the atomic ones under the boot's names
("cores", restored from the checkpoint) and O3 ones ("o3cores", which gem5
restores nothing into and which take over from the atomic ones at each
window).  Not the boot's (machine.py is): a change here makes no
checkpoint stale."""

from __future__ import annotations

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.boards.mem_mode import MemMode
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_core import SimpleCore
from gem5.components.processors.switchable_processor import SwitchableProcessor
from gem5.isas import ISA

from hotline_gem5.machine import shape
from hotline_gem5.run_params import Core


class SampledProcessor(SwitchableProcessor):
    """Atomic cores ("cores", as the boot named its cores) that start, and O3
    cores ("o3cores") that take over for each sampled window."""

    def __init__(self, num_cores: int, core: Core | None) -> None:
        cores = {name: [SimpleCore(cpu_type=kind, core_id=i, isa=ISA.X86)
                        for i in range(num_cores)]
                 for name, kind in (("cores", CPUTypes.ATOMIC), ("o3cores", CPUTypes.O3))}
        if core is not None:
            shape(cores["o3cores"], core)
        # SMARTS's functional warming of the branch predictors: each atomic
        # core predicts and trains through its O3 twin's predictor, so a
        # window starts with the history the atomic stretch left (alone, the
        # O3 predictors learnt only in the windows, and the windows
        # mispredicted 6% more a micro-op than the exact run: docs/gem5.md).
        for atomic, o3 in zip(cores["cores"], cores["o3cores"]):
            atomic.get_simobject().branchPred = o3.get_simobject().branchPred
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
