"""What the measuring run does at each exit event, as the tables the
stdlib's Simulator takes (policy as data).

RoiRecorder: the restored simulation starts where the boot stopped
(boot_exit_handlers.py), inside the first region of interest.  The first
step of the simulation is one tick long, so that the region can be opened
(stats reset) once the simulator exists; later work_begin/work_end pairs
open and close further regions (work_end dumps the stats: one dump per
region; with hotline's extension, each core's cycle profile and the miss
profile are started at a region's start and written at its end, or, in a
sampled run, the cycle profiles at each window's: Sampler).  The init's m5 exit ends the run.  Every region's first and last
tick go into a JSON file, from which the host knows the regions and which
of them closed; stats.txt holds one dump per region, in order, and gem5's
own dump at exit after them."""

from __future__ import annotations

import os
import sys
from typing import Callable

import m5
from _m5.core import seedRandom
from m5.util import warn

from gem5.simulate.exit_event import ExitEvent

from hotline_gem5.boot_exit_handlers import write_json


def dump_tables(profiles: list, **where: int) -> None:
    """Each of the extension's objects writes its table of a region (or a
    sampled window) to its path, `where` filled in; a table that cannot be
    written ends the run (hotline would refuse the run without it)."""
    for profile, path in profiles:
        path = path.format(**where)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        problem = profile.dumpRegion(path)
        if problem:
            sys.exit(f"hotline-gem5: cannot write {profile.type}'s table: {problem}")


class Sampler:
    """SMARTS's windows inside the regions of interest (hotline.specs.Sampling).

    The atomic cores run `interval` cycles, then the O3 cores take over for
    a window: each core's cycle profile lets `warmup` micro-ops commit
    unmeasured (pipelines and predictors fill; the caches are warm already,
    the atomic cores kept them so), then measures `measure` micro-ops
    (cycle_profile.hh, startWindow), and the atomic cores take back over
    once every core has measured its window or is asleep.  The TLB entries
    go with each switch (translation_carry.hh); the caches and the branch
    predictors are shared (sampled_processor.py).
    Windows are counted in micro-ops, not cycles, so that every micro-op of
    a region is as likely to be measured as any other (docs/gem5.md).  A
    core tells the script by an exit (the instruction-count stop's) when it
    finishes or falls asleep; a window still open `cap` cycles after it began is ended
    there, its unfinished cores' tables cut short (counted per region).
    The first window begins one interval into the region; a window the
    region's end cuts short is dropped, so that every table covers a whole
    window.  Every measured micro-op stands for as many of the region's as
    any other (cycle_profile.sampled).

    Interval ends and caps are gem5's scheduled tick exits, which cannot be
    taken back: the tick due is remembered, and an exit at any other tick
    is ignored."""

    FAST, WINDOW, OFF = "fast", "window", "off"

    def __init__(self, *, processor, profiles: Callable[[], list], carries: Callable[[], list],
                 interval: int, warmup: int, measure: int, cap: int, clock_hz: float) -> None:
        """profiles and carries: the extension's objects, asked for at each
        use (the cache hierarchy makes them when the simulator connects the
        board, after this object exists).  A sampled run without carries
        is refused: its windows would start with empty TLBs."""
        self._processor = processor
        self._carries = carries
        self._profiles = profiles
        self._cycles = {self.FAST: interval, self.WINDOW: cap}
        self._warmup, self._measure = warmup, measure
        self._clock_hz = clock_hz
        self._state = self.OFF
        self._due = None
        self._region = self._sample = self._capped = 0

    def _micro_ops(self) -> list[int]:
        """Each core's micro-ops committed so far in the region, its atomic
        and its O3 core's together (each BaseCPU counts its own; the region
        reset them).  BaseCPU exports totalInsts to Python, not totalOps:
        the count is read from the statistic.  SwitchableProcessor names
        each set of cores after its key (sampled_processor.py's)."""
        return [sum(int(core.get_simobject().resolveStat("commitStats0.numOps").value)
                    for core in pair)
                for pair in zip(self._processor.cores, self._processor.o3cores)]

    def _switch(self) -> None:
        """To the other set of cores, the TLB entries with them (gem5
        flushes a core's at its switch: translation_carry.hh).  Drained
        first, so that the entries held are the last ones the running cores
        made (switchCpus's own drain is then nothing to do)."""
        m5.drain()
        carries = self._carries()
        if not carries:
            sys.exit("hotline-gem5: a sampled run has no translation carries (a bug)")
        for carry in carries:
            carry.hold()
        self._processor.switch()
        for carry in carries:
            carry.restore()

    def _enter(self, state: str) -> None:
        """Switch cores as the state needs and schedule its end."""
        if (state == self.WINDOW) != self._processor.on_o3():
            self._switch()
        self._state = state
        if state == self.WINDOW:
            for profile, _ in self._profiles():
                profile.startWindow(self._warmup, self._measure)
        # (Ticks only once the simulator has fixed their frequency.)
        self._due = m5.curTick() + m5.ticks.fromSeconds(self._cycles[state] / self._clock_hz)
        m5.scheduleTickExitAbsolute(self._due)
        if state == self.WINDOW:
            self.counted()      # every core asleep: nothing to wait for

    def region_opened(self, region: int) -> None:
        self._region, self._sample, self._capped = region, 0, 0
        self._enter(self.FAST)

    def region_closed(self) -> dict:
        """Back to the atomic cores; the region's windows, whether its end
        cut one short (dropped), how many the cap ended, and each core's
        micro-ops in the whole region (gem5's statistic, which the retire
        counts are checked against)."""
        cut = self._state == self.WINDOW
        if self._processor.on_o3():
            self._switch()
        self._state, self._due = self.OFF, None
        return {"windows": self._sample, "window_cut": cut, "windows_capped": self._capped,
                "region_micro_ops": self._micro_ops()}

    def _close_window(self) -> None:
        dump_tables(self._profiles(), region=self._region, sample=self._sample)
        self._sample += 1
        self._enter(self.FAST)

    def counted(self) -> None:
        """A core's exit: its window measured, or it fell asleep in one."""
        if self._state == self.WINDOW and \
                not any(profile.windowPending() for profile, _ in self._profiles()):
            self._close_window()

    def step(self) -> None:
        """A scheduled tick exit: the interval's end or the window's cap, if
        due now."""
        if self._state == self.OFF or m5.curTick() != self._due:
            return
        if self._state == self.FAST:
            self._enter(self.WINDOW)
        else:
            self._capped += 1
            self._close_window()


class RoiRecorder:
    def __init__(self, *, path: str, profiles: Callable[[], list] = list,
                 sampler: Sampler | None = None, random_seed: int | None = None) -> None:
        """profiles: the extension's objects, each with the path its
        region's table goes to ({region} in it), asked for when a region
        opens: the cache hierarchy makes them only when the simulator
        connects the board, after this object exists.  sampler: a sampled
        run's windows, opened and closed with the regions.  random_seed: a
        perturbed repeat's, for gem5's generator, set as the first region
        opens: from there on the run is the seed's alone."""
        self._simulator = None
        self._path = path
        self._profiles = profiles
        self._sampler = sampler
        self._random_seed = random_seed
        self.regions: list[dict] = []
        self._save()

    def attach(self, simulator) -> None:
        """Before simulator.run(): its first step is one tick long and ends
        in a MAX_TICK exit, where open_first opens the first region."""
        self._simulator = simulator
        simulator.set_max_ticks(1)

    def _save(self) -> None:
        write_json(self._path, {"regions": self.regions})

    def _open(self) -> None:
        m5.stats.reset()
        for profile, _ in self._profiles():
            profile.startRegion()
        self.regions.append({"begin": m5.curTick(), "end": None})
        if self._sampler is not None:
            self._sampler.region_opened(len(self.regions) - 1)
        self._save()

    def _inside(self) -> bool:
        return bool(self.regions) and self.regions[-1]["end"] is None

    def open_first(self):
        if self._random_seed is not None:
            seedRandom(self._random_seed)
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
                dump_tables(self._profiles(), region=len(self.regions) - 1)
                if self._sampler is not None:
                    self.regions[-1].update(self._sampler.region_closed())
                self.regions[-1]["end"] = m5.curTick()
                self._save()
            yield False

    def scheduled_tick(self):
        while True:
            if self._sampler is not None:
                self._sampler.step()
            yield False

    def window_counted(self):
        while True:
            if self._sampler is not None:
                self._sampler.counted()
            yield False

    def handlers(self) -> dict:
        return {ExitEvent.MAX_TICK: self.open_first(), ExitEvent.WORKBEGIN: self.work_begin(),
                ExitEvent.WORKEND: self.work_end(), ExitEvent.SCHEDULED_TICK: self.scheduled_tick(),
                # The cycle profiles' exits in sampled windows (Sampler).
                ExitEvent.MAX_INSTS: self.window_counted()}
