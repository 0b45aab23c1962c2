"""The Python side of hotline's retire count (retire_count.hh).

One object per core, atomic or O3 (its ProbeListenerObject manager): the
micro-ops and instructions it committed in a region, per instruction
address, written as one table per region when asked.  A sampled run counts
with it what its windows estimate.
"""

from m5.objects.Probe import ProbeListenerObject
from m5.SimObject import PyBindMethod


class HotlineRetireCount(ProbeListenerObject):
    type = "HotlineRetireCount"
    cxx_header = "retire_count.hh"
    cxx_class = "gem5::hotline::RetireCount"
    cxx_exports = [
        PyBindMethod("startRegion"),
        PyBindMethod("dumpRegion"),
    ]
