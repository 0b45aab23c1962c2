"""What done means for a run, decided here and only here.

A run is done when the record of its latest attempt says ok and its
directory RUN-ID/ is a complete result (damage() finds nothing: a manifest
of this run, naming every table beside it with its size and content hash,
and tables that are exactly those) whose key is the key of the run's inputs
now: a sweep compares what it can know before building (the run's
conditions: experiment.other_conditions), the run step the whole key.
What follows:

- experiment.execute() simulates a run unless its directory's key is the
  run's key now (reusable); --rerun simulates it regardless.
- The sweep workflow wants each run's next_record(): the record of its
  latest attempt if that says ok, else (no record, or a failed one) the
  record of a new attempt, a file that does not exist yet.  So every run
  of the workflow, ./hotline run's or a plain snakemake, runs a failed run
  again, and the failed attempt's record and log stay beside the new one
  (.sweep/runs/RUN-ID.attemptN.json; layout.py).  Snakemake also runs a
  step again when a build it needs is newer than its record or the run's
  conditions changed (its mtime and params triggers); execute() then
  reuses the result if its key did not change.
- A record that says ok for a directory that is not a complete result
  records a failure: set_aside() renames the directory RUN-ID.failed and
  records the attempt as failed, so that a new one is wanted.  A record
  that cannot be read is removed, so that its attempt is made again.
  ./hotline run reads every record this way before Snakemake plans
  (settle), and gathering reads those of the runs it gathers (read_record).
  A dry run reads them the same way (judge) and changes nothing, so that it
  says what the real run would do.
- A step that dies without recording anything (killed, out of memory)
  leaves its record missing: Snakemake runs it again.
"""

import json
import shutil
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from hotline import outputs, sealed
from hotline.console import say
from hotline.errors import HotlineError
from hotline.records import manifest as run_record
from hotline.records.layout import (GUEST_LOG, failed_name, log_path, record_name,
                                    record_path, run_id_of)


# ---- a run's directory ------------------------------------------------------

def reusable(run_dir: Path, run_id: str, key: str) -> bool:
    """Whether run_dir holds the result of a run with this key.  A damaged
    result counts as none, and is removed: the run is made again."""
    if not run_record.exists(run_dir):
        return False
    if problem := damage(run_dir):
        say(f"run {run_id}: {problem}; running it again")
        shutil.rmtree(run_dir)
        return False
    return run_record.read(run_dir).key == key


def damage(run_dir: Path) -> str | None:
    """What makes a run directory unusable as the result its manifest
    describes, or None: a manifest that cannot be read, or that is another
    run's (a folder copied over another), or tables that are not exactly
    those the run wrote (sealed.breach against the manifest's "files")."""
    try:
        manifest = run_record.read(run_dir)
    except HotlineError as e:
        return str(e)
    own = run_id_of(run_dir.name)
    if manifest.run_id != own:
        return (f"{manifest.where}: the manifest of run {manifest.run_id!r}, not of "
                f"{own!r} (a run folder copied over another?)")
    files = manifest.files
    if not isinstance(files, dict):
        return (f"{manifest.where}: names no table with its size and content hash (made by an "
                "older hotline, or not by hotline)")
    return sealed.breach(run_dir, files)


# ---- a run's records ----------------------------------------------------------

def latest_attempt(out_dir: Path, run_id: str) -> int:
    """The number of the run's latest recorded attempt; 0 if none."""
    attempt = 0
    while (out_dir / record_path(run_id, attempt + 1)).exists():
        attempt += 1
    return attempt


def _load(path: Path) -> dict | None:
    """A record, or None if it cannot be read as one."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and "status" in record else None


def next_record(out_dir: Path, run_id: str, again: bool = False) -> str:
    """The name of the record the workflow wants for the run: its latest
    attempt's if that says ok, a new attempt's otherwise, or if `again` (a
    dry run's run that judge() found not done).  Reads only."""
    attempt = latest_attempt(out_dir, run_id)
    if not again and attempt and \
            (_load(out_dir / record_path(run_id, attempt)) or {}).get("status") == "ok":
        return record_name(run_id, attempt)
    return record_name(run_id, attempt + 1)


def write_record(out_dir: Path, run_id: str, attempt: int, record: dict) -> None:
    """An attempt's record, written whole, then renamed: a half-written
    record would be taken for a finished run."""
    path = out_dir / record_path(run_id, attempt)
    outputs.make_dir(path.parent)
    outputs.write_text(path, json.dumps(record, indent=2) + "\n")


# What of a run directory's manifest makes it another run's than the one
# planned (experiment.other_conditions), or None.
Foreign = Callable[[dict], str | None]


def judge(out_dir: Path, run_id: str, foreign: Foreign | None = None
          ) -> tuple[dict | None, str | None]:
    """The run's outcome as its latest attempt's record says it, or None if
    it has none, and the problem that makes it not done after all: a record
    that cannot be read, or one that says ok for a damaged directory, or
    for one whose manifest `foreign` finds is not the planned run's.
    Reads only: what "done" means for the dry run and the real one alike."""
    attempt = latest_attempt(out_dir, run_id)
    record = None
    if attempt:
        path = out_dir / record_path(run_id, attempt)
        record = _load(path)
        if record is None:
            return None, f"{path}: unreadable (not a run's record)"
    if record is None:
        # A run made in-process (./hotline demo) has its directory but no record.
        for directory, status in ((run_id, "ok"), (failed_name(run_id), "failed")):
            if (out_dir / directory).is_dir():
                record = {"run_id": run_id, "status": status, "directory": directory,
                          "failure": None, "guest_log": f"{directory}/{GUEST_LOG}",
                          "step_log": None}
                if status == "failed":
                    try:
                        record["failure"] = run_record.read(out_dir / directory).failure
                    except HotlineError as e:
                        record["failure"] = str(e)
                break
    if record and record["status"] == "ok":
        directory = out_dir / (record.get("directory") or run_id)
        if problem := damage(directory):
            return record, problem
        if foreign and (problem := foreign(run_record.read(directory).raw)):
            return record, f"{directory}: {problem}"
    return record, None


def read_record(out_dir: Path, run_id: str, foreign: Foreign | None = None) -> dict | None:
    """The run's outcome, as judge() finds it, with its problem mended: a
    run recorded as ok whose directory is damaged is set aside as failed
    (set_aside), and a record that cannot be read is removed, so that the
    next sweep makes the run again."""
    record, problem = judge(out_dir, run_id, foreign)
    if problem and record is None:
        say(f"run {run_id}: {problem}; removed, so that the next ./hotline run makes the run "
            "again")
        (out_dir / record_path(run_id, latest_attempt(out_dir, run_id))).unlink(missing_ok=True)
        # What is left: an earlier attempt's record, or the directory alone.
        record, problem = judge(out_dir, run_id, foreign)
    if problem:
        return set_aside(out_dir, run_id, problem)
    return record


def set_aside(out_dir: Path, run_id: str, problem: str) -> dict:
    """A damaged run, recorded as failed with the problem as its reason; its
    directory, if any, renamed RUN-ID.failed: no directory named RUN-ID is
    left that is not a valid result, and a sweep makes a failed run again."""
    directory = out_dir / run_id
    failed = directory.with_name(failed_name(run_id))
    if directory.is_dir():
        shutil.rmtree(failed, ignore_errors=True)
        directory.rename(failed)
    attempt = max(latest_attempt(out_dir, run_id), 1)
    record = {"run_id": run_id, "status": "failed",
              "failure": f"{problem}; set aside as {failed.name}; a sweep makes the run "
                         "again",
              "directory": failed.name if failed.is_dir() else None,
              "guest_log": f"{failed.name}/{GUEST_LOG}"
              if (failed / GUEST_LOG).exists() else None,
              "step_log": log_path(run_id, attempt), "reused": False, "attempt": attempt,
              "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    write_record(out_dir, run_id, attempt, record)
    say(f"run {run_id}: FAILED: {record['failure']}")
    return record


def settle(out_dir: Path, run_ids: list[str], heal: bool = True,
           foreign: Callable[[str], Foreign] | None = None
           ) -> tuple[dict[str, dict], set[str]]:
    """Every recorded run's outcome, from its latest record, judged before
    Snakemake plans, and the runs that are not done after all.  With heal
    (a real run) a damaged run is set aside and an unreadable record
    removed now, so that this sweep makes them again; without (a dry run)
    nothing changes, and the runs to make again are only named.
    foreign(run_id): the run's check that a directory is its planned run's."""
    records, redo = {}, set()
    for run_id in run_ids:
        if not latest_attempt(out_dir, run_id):
            continue
        if heal:
            record = read_record(out_dir, run_id)
        else:
            record, problem = judge(out_dir, run_id)
            if problem:
                say(f"run {run_id}: {problem}; the run would be made again")
                redo.add(run_id)
        # A whole result, but not of the run planned now: not damaged, not
        # done either; its next attempt simulates (the key differs).
        if foreign and record and record["status"] == "ok" and run_id not in redo:
            directory = out_dir / (record.get("directory") or run_id)
            if why := foreign(run_id)(run_record.read(directory).raw):
                say(f"run {run_id}: {why}; the run is made again")
                redo.add(run_id)
        if record is not None and latest_attempt(out_dir, run_id):
            records[run_id] = record
    return records, redo
