"""Boot once: hotline's guest on gem5's X86Board, atomic CPUs and no caches
(the fastest way through the boot), to the workload's first region of
interest, where a checkpoint is saved and the simulation ends.

    gem5.opt --outdir=OUT configs/gem5/hotline_boot.py --params BOOT.json

BOOT.json is written by hotline (configs/gem5/hotline_gem5/run_params.py,
BootParams).  Outputs: the checkpoint directory it names and, in OUT, the roi_file (the
checkpoint's tick, or null if the guest ended without reaching a region),
the guest console (board.pc.com_1.device) and stats.txt.
hotline_measure.py restores the checkpoint.  Written for gem5 v24.0.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hotline_gem5.preflight import check_build, check_files, load_params  # noqa: E402
from hotline_gem5.run_params import BootParams  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--params", required=True, help="the boot's parameters (JSON from hotline)")
params = load_params(BootParams, parser.parse_args().params)
check_build(ruby_protocol_needed=None)
check_files(params.machine)

import m5  # noqa: E402

from gem5.components.cachehierarchies.classic.no_cache import NoCache  # noqa: E402
from gem5.simulate.simulator import Simulator  # noqa: E402

from hotline_gem5 import machine  # noqa: E402
from hotline_gem5.boot_exit_handlers import CheckpointAtRoi  # noqa: E402

board = machine.board(params.machine, cpu="atomic", cache_hierarchy=NoCache())
handlers = CheckpointAtRoi(checkpoint_dir=params.checkpoint_dir,
                           path=os.path.join(m5.options.outdir, params.roi_file))
simulator = Simulator(board=board, on_exit_event=handlers.handlers())
simulator.run()
print(f"hotline-gem5: boot ended at tick {simulator.get_current_tick()}: "
      f"{simulator.get_last_exit_event_cause()}")
