"""What the simulation does at each exit event, as the table the stdlib's
Simulator takes (policy as data).

hotline-roi begin (m5 work_begin): switch from the fast boot CPU to the
detailed one, reset the stats, start the LSQUnit debug trace.  hotline-roi
end (work_end): dump the stats (one dump per region of interest), stop the
debug trace, switch back to the fast CPU.  The init's hotline-roi exit (m5
exit): end.  Every region's start and end tick goes into a JSON file, which
the host uses to keep only the packets inside the regions.  stats.txt then
holds one dump per region, in order, and gem5's own dump at exit after them."""

from __future__ import annotations

import json

import m5
import m5.debug
from m5.util import warn

from gem5.simulate.exit_event import ExitEvent


class RoiRecorder:
    def __init__(self, *, processor, path: str, debug_flags: tuple[str, ...],
                 switch: bool = True) -> None:
        self._processor = processor
        self._path = path
        self._debug_flags = debug_flags
        self._switch = switch
        self._detailed = False
        self.regions: list[dict] = []
        self._save()

    def _save(self) -> None:
        with open(self._path, "w") as f:
            json.dump({"regions": self.regions}, f, indent=1)

    def _set_debug(self, on: bool) -> None:
        for flag in self._debug_flags:
            (m5.debug.flags[flag].enable if on else m5.debug.flags[flag].disable)()

    def work_begin(self):
        while True:
            if self.regions and self.regions[-1]["end"] is None:
                warn("hotline: work_begin inside a region of interest; ignored")
            else:
                if self._switch and not self._detailed:
                    self._processor.switch()
                    self._detailed = True
                m5.stats.reset()
                self._set_debug(True)
                self.regions.append({"begin": m5.curTick(), "end": None})
                self._save()
            yield False

    def work_end(self):
        while True:
            if not self.regions or self.regions[-1]["end"] is not None:
                warn("hotline: work_end outside a region of interest; ignored")
            else:
                m5.stats.dump()
                self._set_debug(False)
                self.regions[-1]["end"] = m5.curTick()
                self._save()
                if self._switch and self._detailed:
                    self._processor.switch()
                    self._detailed = False
            yield False

    def exit(self):
        while True:
            yield True

    def handlers(self) -> dict:
        return {ExitEvent.WORKBEGIN: self.work_begin(), ExitEvent.WORKEND: self.work_end(),
                ExitEvent.EXIT: self.exit()}
