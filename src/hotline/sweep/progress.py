"""The console's view of a running sweep, read from the results directory
rather than from the engine's output, so that it is the same for local and
cluster runs and survives the engine's changes of wording:

- a run is done or failed when the record the workflow wants of it (its
  latest attempt's, or a new attempt's after a failure: records/done.py) says so;
  a failed record older than this sweep counts as left;
- a run is running while its .RUN-ID.running directory (made by
  experiment.execute) is newer than this sweep; older ones are leftovers of
  an interrupted sweep;
- a build is running while its step's log exists and its marker does not.
"""

import json
import time
from dataclasses import dataclass
from pathlib import Path

from hotline.console import elapsed, say
from hotline.records.layout import build_log_path, running_name
from hotline.sweep.workflow import Sweep


@dataclass(frozen=True)
class Counts:
    done: int
    running: int
    failed: int
    left: int

    def line(self, seconds: float) -> str:
        return (f"runs: {self.done} done, {self.running} running, {self.failed} failed, "
                f"{self.left} left; {elapsed(seconds)} elapsed")


class Progress:
    def __init__(self, sweep: Sweep, every_s: float = 60.0):
        self.sweep = sweep
        self.out_dir = sweep.out_dir
        self.every_s = every_s
        self.started = time.time()
        self.start = time.monotonic()
        self.building: set[str] = set()
        self.last_counts = None
        self.last_time = 0.0
        self.records: dict[str, dict] = {}
        self.records = self._read_records()
        # What was already finished is not announced again.
        self.reported = {run_id for run_id, r in self.records.items() if self.is_current(r)}

    def _read_records(self) -> dict[str, dict]:
        """Every run's record, with its mtime; a record is read again only
        when it changed (a sweep can have thousands)."""
        known, records = self.records, {}
        for step in self.sweep.runs:
            path = self.out_dir / step.record
            try:
                mtime = path.stat().st_mtime
                if step.run_id in known and known[step.run_id]["_mtime"] == mtime:
                    records[step.run_id] = known[step.run_id]
                    continue
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # not there, or being replaced
            records[step.run_id] = dict(record, _mtime=mtime)
        return records

    def is_current(self, record: dict) -> bool:
        return record["status"] == "ok" or record["_mtime"] >= self.started - 1

    def counts(self) -> Counts:
        done = failed = running = 0
        for step in self.sweep.runs:
            record = self.records.get(step.run_id)
            if record and self.is_current(record):
                done += record["status"] == "ok"
                failed += record["status"] != "ok"
            elif self._running(step.run_id):
                running += 1
        return Counts(done, running, failed, len(self.sweep.runs) - done - failed - running)

    def _running(self, run_id: str) -> bool:
        work = self.out_dir / running_name(run_id)
        try:
            return work.stat().st_mtime >= self.started - 1
        except OSError:
            return False

    def poll(self) -> Counts:
        """Announce what finished since the last poll, and the counts when a
        run finished (or every every_s seconds)."""
        self._builds()
        self.records = self._read_records()
        for run_id, record in self.records.items():
            if run_id in self.reported or not self.is_current(record):
                continue
            self.reported.add(run_id)
            if record["status"] == "ok":
                say(f"run {run_id}: ok" + (" (inputs unchanged, result reused)"
                                          if record.get("reused") else
                                          f" in {elapsed(record.get('wall_seconds') or 0)}"))
            else:
                say(f"run {run_id}: FAILED: {record['failure']} "
                    f"(log: {self.out_dir / (record.get('guest_log') or record['step_log'])})")
        counts = self.counts()
        now = time.monotonic()
        finished = (counts.done, counts.failed)
        if self.last_counts is None or finished != (self.last_counts.done, self.last_counts.failed) \
                or now - self.last_time >= self.every_s:
            say(counts.line(now - self.start))
            self.last_counts, self.last_time = counts, now
        return counts

    def _builds(self) -> None:
        for label, marker in self.sweep.builds().items():
            log = build_log(self.out_dir, label, marker)
            if label not in self.building:
                if not Path(marker).exists() and log.exists() \
                        and log.stat().st_mtime >= self.started - 1:
                    self.building.add(label)
                    say(f"{label}: building (log: {log})")
            elif Path(marker).exists():
                self.building.discard(label)
                say(f"{label}: built")

    def seconds(self) -> float:
        return time.monotonic() - self.start


def build_log(out_dir: Path, label: str, marker: str) -> Path:
    """The log of the build step that makes `marker`: the kind of build,
    then the name of the build's directory in the cache."""
    return out_dir / build_log_path(label.split()[0], Path(marker).parent.name)
