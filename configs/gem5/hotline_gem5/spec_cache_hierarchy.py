"""Classic caches as hotline's system specs describe them: per core a private
L1I, L1D and L2, optionally one shared L3.

It is gem5's PrivateL1PrivateL2CacheHierarchy (its memory bus, ports and
coherent I/O cache are inherited) with the geometry and latencies of the
spec instead of the stdlib's fixed caches, the optional L3, no prefetchers,
and page-table walks through the core's L2 (as on x86, where walks are
cached) instead of straight to memory.

Caches only: what listens to them (hotline's profiles) is attached by the
measuring script (probes.py), to the caches this hierarchy names l1dcaches
and l2caches."""

from __future__ import annotations

from m5.objects import Cache, L2XBar

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.classic.private_l1_private_l2_cache_hierarchy import (
    PrivateL1PrivateL2CacheHierarchy,
)
from gem5.isas import ISA
from gem5.utils.override import overrides


class SpecCacheHierarchy(PrivateL1PrivateL2CacheHierarchy):
    """Each cache is a dict of gem5 Cache parameters (size, assoc,
    tag_latency, data_latency, response_latency, mshrs, tgts_per_mshr,
    clusivity, writeback_clean)."""

    def __init__(self, *, l1i: dict, l1d: dict, l2: dict, l3: dict | None = None) -> None:
        super().__init__(l1d_size=l1d["size"], l1i_size=l1i["size"], l2_size=l2["size"])
        self._l1i, self._l1d, self._l2, self._l3 = l1i, l1d, l2, l3

    def _below_l2(self):
        """The port the L2s send their misses to: the L3's bus, or memory's."""
        if self._l3 is None:
            return self.membus.cpu_side_ports
        self.l3bus = L2XBar()
        self.l3cache = Cache(**self._l3)
        self.l3bus.mem_side_ports = self.l3cache.cpu_side
        self.l3cache.mem_side = self.membus.cpu_side_ports
        return self.l3bus.cpu_side_ports

    @overrides(PrivateL1PrivateL2CacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        # The system port, for the simulator's functional accesses.
        board.connect_system_port(self.membus.cpu_side_ports)
        for _, port in board.get_memory().get_mem_ports():
            self.membus.mem_side_ports = port

        cores = board.get_processor().get_cores()
        n = len(cores)
        self.l1icaches = [Cache(**self._l1i) for _ in range(n)]
        self.l1dcaches = [Cache(**self._l1d) for _ in range(n)]
        self.l2buses = [L2XBar() for _ in range(n)]
        self.l2caches = [Cache(**self._l2) for _ in range(n)]
        below_l2 = self._below_l2()

        for i, cpu in enumerate(cores):
            cpu.connect_icache(self.l1icaches[i].cpu_side)
            cpu.connect_dcache(self.l1dcaches[i].cpu_side)
            self.l1icaches[i].mem_side = self.l2buses[i].cpu_side_ports
            self.l1dcaches[i].mem_side = self.l2buses[i].cpu_side_ports
            self.l2buses[i].mem_side_ports = self.l2caches[i].cpu_side
            self.l2caches[i].mem_side = below_l2
            self._connect_table_walker(i, cpu)
            if board.get_processor().get_isa() == ISA.X86:
                cpu.connect_interrupt(self.membus.mem_side_ports, self.membus.cpu_side_ports)
            else:
                cpu.connect_interrupt()

        if board.has_coherent_io():
            self._setup_io_cache(board)

    @overrides(PrivateL1PrivateL2CacheHierarchy)
    def _connect_table_walker(self, cpu_id: int, cpu) -> None:
        # Through the core's L2 bus: x86 page walks are cached.
        cpu.connect_walker_ports(self.l2buses[cpu_id].cpu_side_ports,
                                 self.l2buses[cpu_id].cpu_side_ports)
