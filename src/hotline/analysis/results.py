"""An experiment's gathered results (results/EXPERIMENT/: runs.parquet and
the concatenated tables, see hotline.sweep.gather), with each table's rows
labelled by the run's variant, workload, system and parameters, so that a
notebook can compare variants with one groupby."""

import copy
import json
from functools import cached_property
from pathlib import Path

import pandas as pd
import pyarrow as pa

from hotline import names, sealed
from hotline.errors import HotlineError, first_line
from hotline.kernel.build import kernel_dir
from hotline.results import schema

LABELS = ["variant", "workload", "system", "cpus", "repeat", "params"]
# The index's columns that these results read (hotline.sweep.gather writes them).
RUNS_COLUMNS = ["run_id", "variant", "workload", "system", "repeat", "params", "status",
                "summary", "manifest"]


def _regather(path: Path) -> str:
    return (f"delete {path.parent / 'runs.parquet'} and run the experiment again (./hotline "
            "run SPEC gathers its results anew without running what is done)")


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    """A gathered table with (at least) `columns`; a one-line error naming
    the file otherwise."""
    try:
        table = pd.read_parquet(path)
    except (OSError, ValueError, pa.ArrowException) as e:
        raise HotlineError(f"{path}: not a readable Parquet table ({first_line(e)}); "
                           f"{_regather(path)}") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise HotlineError(f"{path}: lacks the column(s) {', '.join(missing)} (gathered by "
                           f"another version of hotline?); {_regather(path)}")
    return table


def _json(text, path: Path, run_id: str):
    """A JSON value the index holds as text (missing: None)."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise HotlineError(f"{path}: run {run_id}'s JSON is damaged ({e}); "
                           f"{_regather(path)}") from None


class Results:
    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        self._tables: dict[str, pd.DataFrame] = {}
        self._repeat: int | None = None     # a view of one repeat (repeats())
        self._whole: "Results" = self       # what a view of one repeat cuts its tables from
        if not (self.directory / "runs.parquet").is_file():
            raise HotlineError(f"{self.directory} has no runs.parquet: give the directory of a "
                               "gathered experiment (./hotline run SPEC writes it)")
        # The index and the tables beside it are those gathered together,
        # whole: one missing, cut short or changed would be read as runs
        # that made nothing, or as other results.
        if problem := sealed.index_breach(self.directory, "runs.parquet"):
            raise HotlineError(f"{problem}; {_regather(self.directory / 'runs.parquet')}")
        self.runs  # read now: a damaged index fails here, with its name

    @cached_property
    def runs(self) -> pd.DataFrame:
        """One row per planned run, with its status; the runs that succeeded
        also get cpus, gem5's clock_ghz, the guest's summary and the kernel's
        counters."""
        path = self.directory / "runs.parquet"
        runs = _read(path, RUNS_COLUMNS)
        # Run ids name folders and files (diff's, a report's): whatever a
        # folder from elsewhere holds must be a name, not a path.
        for run_id in runs["run_id"]:
            if problem := names.problem(run_id):
                raise HotlineError(f"{path}: a run id: {problem}; {_regather(path)}")
        # Runs that did not succeed have no manifest or summary (missing values).
        manifests = [_json(m, path, r) or {}
                     for m, r in zip(runs["manifest"].astype(object), runs["run_id"])]
        specs = [m.get("inputs", {}).get("system", {}).get("spec", {}) for m in manifests]
        runs["cpus"] = [spec.get("cpus") for spec in specs]
        # gem5's core clock (a QEMU run's guest has none of its own).
        runs["clock_ghz"] = [(spec.get("gem5") or {}).get("clock_ghz") for spec in specs]
        runs["summary"] = [_json(s, path, r)
                           for s, r in zip(runs["summary"].astype(object), runs["run_id"])]
        runs["counters"] = [((m.get("guest") or {}).get("counters") or {}).get("counters")
                            for m in manifests]
        return runs

    @property
    def ok(self) -> pd.DataFrame:
        ok = self.runs[self.runs["status"] == "ok"]
        return ok if self._repeat is None else ok[ok["repeat"] == self._repeat]

    def repeats(self) -> list["Results"]:
        """One view of these results per repeat index of the successful
        runs: the runs, tables and counters of that repeat only (these
        results themselves if no run succeeded)."""
        views = []
        for repeat in sorted(set(self.ok["repeat"])):
            view = copy.copy(self)
            view._tables, view._repeat, view._whole = {}, int(repeat), self._whole
            views.append(view)
        return views or [self]

    def has(self, name: str) -> bool:
        """Whether some run made the table `name` (gem5 runs make misses and
        roi only: results/schema.py)."""
        return (self.directory / f"{name}.parquet").is_file()

    def runs_with(self, name: str) -> list[str]:
        """The successful runs that made the table `name` (their manifests
        name it): a table can hold no rows of a run that made it empty."""
        return [run for run in self.ok["run_id"]
                if name in (self.manifest(run).get("tables") or {})]

    def table(self, name: str) -> pd.DataFrame:
        """A results table of every successful run, with the run's labels.
        A table no run made has no rows, and the columns of its schema.
        Read once; each call returns a copy of its own.  A view of one
        repeat takes its rows from the whole results' table, read and
        labelled once for every repeat (labelling is most of the time the
        claims take on big tables)."""
        if name not in self._tables and self._whole is not self:
            whole = self._whole.table(name)
            self._tables[name] = whole[whole["repeat"] == self._repeat].reset_index(drop=True)
        if name not in self._tables:
            path = self.directory / f"{name}.parquet"
            if self.has(name):
                table = _read(path, ["run"])
            elif name in schema.TABLES:
                table = schema.empty(schema.TABLES[name])
            else:
                table = pd.DataFrame({"run": pd.Series(dtype="string")})
            self._tables[name] = self.labelled(table)
        return self._tables[name].copy()

    def labelled(self, frame: pd.DataFrame) -> pd.DataFrame:
        """frame's rows of successful runs (by its column `run`), with the
        runs' labels."""
        labels = self.ok[["run_id", *LABELS]].rename(columns={"run_id": "run"})
        return frame.merge(labels, on="run", how="inner")

    @property
    def backends(self) -> list[str]:
        """The backends that made the successful runs (qemu, gem5)."""
        return self.backends_of(self.ok["run_id"])

    def backends_of(self, runs) -> list[str]:
        """The backends that made these of the successful runs."""
        ok = self.ok[self.ok["run_id"].isin(list(runs))]
        if "backend" in ok.columns:
            return sorted(set(ok["backend"].dropna()))
        return sorted({(m.get("inputs") or {}).get("backend", {}).get("name", "?")
                       for m in map(self.manifest, ok["run_id"])})

    def manifest(self, run_id: str) -> dict:
        """A run's manifest, as its run directory had it ({} if it has none)."""
        path = self.directory / "runs.parquet"
        row = self.runs[self.runs["run_id"] == run_id]
        return (_json(row["manifest"].astype(object).iloc[0], path, run_id) or {}) \
            if len(row) else {}

    def vmlinux(self, run_id: str) -> Path:
        """The vmlinux a run booted, from the kernel build cache; a one-line
        error if the build is not there (results made on another machine)."""
        manifest = self.manifest(run_id)
        try:
            return kernel_dir(manifest) / "vmlinux"
        except (KeyError, TypeError):
            raise HotlineError(f"run {run_id}'s manifest names no kernel build") from None

    def select(self, frame: pd.DataFrame, **where) -> pd.DataFrame:
        """Rows whose columns have the given values; params matches a subset
        of the workload's parameters, e.g. params={"measure": 1}."""
        mask = pd.Series(True, index=frame.index)
        for column, value in where.items():
            if column == "params":
                mask &= frame["params"].map(
                    lambda p: all(json.loads(p).get(k) == v for k, v in value.items()))
            elif isinstance(value, (list, tuple, set)):
                mask &= frame[column].isin(list(value))
            else:
                mask &= frame[column] == value
        return frame[mask]

    def counters(self) -> pd.DataFrame:
        """The kernel counters of each successful run, long: one row per
        (run, counter) with the run's labels."""
        rows = [{"run": r.run_id, **{k: getattr(r, k) for k in LABELS}, "counter": name,
                 "value": value}
                for r in self.ok.itertuples() if r.counters
                for name, value in r.counters.items()]
        return pd.DataFrame(rows, columns=["run", *LABELS, "counter", "value"])
