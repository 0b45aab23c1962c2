"""An experiment's gathered results (results/EXPERIMENT/: runs.parquet and
the concatenated tables, see hotline.sweep.gather), with each table's rows
labelled by the run's variant, workload, system and parameters, so that a
notebook can compare variants with one groupby."""

import json
from functools import cached_property
from pathlib import Path

import pandas as pd

from hotline.errors import HotlineError

LABELS = ["variant", "workload", "system", "cpus", "repeat", "params"]


class Results:
    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        if not (self.directory / "runs.parquet").is_file():
            raise HotlineError(f"{self.directory} has no runs.parquet: give the directory of a "
                               "gathered experiment (./hotline run SPEC writes it)")

    @cached_property
    def runs(self) -> pd.DataFrame:
        """One row per planned run, with its status; the runs that succeeded
        also get cpus, the guest's summary and the kernel's counters."""
        runs = pd.read_parquet(self.directory / "runs.parquet")
        # Runs that did not succeed have no manifest or summary (missing values).
        manifests = [json.loads(m) if isinstance(m, str) else {}
                     for m in runs["manifest"].astype(object)]
        runs["cpus"] = [m.get("inputs", {}).get("system", {}).get("spec", {}).get("cpus")
                        for m in manifests]
        runs["summary"] = [json.loads(s) if isinstance(s, str) else None
                           for s in runs["summary"].astype(object)]
        runs["counters"] = [((m.get("guest") or {}).get("counters") or {}).get("counters")
                            for m in manifests]
        return runs

    @property
    def ok(self) -> pd.DataFrame:
        return self.runs[self.runs["status"] == "ok"]

    def table(self, name: str) -> pd.DataFrame:
        """A results table of every successful run, with the run's labels."""
        path = self.directory / f"{name}.parquet"
        if not path.is_file():
            return pd.DataFrame(columns=["run", *LABELS])
        table = pd.read_parquet(path)
        labels = self.ok[["run_id", *LABELS]].rename(columns={"run_id": "run"})
        return table.merge(labels, on="run", how="inner")

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
