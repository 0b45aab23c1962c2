"""What the simulation does at each exit event, as the tables the stdlib's
Simulator takes (policy as data), for the two phases of a run.

Boot (CheckpointAtRoi): at the workload's first hotline-roi begin (m5
work_begin) save a checkpoint, note its tick, and end the simulation.  If
the guest exits (m5 exit) without reaching a region, there is no checkpoint,
and the host says why from the guest's console.

Measure (RoiRecorder): the restored simulation starts where the boot
stopped, inside the first region of interest.  The first step of the
simulation is one tick long, so that the region can be opened (stats reset,
LSQ debug trace on) once the simulator exists; later work_begin/work_end
pairs open and close further regions (work_end dumps the stats: one dump per
region; with hotline's extension, each core's cycle profile is started at
a region's start and written at its end).  The init's m5 exit ends the
run.  Every region's first and last tick go into a JSON file, which the host
uses to keep only the packets inside the regions; stats.txt holds one dump
per region, in order, and gem5's own dump at exit after them."""

from __future__ import annotations

import json
import os
import sys
from typing import Callable

import m5
import m5.debug
from m5.util import warn

from gem5.simulate.exit_event import ExitEvent


def _write_json(path: str, data: dict) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


class CheckpointAtRoi:
    def __init__(self, *, checkpoint_dir: str, path: str) -> None:
        self._checkpoint_dir = checkpoint_dir
        self._path = path
        _write_json(path, {"checkpoint_tick": None})

    def work_begin(self):
        m5.checkpoint(self._checkpoint_dir)
        _write_json(self._path, {"checkpoint_tick": m5.curTick()})
        yield True

    def exit(self):
        yield True

    def handlers(self) -> dict:
        return {ExitEvent.WORKBEGIN: self.work_begin(), ExitEvent.EXIT: self.exit()}


class RoiRecorder:
    def __init__(self, *, path: str, debug_flags: list[str],
                 profiles: Callable[[], list] = list, profile_path: str = "") -> None:
        """profiles: the cycle profiles, asked for when a region opens: the
        cache hierarchy makes them only when the simulator connects the
        board, after this object exists."""
        self._simulator = None
        self._path = path
        self._debug_flags = debug_flags
        self._profiles = profiles
        self._profile_path = profile_path
        self.regions: list[dict] = []
        self._save()

    def attach(self, simulator) -> None:
        """Before simulator.run(): its first step is one tick long and ends
        in a MAX_TICK exit, where open_first opens the first region."""
        self._simulator = simulator
        simulator.set_max_ticks(1)

    def _save(self) -> None:
        _write_json(self._path, {"regions": self.regions})

    def _set_debug(self, on: bool) -> None:
        for flag in self._debug_flags:
            (m5.debug.flags[flag].enable if on else m5.debug.flags[flag].disable)()

    def _open(self) -> None:
        m5.stats.reset()
        self._set_debug(True)
        for profile in self._profiles():
            profile.startRegion()
        self.regions.append({"begin": m5.curTick(), "end": None})
        self._save()

    def _inside(self) -> bool:
        return bool(self.regions) and self.regions[-1]["end"] is None

    def open_first(self):
        self._open()
        self._simulator.set_max_ticks(m5.MaxTick)
        while True:
            yield False

    def work_begin(self):
        while True:
            if self._inside():
                warn("hotline: work_begin inside a region of interest; ignored")
            else:
                self._open()
            yield False

    def work_end(self):
        while True:
            if not self._inside():
                warn("hotline: work_end outside a region of interest; ignored")
            else:
                m5.stats.dump()
                self._set_debug(False)
                self._dump_profiles(len(self.regions) - 1)
                self.regions[-1]["end"] = m5.curTick()
                self._save()
            yield False

    def _dump_profiles(self, region: int) -> None:
        """Each core's cycle profile of the region; a table that cannot be
        written ends the run (hotline would refuse the run without it)."""
        profiles = self._profiles()
        directory = os.path.dirname(self._profile_path)
        if profiles and directory:
            os.makedirs(directory, exist_ok=True)
        for cpu, profile in enumerate(profiles):
            problem = profile.dumpRegion(self._profile_path.format(region=region, cpu=cpu))
            if problem:
                sys.exit(f"hotline-gem5: cannot write the cycle profile: {problem}")

    def handlers(self) -> dict:
        return {ExitEvent.MAX_TICK: self.open_first(), ExitEvent.WORKBEGIN: self.work_begin(),
                ExitEvent.WORKEND: self.work_end()}
