"""The Python side of hotline's miss profile (miss_profile.hh).

One object per system.  It listens to every core's L1D and L2 (hit, miss,
fill and data-update probe points), counts each demand miss per
instruction, access, address and cause, and writes one table per region
when asked.
"""

from m5.objects.Probe import ProbeListenerObject
from m5.params import Param, VectorParam
from m5.SimObject import PyBindMethod


class HotlineMissProfile(ProbeListenerObject):
    type = "HotlineMissProfile"
    cxx_header = "miss_profile.hh"
    cxx_class = "gem5::hotline::MissProfile"
    cxx_exports = [
        PyBindMethod("startRegion"),
        PyBindMethod("dumpRegion"),
    ]

    l1ds = VectorParam.BaseCache("each core's L1D, in core order")
    l2s = VectorParam.BaseCache("each core's L2, in core order")
    # The fully associative shadows that tell conflict from capacity.
    l1d_lines = Param.Unsigned("lines an L1D holds")
    l2_lines = Param.Unsigned("lines an L2 holds")
    user_space_end = Param.Addr(
        "the first address above user space: the data addresses of "
        "instructions below it are not kept")
