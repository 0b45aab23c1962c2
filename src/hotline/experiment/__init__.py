"""Running an experiment spec: build what it needs, run every combination of
kernel variant x workload x system x repeat, record each run in its own
directory with a manifest that names every input by hash.

A run directory is created as .ID.running and renamed to ID only when the run
succeeded (or ID.failed when it did not), so a directory named ID is always a
complete, valid result.  A run whose inputs have not changed is not repeated.

Its parts, in the order a run meets them: planning (the runs a spec asks
for), conditions (what determines a run's result, and so its key),
execution (one run simulated and recorded, and the experiment run whole
without the sweep workflow).
"""

from hotline.experiment.conditions import (command_line, other_conditions,
                                          run_conditions, run_inputs)
from hotline.experiment.execution import RunResult, execute, hotline_revision, run_experiment
from hotline.experiment.planning import PlannedRun, load_spec, plan, repeats

__all__ = ["PlannedRun", "RunResult", "command_line", "execute", "hotline_revision",
           "load_spec", "other_conditions", "plan", "repeats", "run_conditions", "run_experiment", "run_inputs"]
