"""The Python side of hotline's translation carry (translation_carry.hh).

One object per core of a sampled run: its atomic core and the O3 core that
takes over from it for each window.  The run script calls hold() before a
switch and restore() after it, so that the TLB entries go with the switch
(gem5 flushes them at switchOut).  x86 only.
"""

from m5.params import Param
from m5.SimObject import PyBindMethod, SimObject


class HotlineTranslationCarry(SimObject):
    type = "HotlineTranslationCarry"
    cxx_header = "translation_carry.hh"
    cxx_class = "gem5::hotline::TranslationCarry"
    cxx_exports = [
        PyBindMethod("hold"),
        PyBindMethod("restore"),
    ]

    atomic = Param.BaseCPU("the atomic core")
    o3 = Param.BaseCPU("the O3 core that takes over from it for each window")
