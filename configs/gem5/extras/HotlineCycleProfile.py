"""The Python side of hotline's cycle profile (cycle_profile.hh).

One object per O3 core.  It listens to the core's commit probe points and
to its L1D's and L2's miss and fill probe points, charges every cycle of a
region to one instruction, and writes one table per region when asked; in
sampled simulation a region is a window of micro-ops (startWindow), and the
core ends the simulation loop when its window is measured or it falls asleep
in one, for the run script to ask windowPending().
"""

from m5.objects.Probe import ProbeListenerObject
from m5.params import NULL, Param
from m5.SimObject import PyBindMethod


class HotlineCycleProfile(ProbeListenerObject):
    type = "HotlineCycleProfile"
    cxx_header = "cycle_profile.hh"
    cxx_class = "gem5::hotline::CycleProfile"
    cxx_exports = [
        PyBindMethod("startRegion"),
        PyBindMethod("dumpRegion"),
        PyBindMethod("startWindow"),
        PyBindMethod("windowPending"),
    ]

    # manager (ProbeListenerObject's, a SimObject) must be the O3 core whose
    # cycles are charged: redeclaring it with the core's type would give the
    # C++ parameters a second `manager` that the base class never reads.
    l1d = Param.BaseCache(NULL, "the core's L1D (to say which loads missed)")
    l2 = Param.BaseCache(NULL, "the core's L2 (to say where a miss was served)")
    sample_period = Param.Unsigned(
        10000, "unhalted cycles between two samples of the sampled view")
