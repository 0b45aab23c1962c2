"""Classic caches as hotline's system specs describe them: per core a private
L1I, L1D and L2, optionally one shared L3, with CommMonitors that trace
(with PCs) every request and response crossing two boundaries of each core:
L1D -> L2 (the L1D's misses, upgrades and write-backs) and L2 -> next level
(the L2's).  Shaped like the stdlib's PrivateL1PrivateL2CacheHierarchy; the
differences are the sizes, associativities and latencies from the spec, the
optional L3, the monitors, no prefetchers, and page-table walks going through
the core's L2 (as on x86, where walks are cached) instead of straight to
memory."""

from __future__ import annotations

import os

from m5.objects import BadAddr, Cache, CommMonitor, L2XBar, MemTraceProbe, Port, SystemXBar

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.classic.abstract_classic_cache_hierarchy import (
    AbstractClassicCacheHierarchy,
)
from gem5.isas import ISA
from gem5.utils.override import overrides


def traced_monitor(trace_dir: str, name: str) -> CommMonitor:
    """A CommMonitor with one MemTraceProbe for the requests that cross it and
    one for the responses, each to its own gzip'd trace in trace_dir."""
    monitor = CommMonitor()
    monitor.request_trace = MemTraceProbe(
        probe_name="PktRequest", with_pc=True, trace_compress=True,
        trace_file=os.path.join(trace_dir, f"{name}.req.trc.gz"))
    monitor.response_trace = MemTraceProbe(
        probe_name="PktResponse", with_pc=True, trace_compress=True,
        trace_file=os.path.join(trace_dir, f"{name}.resp.trc.gz"))
    return monitor


class MonitoredPrivateL1PrivateL2CacheHierarchy(AbstractClassicCacheHierarchy):
    """Private L1I/L1D/L2 per core, an optional shared L3, and (when given a
    trace directory) traced monitors below each L1D and each L2.

    Each cache is given as a dict of gem5 Cache parameters (size, assoc,
    tag_latency, data_latency, response_latency, mshrs, tgts_per_mshr and
    optionally clusivity, writeback_clean)."""

    def __init__(self, *, l1i: dict, l1d: dict, l2: dict, l3: dict | None = None,
                 trace_dir: str | None = None, l1d_monitor: str = "l1d_to_l2_cpu{cpu}",
                 l2_monitor: str = "l2_to_mem_cpu{cpu}") -> None:
        AbstractClassicCacheHierarchy.__init__(self=self)
        self._l1i, self._l1d, self._l2, self._l3 = l1i, l1d, l2, l3
        self._trace_dir = trace_dir
        self._l1d_monitor, self._l2_monitor = l1d_monitor, l2_monitor
        self.membus = SystemXBar(width=64)
        self.membus.badaddr_responder = BadAddr()
        self.membus.default = self.membus.badaddr_responder.pio

    def has_traces(self) -> bool:
        return self._trace_dir is not None

    @overrides(AbstractClassicCacheHierarchy)
    def get_mem_side_port(self) -> Port:
        return self.membus.mem_side_ports

    @overrides(AbstractClassicCacheHierarchy)
    def get_cpu_side_port(self) -> Port:
        return self.membus.cpu_side_ports

    def _below_l2(self):
        """The port the L2s send their misses to: the L3's bus, or memory's."""
        if self._l3 is None:
            return self.membus.cpu_side_ports
        self.l3bus = L2XBar()
        self.l3cache = Cache(**self._l3)
        self.l3bus.mem_side_ports = self.l3cache.cpu_side
        self.l3cache.mem_side = self.membus.cpu_side_ports
        return self.l3bus.cpu_side_ports

    @overrides(AbstractClassicCacheHierarchy)
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
        if self.has_traces():
            self.l1d_monitors = [traced_monitor(self._trace_dir, self._l1d_monitor.format(cpu=i))
                                 for i in range(n)]
            self.l2_monitors = [traced_monitor(self._trace_dir, self._l2_monitor.format(cpu=i))
                                for i in range(n)]

        for i, cpu in enumerate(cores):
            cpu.connect_icache(self.l1icaches[i].cpu_side)
            cpu.connect_dcache(self.l1dcaches[i].cpu_side)
            self.l1icaches[i].mem_side = self.l2buses[i].cpu_side_ports
            # L1D -> (monitor) -> the core's L2 bus.
            if self.has_traces():
                self.l1dcaches[i].mem_side = self.l1d_monitors[i].cpu_side_port
                self.l1d_monitors[i].mem_side_port = self.l2buses[i].cpu_side_ports
            else:
                self.l1dcaches[i].mem_side = self.l2buses[i].cpu_side_ports
            self.l2buses[i].mem_side_ports = self.l2caches[i].cpu_side
            # L2 -> (monitor) -> the L3's bus or memory's.
            if self.has_traces():
                self.l2caches[i].mem_side = self.l2_monitors[i].cpu_side_port
                self.l2_monitors[i].mem_side_port = below_l2
            else:
                self.l2caches[i].mem_side = below_l2
            # Page-table walks through the core's L2.
            cpu.connect_walker_ports(self.l2buses[i].cpu_side_ports,
                                     self.l2buses[i].cpu_side_ports)
            if board.get_processor().get_isa() == ISA.X86:
                cpu.connect_interrupt(self.membus.mem_side_ports, self.membus.cpu_side_ports)
            else:
                cpu.connect_interrupt()

        if board.has_coherent_io():
            self._setup_io_cache(board)

    def _setup_io_cache(self, board: AbstractBoard) -> None:
        """A small cache for coherent DMA (the IDE disk), as in the stdlib."""
        self.iocache = Cache(assoc=8, tag_latency=50, data_latency=50, response_latency=50,
                             mshrs=20, size="1KiB", tgts_per_mshr=12,
                             addr_ranges=board.mem_ranges)
        self.iocache.mem_side = self.membus.cpu_side_ports
        self.iocache.cpu_side = board.get_mem_side_coherent_io_port()
