"""What the claims' test modules share, with each other and with
tests/test_notebooks.py: gathered experiments written by hand (Experiment,
miss, groundtruth_report; C6's LRU writers with their sampled spin profiles), the smoke results
shaped as gem5's, and the verdicts each committed results set is recorded
to decide.  A helper module, not a test module: test modules import it, as
they import tests/conftest.py and tests/made_runs.py, never each other."""

import json
from pathlib import Path

import pandas as pd

from hotline.analysis.claims import INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED
from hotline.analysis.results import Results
from tests.made_runs import write_gathered

KEY = "ab" * 32        # every hand-made run's kernel build key


class Experiment:
    """A gathered experiment written by hand: runs.parquet and the tables
    of its runs, as hotline.sweep.gather writes them."""

    def __init__(self, directory: Path, backend: str = "qemu"):
        self.directory, self.backend = directory, backend
        self.runs: list[dict] = []
        self.rows: dict[str, list[dict]] = {}

    def run(self, variant: str, workload: str, cpus: int = 4, params: dict | None = None,
            counters: dict | None = None, repeat: int = 0, summary: dict | None = None,
            clock_ghz: float | None = None, **tables: list[dict]) -> str:
        run_id = f"r{len(self.runs)}"
        spec = {"cpus": cpus, **({"gem5": {"clock_ghz": clock_ghz}} if clock_ghz else {})}
        manifest = {"inputs": {"system": {"spec": spec},
                               "backend": {"name": self.backend},
                               "kernel": {"variant": variant, "key": KEY}},
                    "guest": {"counters": {"counters": counters or {}}},
                    "tables": {name: f"{name}.parquet" for name in tables}}
        self.runs.append({"run_id": run_id, "variant": variant, "workload": workload,
                          "system": f"machine-{cpus}", "repeat": repeat,
                          "params": json.dumps(params or {}), "status": "ok",
                          "backend": self.backend,
                          "summary": json.dumps(summary) if summary else None,
                          "manifest": json.dumps(manifest)})
        for name, rows in tables.items():
            self.rows.setdefault(name, []).extend({"run": run_id, **row} for row in rows)
        return run_id

    def results(self) -> Results:
        write_gathered(self.directory, pd.DataFrame(self.runs),
                       {name: pd.DataFrame(rows) for name, rows in self.rows.items()})
        return Results(self.directory)


def miss(symbol: str, cycles: int, offset: int = 0, count: int = 1, level: str = "L1D",
         cause: str = "capacity", obj: str = "kernel-other", field: str = "",
         space: str = "kernel") -> dict:
    return {"space": space, "symbol": symbol, "offset": offset, "object": obj, "field": field,
            "level": level, "cause": cause, "count": count, "cycles": cycles}


def groundtruth_report(movb_net: list[float], andb_net: list[float] | None = None) -> dict:
    """groundtruth's report (the guest's summary), C9's positive control:
    movq_load nets 10 a round, movb_load the given nets more, and, where
    given, lock_andb_load the given nets over lock_andq_load's 30 (else
    skipped)."""
    def record(name, nets):
        return {"pattern": name, "group": "forwarding", "timing": "loop", "baseline": "empty",
                "iterations": 1000, "rounds": len(nets),
                "cycles": [5.0 + n for n in nets], "baseline_cycles": [5.0] * len(nets)}
    rows = [record("movq_load", [10.0] * len(movb_net)),
            record("movb_load", [10.0 + n for n in movb_net])]
    if andb_net is not None:
        rows += [record("lock_andq_load", [30.0] * len(andb_net)),
                 record("lock_andb_load", [30.0 + n for n in andb_net])]
    else:
        rows.append({"pattern": "lock_andb_load", "group": "forwarding", "timing": "loop",
                     "skipped": "not asked for"})
    return {"workload": "groundtruth", "patterns": rows}


# A host record as bench/groundtruth.py writes it, with C9's two
# differences made by hand: the byte lock's word read 11.8 ticks above the
# word lock's, a forwarding failure 20.1.
HOST_RECORD = {
    "cpu": {"model_name": "Some x86", "family": "6", "model": "94", "hypervisor": False},
    "unit": "TSC ticks per iteration", "rounds": 15,
    "differences": [
        {"difference": "lock_andb_load - lock_andq_load",
         "bears_on": "C9: the byte lock's extra cost when its word is read next",
         "median": 11.84, "interval": [11.7, 12.77], "coverage": 0.9648},
        {"difference": "movb_load - movq_load",
         "bears_on": "C9's positive control: a store-forwarding failure",
         "median": 20.05, "interval": [19.9, 20.86], "coverage": 0.9648}]}


def experiment(tmp_path: Path, backend: str = "qemu") -> Experiment:
    # One directory per experiment, even when a test makes several.
    return Experiment(tmp_path / f"exp{len(list(tmp_path.glob('exp*')))}", backend)


# C6's LRU writers: pagevec-1 (100 acquisitions, 50 contended) against
# baseline, and, where a spin time is given, the two kernels' sampled O3
# profiles (tests/test_claim_figures.py works out each verdict).

KERNEL_PC = 0xffffffff81000000
SPIN = "native_queued_spin_lock_slowpath"


def spun(cycles: float, of: float = 1000.0) -> list[dict]:
    """A sampled cycle profile's rows (sampled_cycles) in which the kernel
    spent `cycles` of its `of` in qspinlock's slow path, beside user code
    and the idle loop, which are not system time."""
    rows = [{"pc": KERNEL_PC, "symbol": SPIN, "cycles": cycles},
            {"pc": KERNEL_PC + 0x40, "symbol": "shrink_folio_list", "cycles": of - cycles},
            {"pc": 0x401000, "symbol": "", "cycles": 5000.0},
            {"pc": KERNEL_PC + 0x80, "symbol": "default_idle", "cycles": 9000.0}]
    return [{**row, "windows": 425} for row in rows]


def c6_experiment(tmp_path, baseline: int, contended: int, spin: float | None,
                  backend: str = "gem5") -> Experiment:
    e = experiment(tmp_path, backend=backend)
    e.run("pagevec-1", "lruwriters", counters={"lru_lock": 100, "lru_lock_contended": 50})
    e.run("baseline", "lruwriters", counters={"lru_lock": baseline,
                                              "lru_lock_contended": contended})
    if spin is not None:
        # The O3 runs' counters are their atomic cores' (not read): they
        # would refute the claim if they were.
        e.run("pagevec-1", "lruwriters", counters={"lru_lock": 100, "lru_lock_contended": 1},
              sampled_cycles=spun(25))
        e.run("baseline", "lruwriters", counters={"lru_lock": 100, "lru_lock_contended": 1},
              sampled_cycles=spun(spin))
    return e


def gem5_shaped(source: Path, target: Path) -> Path:
    """The smoke results as a gem5 experiment would give them: misses
    without the cause split (upgrades kept) and roi; no instructions,
    coherence or rapw.  A stand-in for the shape, not gem5's figures."""
    target.mkdir(parents=True)
    misses = pd.read_parquet(source / "misses.parquet")
    misses["cause"] = misses["cause"].where(misses["cause"] == "upgrade", "")
    misses.to_parquet(target / "misses.parquet")
    pd.read_parquet(source / "roi.parquet").to_parquet(target / "roi.parquet")
    runs = pd.read_parquet(source / "runs.parquet")
    runs["backend"] = "gem5"
    runs["manifest"] = runs["manifest"].map(
        lambda m: json.dumps({**json.loads(m), "tables": {}}) if isinstance(m, str) else m)
    return write_gathered(target, runs, {})


# The verdicts recorded for the committed results sets ({claim: verdict}: the
# claims each decides, the undecided left out but where said), as
# tests/test_claims_committed.py finds them on each set's tables and
# tests/test_notebooks.py in the claims page's columns.

# analysis/o3-tiny-results: the others need runs they lack; C2 is not
# decidable on this model, its remove path's unlock as dear as its lock;
# C11's intervals each hold a threshold.
O3_TINY_VERDICTS = {"C1": SUPPORTED, "C4": NOT_SUPPORTED, "C9": NOT_SUPPORTED}
# analysis/o3-tiny-32b-results, the 32-byte lines' O3 twin.
O3_TINY_32B_VERDICTS = {"C1": SUPPORTED, "C4": NOT_SUPPORTED}
# analysis/gem5-smoke-results: none (C6 was supported until its rule took in
# the spin time, which these runs, without a cycle profile, do not measure;
# C3's first repeat contends too few chain locks to average their spins).
GEM5_SMOKE_VERDICTS: dict = {}
# analysis/gem5-lru-replacement-results: C6, every cut past half the seed's.
GEM5_LRU_VERDICTS = {"C6": SUPPORTED}
# analysis/seed-forkstorm-results: C3 is QEMU's and undecided; the others
# need runs they lack.
SEED_SCALE_VERDICTS = {"C1": SUPPORTED, "C4": NOT_SUPPORTED, "C5": SUPPORTED}
# analysis/32b-smoke-results: every claim of C1-C6, the undecided too.
LINES32_VERDICTS = {"C1": SUPPORTED, "C2": INCONCLUSIVE, "C3": INCONCLUSIVE,
                    "C4": NOT_SUPPORTED, "C5": SUPPORTED, "C6": INCONCLUSIVE}
