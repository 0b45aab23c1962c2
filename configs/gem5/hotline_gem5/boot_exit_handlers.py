"""What the boot does at each exit event, as the table the stdlib's
Simulator takes (policy as data): at the workload's first hotline-roi begin
(m5 work_begin) save a checkpoint, note its tick, and end the simulation.
If the guest exits (m5 exit) without reaching a region, there is no
checkpoint, and the host says why from the guest's console.

The boot's files make the checkpoints' key (hotline.simulate.gem5.
checkpoints.BOOT_FILES); the measuring run's handlers are in
measure_exit_handlers.py, so that changing them boots nothing again."""

from __future__ import annotations

import json

import m5

from gem5.simulate.exit_event import ExitEvent


def write_json(path: str, data: dict) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


class CheckpointAtRoi:
    def __init__(self, *, checkpoint_dir: str, path: str) -> None:
        self._checkpoint_dir = checkpoint_dir
        self._path = path
        write_json(path, {"checkpoint_tick": None})

    def work_begin(self):
        m5.checkpoint(self._checkpoint_dir)
        write_json(self._path, {"checkpoint_tick": m5.curTick()})
        yield True

    def exit(self):
        yield True

    def handlers(self) -> dict:
        return {ExitEvent.WORKBEGIN: self.work_begin(), ExitEvent.EXIT: self.exit()}
