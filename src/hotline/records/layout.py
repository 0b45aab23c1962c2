"""Where a sweep keeps what, relative to the experiment's results directory
(the workflow's working directory).  The Snakefile, the steps, the
engine's watch and gathering all take their paths from here.

  RUN-ID/, RUN-ID.failed/        runs, as experiment.execute() leaves them
                                 (.RUN-ID.running/ while one runs)
  .sweep/runs/RECORD.json        a run step's record of one attempt's outcome
  .sweep/logs/RECORD.log         that step's console output
  .sweep/logs/KIND-DIR.log       a build step's (KIND-DIR: kernel-VARIANT-KEY,
                                 image-KEY, plugin-NAME-KEY: the build's
                                 directory in the cache)
  .sweep/logs/gather.log         the gathering step's
  .sweep/snakemake.log           Snakemake's own output (./hotline run)
  .sweep/config.json             the workflow's config (./hotline run: the spec,
                                 the kernel source, the runs to make again)
  runs.parquet, NAME.parquet     the gathered index and tables (gather.py)

RECORD names an attempt at a run: the run id for its first, RUN-ID.attemptN
for the Nth after a failure (done.py says when there is one).
"""

import re

# The guest's console, in a run's directory (simulate/guest_log.py reads it).
GUEST_LOG = "guest.log"

# A run's directory: made as .RUN-ID.running, renamed RUN-ID when the run
# succeeded, RUN-ID.failed when it failed (or was set aside as damaged).
_RUNNING, _FAILED = ".running", ".failed"


def running_name(run_id: str) -> str:
    return f".{run_id}{_RUNNING}"


def failed_name(run_id: str) -> str:
    return f"{run_id}{_FAILED}"


def run_id_of(directory_name: str) -> str:
    """The run id of a run's directory, whatever its state."""
    if directory_name.startswith(".") and directory_name.endswith(_RUNNING):
        return directory_name[1:-len(_RUNNING)]
    return directory_name.removesuffix(_FAILED)


RECORDS = ".sweep/runs"
LOGS = ".sweep/logs"
INDEX = "runs.parquet"
ENGINE_LOG = ".sweep/snakemake.log"
SWEEP_CONFIG = ".sweep/config.json"
GATHER_LOG = f"{LOGS}/gather.log"
# The Snakefile's patterns for a run step's record and log; {record} is a
# record's name (record_name).
RECORD = f"{RECORDS}/{{record}}.json"
STEP_LOG = f"{LOGS}/{{record}}.log"
_ATTEMPT = re.compile(r"(.+)\.attempt([0-9]+)")


def record_name(run_id: str, attempt: int = 1) -> str:
    """The name of a run's attempt: the run id for the first."""
    return run_id if attempt == 1 else f"{run_id}.attempt{attempt}"


def parse_record_name(name: str) -> tuple[str, int]:
    """(run id, attempt) of a record's name."""
    if m := _ATTEMPT.fullmatch(name):
        return m.group(1), int(m.group(2))
    return name, 1


def record_path(run_id: str, attempt: int = 1) -> str:
    """A run step's record, relative to the experiment's results directory."""
    return RECORD.format(record=record_name(run_id, attempt))


def log_path(run_id: str, attempt: int = 1) -> str:
    """A run step's console output, relative to the same."""
    return STEP_LOG.format(record=record_name(run_id, attempt))


def build_log_path(kind: str, directory: str) -> str:
    """A build step's console output: kind (kernel, image, plugin) and the
    name of the build's directory in the cache (VARIANT-KEY, KEY, NAME-KEY)."""
    return f"{LOGS}/{kind}-{directory}.log"
