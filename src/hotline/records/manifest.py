"""A run's record of itself: manifest.json in its run directory, written
once by experiment.execute() when the run ends and read by everything
after it through this module.

  run_id, key        the run, and the hash of every input that made it
  status, failure    "ok", or "failed" with the reason
  inputs             run_inputs(): kernel, guest image, system spec,
                     workload, backend (name, version, mode and the
                     backend's own settings), command line, repeat
  experiment         the spec's path and hash; hotline: version, revision
  created            when it ended (ISO 8601, UTC); wall_seconds
  tables             {table: file} the run made; files: each file's size
                     and hash (sealed.describe), which done.damage checks
  account            what the backend says it measured (gem5: regions,
                     micro-ops counted), or None; manifests written before
                     it had its name hold it as "gem5"
  guest              CPUs brought up and online, the workload's summary and
                     the kernel's counters
"""

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hotline import outputs
from hotline.errors import HotlineError

FILE = "manifest.json"
# The key an older hotline wrote the backend's account under.
_OLD_ACCOUNT = "gem5"


def path(run_dir: Path) -> Path:
    return Path(run_dir) / FILE


def exists(run_dir: Path) -> bool:
    return path(run_dir).is_file()


@dataclass(frozen=True)
class Manifest:
    raw: dict           # as written: runs.parquet keeps it as JSON text
    where: str = "the manifest"   # its path, for messages

    def _get(self, *keys):
        """The value at keys; a one-line error naming the key if the
        manifest has none (damaged, or not written by hotline)."""
        value = self.raw
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                raise HotlineError(f"{self.where}: has no {'.'.join(keys)} (not a manifest "
                                   "this hotline wrote, or edited since)")
            value = value[key]
        return value

    @property
    def run_id(self) -> str:
        return self.raw.get("run_id")

    @property
    def key(self) -> str | None:
        return self.raw.get("key")

    @property
    def status(self) -> str | None:
        return self.raw.get("status")

    @property
    def failure(self) -> str | None:
        return self.raw.get("failure")

    @property
    def inputs(self) -> dict:
        return self.raw.get("inputs") if isinstance(self.raw.get("inputs"), dict) else {}

    @property
    def tables(self) -> dict:
        """{table name: file name} of the tables the run made."""
        tables = self.raw.get("tables")
        return tables if isinstance(tables, dict) else {}

    @property
    def files(self):
        """Each file's size and hash as written (sealed.describe), or what
        stands in their place in a damaged manifest."""
        return self.raw.get("files")

    @property
    def wall_seconds(self) -> float | None:
        return self.raw.get("wall_seconds")

    @property
    def account(self) -> dict | None:
        return self.raw.get("account", self.raw.get(_OLD_ACCOUNT))

    @property
    def guest(self) -> dict:
        return self.raw.get("guest") if isinstance(self.raw.get("guest"), dict) else {}

    @property
    def created_ns(self) -> int:
        """When the run ended, in nanoseconds since the epoch (0 if not said)."""
        created = self.raw.get("created")
        if not created:
            return 0
        try:
            return int(datetime.fromisoformat(created).timestamp() * 1e9)
        except (TypeError, ValueError):
            raise HotlineError(f"{self.where}: 'created' is {created!r}, not the date and time "
                               "hotline writes there: the manifest was edited; make the run "
                               "again") from None

    @property
    def system_spec(self) -> dict:
        return self._get("inputs", "system", "spec")

    @property
    def cpus(self) -> int:
        return _number(self, self._get("inputs", "system", "spec", "cpus"), "cpus", 1)

    @property
    def line_bytes(self) -> int:
        """The cache line of the run's system (its spec's [caches])."""
        line_bytes = _number(self, self._get("inputs", "system", "spec", "caches",
                                             "line_bytes"), "line_bytes", 8)
        if line_bytes & (line_bytes - 1):
            raise HotlineError(f"{self.where}: line_bytes = {line_bytes} is not a power of two, "
                               "as every system spec's is (edited since?)")
        return line_bytes

    @property
    def variant(self) -> str:
        return self._get("inputs", "kernel", "variant")

    @property
    def backend(self) -> str:
        return self._get("inputs", "backend", "name")


def _number(manifest: Manifest, value, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise HotlineError(f"{manifest.where}: {name} = {value!r}, where every system spec has "
                           f"an integer >= {least} (edited since?)")
    return value


def read(run_dir: Path) -> Manifest:
    """A run directory's manifest; a one-line error saying what is wrong
    with it if it is missing, not JSON or not a JSON object."""
    file = path(run_dir)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HotlineError(f"{file}: missing") from None
    except (OSError, ValueError, RecursionError) as e:
        raise HotlineError(f"{file}: unreadable ({e})") from None
    if not isinstance(raw, dict):
        raise HotlineError(f"{file}: unreadable (a JSON {type(raw).__name__}, not an object)")
    return Manifest(raw, str(file))


def of(raw: dict | None, where: str) -> Manifest:
    """A manifest held elsewhere (runs.parquet's `manifest` column)."""
    return Manifest(raw if isinstance(raw, dict) else {}, where)


def write(run_dir: Path, raw: dict) -> Path:
    """The manifest, written whole, then renamed into place."""
    return outputs.write_text(path(run_dir), json.dumps(raw, indent=2) + "\n")
