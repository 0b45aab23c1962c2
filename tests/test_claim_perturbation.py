"""Each claim's rule on its committed tables, perturbed as a run could
perturb them: the measured instruction's or function's cycles or misses
scaled towards and past a threshold, a mix of causes or callers shifted, the
repeats jittered within the spread they show.  A perturbation that should
move a verdict moves it, one that should not leaves it, and every rule
reaches each of its verdicts (supported, not supported, inconclusive) on
data a run could give; every inconclusive verdict names its reason.

The perturbations change the tables (runs.parquet's counters and labels,
the cycle, miss and replay tables), written and sealed as a gathered
experiment, never the rules: what is checked is what the claims page would
say of such results.  Each case says, beside it, the figure the perturbed
tables give and the threshold it meets or misses (the threshold convention:
docs/claims.md).  Each claim's tables are cut to the runs, and where the
rule reads only those, the rows it reads (the chain functions' misses and
cycles for C4, and for C2 on 32-byte lines, zap's for C8), so that the
cases run in seconds."""

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from hotline import paths, sealed
from hotline.analysis import claims
from hotline.analysis.ground_truth import net, pattern_difference
from hotline.analysis.claims import CLAIMS, INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED, VERDICTS
from hotline.analysis.claims.c06 import SPIN_FUNCTIONS
from hotline.analysis.claims.c09 import FORWARDING, model_pattern
from hotline.analysis.claims.c10 import WAKE
from hotline.analysis.claims.common import (
    BASE, CHAIN, CHAIN_FUNCTIONS, FORK, HASHLOCK, IDLE_FUNCTIONS, INLINED_FUNCTIONS, MEASURING,
    kernel_rows)
from hotline.analysis.listing import lock_and_unlock, lock_and_unlock_in_code
from hotline.analysis.results import Results
from hotline.results.objects import KERNEL_START

ANALYSIS = paths.REPO / "analysis"
# One draw for every jitter, so that a case gives the same tables each time.
SEED = 60


@cache
def _committed(results: str, name: str) -> pd.DataFrame:
    return pd.read_parquet(ANALYSIS / results / f"{name}.parquet")


@dataclass
class Tables:
    """Committed tables, cut to one workload's runs (and, where `rows` says,
    to the rows the claim reads), to perturb and write as results."""
    runs: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def of(cls, results: str, names: tuple[str, ...], workload: str,
           variants: tuple[str, ...] | None = None,
           rows: Callable[[str, pd.DataFrame], pd.DataFrame] | None = None) -> "Tables":
        runs = _committed(results, "runs")
        runs = runs[(runs["workload"] == workload) & (runs["status"] == "ok")]
        if variants is not None:
            runs = runs[runs["variant"].isin(variants)]
        tables = {}
        for name in names:
            table = _committed(results, name)
            table = table[table["run"].isin(set(runs["run_id"]))]
            tables[name] = (rows(name, table) if rows else table).reset_index(drop=True)
        return cls(runs.reset_index(drop=True), tables)

    def copy(self) -> "Tables":
        return Tables(self.runs.copy(), {k: v.copy() for k, v in self.tables.items()})

    def labelled(self, name: str) -> pd.DataFrame:
        """The table with its runs' variant and repeat (a view, to compute a
        perturbation from)."""
        labels = self.runs[["run_id", "variant", "repeat"]].rename(columns={"run_id": "run"})
        return self.tables[name].merge(labels, on="run", how="left")

    def of_variant(self, name: str, variant: str) -> pd.Series:
        """Which rows of the table are the variant's runs'."""
        runs = set(self.runs.loc[self.runs["variant"] == variant, "run_id"])
        return self.tables[name]["run"].isin(runs)

    def counters(self, run: str) -> dict:
        manifest = json.loads(self.runs.loc[self.runs["run_id"] == run, "manifest"].iloc[0])
        return manifest["guest"]["counters"]["counters"]

    def change_counters(self, variant: str, change: Callable[[dict, int], None],
                        profiled: bool | None = None) -> None:
        """change(counters, repeat) on each of the variant's runs' kernel
        counters (profiled: only the runs that made a sampled cycle profile,
        or only those that did not)."""
        for i in self.runs.index[self.runs["variant"] == variant]:
            manifest = json.loads(self.runs.at[i, "manifest"])
            if profiled is not None and \
                    ("sampled_cycles" in (manifest.get("tables") or {})) != profiled:
                continue
            change(manifest["guest"]["counters"]["counters"], int(self.runs.at[i, "repeat"]))
            self.runs.at[i, "manifest"] = json.dumps(manifest)

    def write(self, directory: Path) -> Results:
        directory.mkdir(parents=True)
        for name, frame in self.tables.items():
            frame.to_parquet(directory / f"{name}.parquet", index=False)
        sealed.write_index(directory, "runs.parquet",
                           pa.Table.from_pandas(self.runs, preserve_index=False))
        return Results(directory)


def jitter(n: int, sd: float) -> np.ndarray:
    """n factors around 1 with standard deviation sd, the same every time."""
    return 1 + np.random.default_rng(SEED).normal(0, sd, n)


def scale(table: pd.DataFrame, rows: pd.Series, column: str, factor) -> None:
    """The rows' `column` times factor (a number, or one per row)."""
    table[column] = table[column].astype(float)
    table.loc[rows, column] = table.loc[rows, column] * factor


def per_repeat(t: Tables, name: str, rows: pd.Series, factors: dict[int, float],
               column: str = "cycles") -> None:
    """The rows' `column` times their repeat's factor."""
    repeat = t.labelled(name)["repeat"]
    scale(t.tables[name], rows, column, repeat[rows].map(factors).to_numpy())


def as_integers(table: pd.DataFrame, column: str) -> None:
    """Counts stay counts after scaling."""
    table[column] = table[column].round().astype(int)


# The committed tables each claim is perturbed from -------------------------

def _chain_rows(name: str, table: pd.DataFrame) -> pd.DataFrame:
    return table[table["symbol"].isin(CHAIN_FUNCTIONS)] if "symbol" in table else table


def _zap_misses(name: str, table: pd.DataFrame) -> pd.DataFrame:
    return table[table["symbol"] == "unmap_page_range"] if name == "misses" else table


def _one_row_a_run(name: str, table: pd.DataFrame) -> pd.DataFrame:
    # C11 reads the cycle profile of the microbenchmarks only to know that
    # O3 cores ran both kernels; their regions' lengths are region_cycles.
    return table.groupby("run").head(1) if name == "cycles" else table


def _unlock_rows(name: str, table: pd.DataFrame) -> pd.DataFrame:
    """What C9 reads of the script storms' cycle profiles: unlock_page's
    code, its out-of-line copies and its inlined ones (the inlined table),
    and one row a run besides, which says that the run made a profile."""
    if name != "cycles":
        return table
    inlined = _committed("o3-tiny-results", "inlined")
    copies = pd.MultiIndex.from_frame(inlined[["run", "pc"]].astype({"run": str}))
    mine = table["symbol"].isin(INLINED_FUNCTIONS) | pd.MultiIndex.from_frame(
        table[["run", "pc"]].astype({"run": str})).isin(copies)
    return table[mine | ~table["run"].duplicated()]


def _unlock_page_o3() -> Tables:
    """C9's runs as committed: the one-script storm of unlock-page-legacy,
    unlock-page-wordop and baseline (the negative control) on O3 cores, and
    groundtruth's forwarding patterns on the same cores (the positive
    control), five repeats each."""
    storms = Tables.of("o3-tiny-results", ("cycles", "inlined", "region_cycles"), "scriptstorm",
                       rows=_unlock_rows)
    control = Tables.of("o3-tiny-results", ("cycles",), "groundtruth", rows=_one_row_a_run)
    tables = dict(storms.tables)
    tables["cycles"] = pd.concat([tables["cycles"], control.tables["cycles"]],
                                 ignore_index=True)
    return Tables(pd.concat([storms.runs, control.runs], ignore_index=True), tables)


SOURCES: dict[str, Callable[[], Tables]] = {
    # C1 and C2: the tiny fork storm on O3 cores, five repeats; C2 also on
    # its 32-byte lines' twin, three repeats
    "o3 fork storm": lambda: Tables.of("o3-tiny-results", ("cycles", "code"), "forkstorm"),
    "o3 fork storm, 32-byte lines": lambda: Tables.of(
        "o3-tiny-32b-results", ("cycles", "code", "misses"), "forkstorm", rows=_chain_rows),
    # C4: the same storms' chain functions, their cycles and misses
    "o3 fork storm, chain functions": lambda: Tables.of(
        "o3-tiny-results", ("cycles", "code", "misses"), "forkstorm", rows=_chain_rows),
    # C3: the smoke fork storm on O3 cores, one run each line size; QEMU's
    "o3 smoke, 64-byte lines": lambda: Tables.of("o3-smoke-results", (), "forkstorm", (CHAIN,)),
    "o3 smoke, 32-byte lines": lambda: Tables.of("o3-smoke-32b-results", (), "forkstorm",
                                                 (CHAIN,)),
    "qemu smoke fork storm": lambda: Tables.of("smoke-results", (), "forkstorm", (CHAIN,)),
    # and gem5's timing cores, five repeats
    "gem5 timing fork storm": lambda: Tables.of("gem5-smoke-results", (), "forkstorm",
                                                (CHAIN,)),
    # C4: QEMU's five woven repeats, the chain functions' misses
    "qemu fork storm repeats": lambda: Tables.of(
        "repeats-smoke-results", ("misses", "instructions"), "forkstorm", (CHAIN, HASHLOCK),
        _chain_rows),
    # C5: the kernel's rmap counters at seed 000's scale, five repeats
    "qemu seed-scale fork storm": lambda: Tables.of("seed-forkstorm-results", (), "forkstorm",
                                                    (FORK, "baseline")),
    # C6: the LRU writers under page replacement, gem5 and QEMU, five repeats
    "gem5 lru writers": lambda: Tables.of("gem5-lru-replacement-results", ("sampled_cycles",),
                                          "lruwriters"),
    "qemu lru writers": lambda: Tables.of("lru-replacement-results", (), "lruwriters"),
    # C7: the dump copies on QEMU, one run each
    "qemu dump copies": lambda: Tables.of("smoke-results", ("misses",), "dumpcopy"),
    # C8: the one-script storm on O3 cores, five repeats
    "o3 script storm": lambda: Tables.of("o3-tiny-results", ("cycles", "misses"), "scriptstorm",
                                         rows=_zap_misses),
    # C9: the one-script storm on O3 cores, five repeats, as each kernel's
    # (_unlock_page_o3); QEMU's, one run a kernel
    "o3 unlock_page": _unlock_page_o3,
    "qemu script storm": lambda: Tables.of("smoke-results", ("rapw",), "scriptstorm"),
    # C10: QEMU's script storm, one run a kernel
    "qemu wake-ups": lambda: Tables.of("smoke-results", ("misses",), "scriptstorm",
                                       ("unlock-page-legacy", "baseline")),
    # C11: the microbenchmarks on O3 cores, five repeats
    "o3 microbenchmarks": lambda: Tables.of("o3-tiny-results", ("cycles", "region_cycles"),
                                            "lmbench-lite", rows=_one_row_a_run),
}


@cache
def _source(name: str) -> Tables:
    return SOURCES[name]()


def source(name: str) -> Tables:
    """The source's tables, a copy of their own to perturb."""
    return _source(name).copy()


# Perturbations --------------------------------------------------------------

def unchanged(t: Tables) -> None:
    """The committed tables as they are."""


def system_cycles(t: Tables) -> pd.DataFrame:
    """The fork storms' system cycles (kernel rows outside the idle loop) by
    variant and repeat."""
    return kernel_rows(t.labelled("cycles")).groupby(["variant", "repeat"])["cycles"].sum()


def chain_extra_times(k: float) -> Callable[[Tables], None]:
    """pte_chain's extra system time times k in every repeat: the chain
    kernel's kernel cycles scaled so that its ratio to the reference's
    repeat is 1 + k (ratio - 1)."""
    def perturb(t: Tables) -> None:
        system = system_cycles(t)
        ratio = system[CHAIN] / system[BASE]
        cycles = t.tables["cycles"]
        kernel = (cycles["pc"] >= KERNEL_START) & ~cycles["symbol"].isin(IDLE_FUNCTIONS)
        per_repeat(t, "cycles", t.of_variant("cycles", CHAIN) & kernel,
                   ((1 + k * (ratio - 1)) / ratio).to_dict())
    return perturb


def chain_cost_moved_out_of_the_chain_functions(t: Tables) -> None:
    """Four fifths of the chain functions' cycles charged to the function
    that calls them: the same system time, elsewhere in the profile."""
    cycles = t.tables["cycles"]
    rows = t.of_variant("cycles", CHAIN) & cycles["symbol"].isin(CHAIN_FUNCTIONS)
    moved = cycles.loc[rows].assign(cycles=cycles.loc[rows, "cycles"] * 0.8,
                                    symbol="page_add_anon_rmap", offset=0)
    scale(cycles, rows, "cycles", 0.2)
    t.tables["cycles"] = pd.concat([cycles, moved], ignore_index=True)


def repeats_paired_otherwise(t: Tables) -> None:
    """The reference's repeats paired with the chain kernel's differently
    (repeat i with i + 1): each run's jitter is its own, so any pairing is
    one the runs could have given."""
    base = t.runs["variant"] == BASE
    t.runs.loc[base, "repeat"] = (t.runs.loc[base, "repeat"] + 1) % 5


def c2_offsets(t: Tables, symbol: str, role: str) -> dict[str, int]:
    """A chain function's lock's or unlock's offset (role) in each run's
    kernel (the counting build's and the measuring build's differ), found in
    the committed code table (the kernels' disassembly): run -> offset."""
    code = t.tables["code"]
    found = {}
    for run, mine in code[code["symbol"] == symbol].groupby("run"):
        listing = {int(r.pc): (r.bytes, r.text) for r in mine.itertuples()}
        found[run] = lock_and_unlock_in_code(listing, min(listing))[role]
    return found


# The seed's remove-path asymmetry over the committed one (0.171 / 1.038 on
# the tiny storm, rounded): the remove path's unlock scaled by it costs 0.176
# of its lock, near the seed's 0.171.
TO_THE_SEEDS = 0.17


def c2_times(lock: float = 1.0, unlock: float = 1.0, remove_lock: float = 1.0,
             remove_unlock: float = 1.0, jittered: float = 0.0) -> Callable[[Tables], None]:
    """pte_chain_add's and pte_chain_remove's lock and unlock cycles scaled
    (and, with jittered, each instruction's in each run by its own factor
    of that spread)."""
    scaled = (("pte_chain_add", "lock", lock), ("pte_chain_add", "unlock", unlock),
              ("pte_chain_remove", "lock", remove_lock),
              ("pte_chain_remove", "unlock", remove_unlock))

    def perturb(t: Tables) -> None:
        cycles = t.tables["cycles"]
        runs = sorted(set(cycles["run"]))
        noise = jitter(len(runs) * len(scaled), jittered)
        for i, (symbol, role, factor) in enumerate(scaled):
            rows = (cycles["symbol"] == symbol) & \
                (cycles["offset"] == cycles["run"].map(c2_offsets(t, symbol, role)))
            scale(cycles, rows, "cycles", factor)
            if jittered:
                mine = dict(zip(runs, noise[i::len(scaled)]))
                scale(cycles, rows, "cycles", cycles.loc[rows, "run"].map(mine).to_numpy())
    return perturb


def chain_lock(spins: float = 1.0, contended: float | None = None,
               contended_count: int | None = None) -> Callable[[Tables], None]:
    """The chain lock's counters: spins per contended lock times `spins`;
    the contended locks `contended` times as many (or `contended_count`),
    each spinning as long as before."""
    def change(counters: dict, repeat: int) -> None:
        per_lock = counters["chain_lock_spins"] / counters["chain_lock_contended"]
        if contended is not None:
            counters["chain_lock_contended"] = round(counters["chain_lock_contended"] * contended)
        if contended_count is not None:
            counters["chain_lock_contended"] = contended_count
        counters["chain_lock_spins"] = round(per_lock * spins * counters["chain_lock_contended"])
    return lambda t: t.change_counters(CHAIN, change)


def at_chain_lock(t: Tables, name: str) -> pd.Series:
    """The rows of a table (misses, cycles) at the chain lock instructions
    (pte_chain_add's and pte_chain_remove's `lock bts`), found in the
    instructions each kernel's runs executed (QEMU) or in the committed code
    table (gem5: each run's kernel's)."""
    table = t.tables[name]
    rows = pd.Series(False, index=table.index)
    for variant in (CHAIN, CHAIN + MEASURING, HASHLOCK):
        mine = t.of_variant(name, variant)
        if not mine.any():
            continue
        for symbol in CHAIN_FUNCTIONS:
            if "instructions" in t.tables:
                ran = t.tables["instructions"][t.of_variant("instructions", variant)]
                lock = lock_and_unlock(ran, symbol)["lock"]
            else:
                lock = table["run"].map(c2_offsets(t, symbol, "lock"))
            rows |= mine & (table["symbol"] == symbol) & (table["offset"] == lock)
    return rows


def lock_misses(t: Tables) -> pd.Series:
    """The rows of the chain lock instructions' L1D misses."""
    return at_chain_lock(t, "misses") & (t.tables["misses"]["level"] == "L1D")


# The cycle profile's waits for a miss (c04.MISS_WAITS).
MISS_WAIT_COLUMNS = [f"cycles_{cause}" for cause in ("load_l2", "load_memory", "load_peer",
                                                     "store")]


def lock_waits(factor: float) -> Callable[[Tables], None]:
    """The chain lock's cycles waiting for its misses times factor (its
    misses served slower or faster), its cycles with them."""
    def perturb(t: Tables) -> None:
        cycles = t.tables["cycles"]
        rows = at_chain_lock(t, "cycles")
        waits = cycles.loc[rows, MISS_WAIT_COLUMNS].sum(axis=1)
        for column in MISS_WAIT_COLUMNS:
            scale(cycles, rows, column, factor)
        cycles.loc[rows, "cycles"] = cycles.loc[rows, "cycles"] + (factor - 1) * waits
    return perturb


def both(*perturbs: Callable[[Tables], None]) -> Callable[[Tables], None]:
    def perturb(t: Tables) -> None:
        for p in perturbs:
            p(t)
    return perturb


def c4_causes(upgrades_stolen: float = 0.0, off_flags: float = 0.0,
              jittered: float = 0.0) -> Callable[[Tables], None]:
    """The chain lock's misses by cause: a share of its upgrades (another
    CPU held the line shared) counted as stolen (coherence), a share of its
    page->flags misses moved to another field of struct page, and each
    count jittered by a spread of its own."""
    def perturb(t: Tables) -> None:
        misses = t.tables["misses"].astype({"count": float})
        at_lock = lock_misses(t)
        if upgrades_stolen:
            upgrades = misses.loc[at_lock & (misses["cause"] == "upgrade")]
            misses.loc[upgrades.index, "count"] = upgrades["count"] * (1 - upgrades_stolen)
            misses = pd.concat([misses, upgrades.assign(
                count=upgrades["count"] * upgrades_stolen, cause="coherence")],
                ignore_index=True)
            at_lock = at_lock.reindex(misses.index, fill_value=True)
        if off_flags:
            flags = misses.loc[at_lock & (misses["field"] == "flags")]
            misses.loc[flags.index, "count"] = flags["count"] * (1 - off_flags)
            misses = pd.concat([misses, flags.assign(count=flags["count"] * off_flags,
                                                     field="_mapcount")], ignore_index=True)
        if jittered:
            misses["count"] = misses["count"] * jitter(len(misses), jittered)
        as_integers(misses, "count")
        t.tables["misses"] = misses
    return perturb


def rmap_callers(fork_to_fault: float = 0.0, zap_to_other: float = 0.0,
                 jittered: float = 0.0) -> Callable[[Tables], None]:
    """fork-copy-ptes's rmap counters by caller: a share of fork's adds made
    by faults instead, a share of zap's removes by other callers, every
    count jittered."""
    def change(counters: dict, repeat: int) -> None:
        moved = round(counters["rmap_add_fork"] * fork_to_fault)
        counters["rmap_add_fork"] -= moved
        counters["rmap_add_fault"] += moved
        moved = round(counters["rmap_remove_zap"] * zap_to_other)
        counters["rmap_remove_zap"] -= moved
        counters["rmap_remove_other"] += moved
        if jittered:
            noise = jitter(20, jittered)[repeat::5]
            for i, name in enumerate(("rmap_add_fork", "rmap_add_fault", "rmap_remove_zap")):
                counters[name] = round(counters[name] * noise[i])
    return lambda t: (t.change_counters(FORK, change), t.change_counters("baseline", change))


def lru_lock(acquisitions: float = 1.0, contended: float = 1.0, spinning: float = 1.0,
             jittered: float = 0.0) -> Callable[[Tables], None]:
    """baseline's LRU-lock acquisitions and contended acquisitions (the
    runs without a cycle profile) times factors, its cycles in the
    spin-waits (the sampled O3 runs) times `spinning`, and the counts of
    every repeat jittered."""
    def change(counters: dict, repeat: int) -> None:
        noise = jitter(10, jittered)[2 * repeat:2 * repeat + 2] if jittered else (1, 1)
        counters["lru_lock"] = round(counters["lru_lock"] * acquisitions * noise[0])
        counters["lru_lock_contended"] = round(counters["lru_lock_contended"] * contended *
                                               noise[1])

    def perturb(t: Tables) -> None:
        t.change_counters("baseline", change, profiled=False)
        if "sampled_cycles" in t.tables:
            cycles = t.tables["sampled_cycles"]
            rows = t.of_variant("sampled_cycles", "baseline") & \
                cycles["symbol"].isin(SPIN_FUNCTIONS)
            scale(cycles, rows, "cycles", spinning)
    return perturb


def mmap_user_stalls(share: float | None = None, swapped: bool = False
                     ) -> Callable[[Tables], None]:
    """The mmap copy's user L1D stall cycles scaled so that its user share
    is `share` (the user's buffer missing less often); or the two copies'
    user and kernel stalls swapped (the opposite of the claim)."""
    def perturb(t: Tables) -> None:
        misses = t.tables["misses"]
        method = misses["run"].map(dict(zip(
            t.runs["run_id"], t.runs["params"].map(lambda p: json.loads(p).get("measure")))))
        l1d = misses["level"] == "L1D"
        if swapped:
            space = misses["space"]
            misses.loc[l1d & method.isin([1, 2]), "space"] = space.map(
                {"user": "kernel", "kernel": "user"}).fillna(space)
            return
        mmap = l1d & (method == 2)
        user = mmap & (misses["space"] == "user")
        u, k = misses.loc[user, "cycles"].sum(), misses.loc[mmap & ~user, "cycles"].sum()
        scale(misses, user, "cycles", share * k / ((1 - share) * u))
    return perturb


def zap_cycles(factor: float, top_missing_elsewhere: bool = False,
               jittered: float = 0.0) -> Callable[[Tables], None]:
    """unmap_page_range's cycles times factor (each run's also jittered),
    and its top instruction's misses on another object than struct page."""
    def perturb(t: Tables) -> None:
        cycles = t.tables["cycles"]
        zap = cycles["symbol"] == "unmap_page_range"
        scale(cycles, zap, "cycles", factor)
        if jittered:
            runs = sorted(set(cycles["run"]))
            noise = dict(zip(runs, jitter(len(runs), jittered)))
            scale(cycles, zap, "cycles", cycles.loc[zap, "run"].map(noise).to_numpy())
        if top_missing_elsewhere:
            t.tables["misses"]["object"] = "kernel-other"
    return perturb


def forwarding_times(summary: str, factor: float) -> str:
    """A groundtruth report with its store-forwarding failure (movb then
    the word load, over movq then the load) `factor` times as dear, round
    by round."""
    report = json.loads(summary)
    patterns = {p["pattern"]: p for p in report["patterns"]}
    movb, movq = (patterns[name] for name in FORWARDING)
    differences = pattern_difference(report["patterns"], *FORWARDING)
    movq_net = net(movq["cycles"], movq["baseline_cycles"])
    movb["cycles"] = [base + q + d * factor for base, q, d in zip(
        movb["baseline_cycles"], movq_net, differences)]
    return json.dumps(report)


def stalls_at_unlock(stalls: float, forwarding: float = 1.0) -> Callable[[Tables], None]:
    """unlock-page-legacy's folio_unlock charged `stalls` of the model's
    forwarding stall (the committed groundtruth runs' median) more per
    unlock_page call, the read after the byte's store waiting as a failed
    forwarding does; and the model's control (every groundtruth run's
    forwarding failure) made `forwarding` times as dear."""
    def perturb(t: Tables) -> None:
        gt = t.runs["workload"] == "groundtruth"
        stall = model_pattern([json.loads(r)["patterns"] for r in t.runs.loc[gt, "summary"]],
                              FORWARDING) * forwarding
        cycles = t.tables["cycles"]
        for i in t.runs.index[t.runs["variant"] == "unlock-page-legacy"]:
            run = t.runs.at[i, "run_id"]
            calls = t.counters(run)["unlock_page"]
            rows = (cycles["run"] == run) & (cycles["symbol"] == "folio_unlock")
            first = cycles.index[rows][0]
            cycles.loc[first, "cycles"] += stalls * stall * calls
        t.runs.loc[gt, "summary"] = [forwarding_times(r, forwarding)
                                     for r in t.runs.loc[gt, "summary"]]
    return perturb


def wake_misses(factor: float = 1.0, spread: bool = False,
                waiters: float | None = None) -> Callable[[Tables], None]:
    """unlock-page-legacy's wake-up path misses times factor; with spread,
    half of those on the zone's wait table charged to node_data instead
    (the table's pointer and the bucket on lines of their own); and a share
    of unlock_page calls finding waiters (0.03% in the committed run)."""
    def perturb(t: Tables) -> None:
        misses = t.tables["misses"]
        legacy = t.of_variant("misses", "unlock-page-legacy")
        wake = legacy & misses["symbol"].isin(WAKE) & (misses["level"] == "L1D")
        scale(misses, wake, "count", factor)
        if spread:
            table = wake & misses["object"].astype(str).str.startswith("zone_wait_table")
            moved = misses.loc[table].assign(count=misses.loc[table, "count"] / 2,
                                             object="node_data")
            scale(misses, table, "count", 0.5)
            misses = pd.concat([misses, moved], ignore_index=True)
        as_integers(misses, "count")
        t.tables["misses"] = misses
        if waiters is not None:
            t.change_counters("unlock-page-legacy", lambda c, r: c.update(
                unlock_page_waiters=round(c["unlock_page"] * waiters)))
    return perturb


def regions(elapsed: float | None = None, busy: float | None = None, longer: float = 1,
            hits: int | None = None, jittered: float = 0.0) -> Callable[[Tables], None]:
    """The forkwait regions (each run's region 0): every run's made `longer`
    times as long, its halted and unhalted cycles alike (as if run at that
    many times the iterations); then pgd-cache's elapsed cycles in each
    repeat made `elapsed` times the same repeat's baseline's, and each of its
    cores' unhalted cycles `busy` times baseline's core's (the rest of the
    region halted), each repeat also jittered; and the pgds taken from the
    cache set to `hits`."""
    def perturb(t: Tables) -> None:
        table = t.tables["region_cycles"]
        forkwait = table["region"] == 0
        for column in ("cycles", "halted_cycles"):
            table.loc[forkwait, column] = (table.loc[forkwait, column] * longer).round()
        if elapsed is not None:
            labelled = t.labelled("region_cycles")
            base = labelled[(labelled["variant"] == "baseline") & forkwait].set_index(
                ["repeat", "cpu"])
            noise = jitter(5, jittered) if jittered else np.ones(5)
            mine = t.of_variant("region_cycles", "pgd-cache") & forkwait
            keys = list(zip(labelled.loc[mine, "repeat"], labelled.loc[mine, "cpu"]))
            made = [(round(base.at[k, "cycles"] * elapsed * noise[k[0]]),
                     round((base.at[k, "cycles"] - base.at[k, "halted_cycles"]) * busy *
                           noise[k[0]])) for k in keys]
            table.loc[mine, "cycles"] = [c for c, _ in made]
            table.loc[mine, "halted_cycles"] = [c - u for c, u in made]
        if hits is not None:
            t.change_counters("pgd-cache", lambda c, r: c.update(pgd_cache_hit=hits))
    return perturb


@dataclass(frozen=True)
class Case:
    claim: str
    source: str
    perturb: Callable[[Tables], None]
    verdict: str
    why: str            # the figure the perturbed tables give, against the rule
    control: str | None = None      # the negative control's verdict, where checked
    reason: str = ""    # how an inconclusive verdict's reason starts, where checked
    # C4's verdict with upgrades counted as stolen, the reading shown beside
    # the rule's, where checked
    other: str | None = None


BETWEEN = "between the rule's verdicts: "
NOT_DECIDABLE = ("not decidable on this model: it makes the remove path's unlock cost as "
                 "much as its lock")


CASES = [
    # C1: x1.216 (1.180-1.251) system cycles; supported from x1.124, refuted
    # at x1.062 or less; the chain functions at 2% of the profile or more.
    Case("C1", "o3 fork storm", unchanged, SUPPORTED, "x1.216 (1.180-1.251)"),
    Case("C1", "o3 fork storm", repeats_paired_otherwise, SUPPORTED,
         "the same runs paired otherwise: x1.216 (1.179-1.252), still past x1.124"),
    Case("C1", "o3 fork storm", chain_extra_times(0.8), SUPPORTED,
         "a fifth less extra time: x1.173 (1.144-1.201)"),
    Case("C1", "o3 fork storm", chain_extra_times(0.55), INCONCLUSIVE,
         "x1.119 (1.099-1.138) holds x1.124"),
    Case("C1", "o3 fork storm", chain_extra_times(0.4), INCONCLUSIVE,
         "x1.086 (1.072-1.100): between x1.062 and x1.124"),
    Case("C1", "o3 fork storm", chain_extra_times(0.2), NOT_SUPPORTED,
         "x1.043 (1.036-1.050): at most x1.062"),
    Case("C1", "o3 fork storm", chain_cost_moved_out_of_the_chain_functions, INCONCLUSIVE,
         "x1.216 as before, the chain functions 1.2% of the profile: under 2%"),
    # C2: pte_chain_add's unlock/lock 0.999 (lock 35.3%, unlock 35.2%);
    # supported from 0.538 (half the seed's 1.076), refuted at 0.269 or less;
    # and the control, pte_chain_remove's unlock/lock 1.038 (1.035-1.040):
    # supported only at 0.586 or less (half the seed's effect, 1 - 0.171,
    # from 1), not decidable on this model at 0.793 or more (a quarter of it
    # or less) unless the add path refutes.
    Case("C2", "o3 fork storm", unchanged, INCONCLUSIVE, "the remove path's 1.038",
         reason=NOT_DECIDABLE),
    Case("C2", "o3 fork storm", c2_times(jittered=0.03), INCONCLUSIVE,
         "each lock and unlock jittered by 3% in each run: the remove path's 1.070 (1.038-1.102)",
         reason=NOT_DECIDABLE),
    Case("C2", "o3 fork storm", c2_times(unlock=0.7), INCONCLUSIVE,
         "the add path's 0.699, the remove path's 1.038", reason=NOT_DECIDABLE),
    Case("C2", "o3 fork storm", c2_times(remove_unlock=TO_THE_SEEDS), SUPPORTED,
         "the remove path's unlock scaled to the seed's asymmetry: 0.176 (0.176-0.177) <= 0.586"),
    Case("C2", "o3 fork storm", c2_times(remove_unlock=TO_THE_SEEDS, jittered=0.03),
         SUPPORTED, "the same, each lock and unlock jittered by 3% in each run: 0.182 "
         "(0.176-0.187)"),
    Case("C2", "o3 fork storm", c2_times(remove_unlock=0.55), SUPPORTED,
         "the remove path's 0.571 <= 0.586"),
    Case("C2", "o3 fork storm", c2_times(remove_unlock=0.7), INCONCLUSIVE,
         "the remove path's 0.726: between 0.586 and 0.793", reason=BETWEEN),
    Case("C2", "o3 fork storm", c2_times(unlock=0.7, remove_unlock=TO_THE_SEEDS), SUPPORTED,
         "0.699, the remove path's 0.176"),
    # The convention's half accepts a lock that costs 1.7 times the unlock.
    Case("C2", "o3 fork storm", c2_times(lock=1.7, remove_unlock=TO_THE_SEEDS), SUPPORTED,
         "0.588 >= 0.538"),
    Case("C2", "o3 fork storm", c2_times(unlock=0.5, remove_unlock=TO_THE_SEEDS),
         INCONCLUSIVE, "0.499: between 0.269 and 0.538", reason=BETWEEN),
    Case("C2", "o3 fork storm", c2_times(unlock=0.25), NOT_SUPPORTED,
         "the add path's 0.250 <= 0.269, the remove path's as committed"),
    Case("C2", "o3 fork storm", c2_times(unlock=0.25, remove_unlock=TO_THE_SEEDS),
         NOT_SUPPORTED, "0.250 <= 0.269, the remove path's the seed's"),
    # On 32-byte lines the remove path's unlock/lock is 0.726 (0.691-0.761):
    # between the control's thresholds.
    Case("C2", "o3 fork storm, 32-byte lines", unchanged, INCONCLUSIVE,
         "the remove path's 0.726 (0.691-0.761)", reason=BETWEEN),
    Case("C2", "o3 fork storm, 32-byte lines", c2_times(remove_unlock=0.75), SUPPORTED,
         "the remove path's 0.544 (0.518-0.571) <= 0.586"),
    Case("C2", "o3 fork storm, 32-byte lines", c2_times(remove_unlock=1.2), INCONCLUSIVE,
         "the remove path's 0.871 (0.829-0.913) >= 0.793", reason=NOT_DECIDABLE),
    # C3: spins per contended lock supported from 43.4 (half the seed's 86.8),
    # refuted at 21.7 or less; under 2% contended supports, over 10% refutes;
    # at least 30 contended locks; gem5 only.
    Case("C3", "o3 smoke, 32-byte lines", unchanged, SUPPORTED, "158.1 spins, 0.07%"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(spins=0.5), SUPPORTED, "79 spins"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(contended=20), SUPPORTED,
         "1.3% contended, as long each"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(spins=0.2), INCONCLUSIVE,
         "31.6 spins: between 21.7 and 43.4"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(contended=40), INCONCLUSIVE,
         "2.6% contended: over 2%, not over 10%"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(contended_count=29), INCONCLUSIVE,
         "29 contended locks: too few to average over"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(spins=0.1), NOT_SUPPORTED, "15.8 spins"),
    Case("C3", "o3 smoke, 32-byte lines", chain_lock(contended=170), NOT_SUPPORTED,
         "11.2% contended"),
    Case("C3", "o3 smoke, 64-byte lines", unchanged, NOT_SUPPORTED, "20.3 spins"),
    Case("C3", "o3 smoke, 64-byte lines", chain_lock(spins=1.05), NOT_SUPPORTED,
         "21.3 spins"),
    Case("C3", "o3 smoke, 64-byte lines", chain_lock(spins=2.2), SUPPORTED, "44.7 spins"),
    # gem5's timing cores, five repeats: 22, 72, 170, 62 and 51 contended
    # locks, 9.8 (2.5-17.1) spins each.
    Case("C3", "gem5 timing fork storm", unchanged, INCONCLUSIVE,
         "one repeat contends 22 locks, under 30", reason="in 1 of 5 repeats: 22 chain locks"),
    Case("C3", "gem5 timing fork storm", chain_lock(contended=1.5), NOT_SUPPORTED,
         "half as many again contended, each repeat 30 or more: 9.8 spins (2.5-17.1)"),
    Case("C3", "gem5 timing fork storm", chain_lock(spins=5, contended=1.5), INCONCLUSIVE,
         "spinning five times as long: 49 spins, the interval holding both thresholds"),
    Case("C3", "gem5 timing fork storm", chain_lock(spins=20, contended=1.5), SUPPORTED,
         "spinning twenty times as long, as the 32-byte O3 run's 158"),
    Case("C3", "gem5 timing fork storm", chain_lock(contended_count=20000, spins=5),
         NOT_SUPPORTED, "12.4% of locks contended in every repeat, spinning 49 times"),
    Case("C3", "qemu smoke fork storm", unchanged, INCONCLUSIVE, "QEMU's 1.0 spin"),
    Case("C3", "qemu smoke fork storm", chain_lock(spins=100, contended=10), INCONCLUSIVE,
         "QEMU's: 100 spins per contended lock decide nothing there"),
    # C4: the chain lock's cycles waiting for page->flags evicted or stolen
    # (on O3 cores its waits for a miss, split among causes as its misses
    # are), supported from 50%, refuted at 25% or less (the claim's all of
    # them); the share of its misses so missed bounds them from above and
    # refutes alone, also without a cycle profile.  "other" is the verdict
    # with upgrades counted as stolen.  The tiny storm on O3 cores (its
    # measuring build): 0.05% (0.03%-0.07%), 0.17% (0.03%-0.31%) with
    # upgrades counted; on 32-byte lines (no measuring build), 0.04%, and
    # 28.07% (24.96%-31.19%) with upgrades counted.
    Case("C4", "o3 fork storm, chain functions", unchanged, NOT_SUPPORTED,
         "0.05% (0.03%-0.07%); 0.17% with upgrades counted", other=NOT_SUPPORTED),
    Case("C4", "o3 fork storm, chain functions", c4_causes(jittered=0.1), NOT_SUPPORTED,
         "every count jittered by 10%: 0.05% (0.03%-0.07%)", other=NOT_SUPPORTED),
    Case("C4", "o3 fork storm, chain functions", c4_causes(upgrades_stolen=1.0),
         NOT_SUPPORTED, "every upgrade a coherence miss: 0.17% (0.03%-0.31%), the lock "
         "waiting little for its misses, whatever their cause", other=NOT_SUPPORTED),
    Case("C4", "o3 fork storm, chain functions", lock_waits(300), NOT_SUPPORTED,
         "each miss waited for 300 times as long: 9.99% (6.30%-13.67%); 31.31% "
         "(13.85%-48.78%) with upgrades counted, its interval holding 25%", other=INCONCLUSIVE),
    Case("C4", "o3 fork storm, chain functions",
         both(c4_causes(upgrades_stolen=1.0), lock_waits(1000)), INCONCLUSIVE,
         "every upgrade stolen and each miss waited for 1,000 times as long: 57.96% "
         "(38.51%-77.40%) holds 50%", other=INCONCLUSIVE),
    Case("C4", "o3 fork storm, 32-byte lines", unchanged, NOT_SUPPORTED,
         "0.04% (0.00%-0.17%); 28.07% (24.96%-31.19%) with upgrades counted holds 25%",
         other=INCONCLUSIVE),
    Case("C4", "o3 fork storm, 32-byte lines", c4_causes(upgrades_stolen=1.0), INCONCLUSIVE,
         "every upgrade a coherence miss: the rule's reading moves to 28.07% (24.96%-31.19%)",
         other=INCONCLUSIVE, reason="the 95% interval holds a threshold"),
    Case("C4", "o3 fork storm, 32-byte lines", c4_causes(upgrades_stolen=0.5), NOT_SUPPORTED,
         "half of them: 14.05% (12.47%-15.64%)", other=INCONCLUSIVE),
    Case("C4", "o3 fork storm, 32-byte lines", lock_waits(3), NOT_SUPPORTED,
         "the waits three times as long: none stolen still; 53.92% (50.05%-57.78%) with "
         "upgrades counted", other=SUPPORTED),
    Case("C4", "o3 fork storm, 32-byte lines", lock_waits(0.5), NOT_SUPPORTED,
         "the waits half as long: 16.33% (14.23%-18.43%) with upgrades counted",
         other=NOT_SUPPORTED),
    Case("C4", "o3 fork storm, 32-byte lines",
         both(c4_causes(upgrades_stolen=1.0), lock_waits(3)), SUPPORTED,
         "every upgrade stolen, the waits three times as long: 53.92% (50.05%-57.78%)",
         other=SUPPORTED),
    Case("C4", "o3 fork storm, 32-byte lines",
         both(c4_causes(upgrades_stolen=1.0), lock_waits(0.5)), NOT_SUPPORTED,
         "every upgrade stolen, the waits half as long: 16.33% (14.23%-18.43%)",
         other=NOT_SUPPORTED),
    # QEMU's five woven repeats, without a cycle profile: 6% (2%-11%) of the
    # lock's misses evicted or stolen, the rest upgrades, so at most that
    # share of its time; all of them with upgrades counted, which no cycle
    # profile weighs.  The control, pte-chain-hashlock, has no misses on
    # page->flags.
    Case("C4", "qemu fork storm repeats", unchanged, NOT_SUPPORTED, "6% (2%-11%)",
         NOT_SUPPORTED, other=INCONCLUSIVE),
    Case("C4", "qemu fork storm repeats", c4_causes(jittered=0.1), NOT_SUPPORTED,
         "every count jittered by 10%: 7% (2%-12%)", NOT_SUPPORTED, other=INCONCLUSIVE),
    Case("C4", "qemu fork storm repeats", c4_causes(upgrades_stolen=1.0), INCONCLUSIVE,
         "every upgrade a coherence miss: 100%, at most all its time, which QEMU does not "
         "measure", NOT_SUPPORTED, other=INCONCLUSIVE, reason="not measured"),
    Case("C4", "qemu fork storm repeats", c4_causes(upgrades_stolen=0.35), INCONCLUSIVE,
         "a third of the upgrades stolen: 39% (36%-42%), over 25%", reason="not measured"),
    Case("C4", "qemu fork storm repeats", c4_causes(upgrades_stolen=0.2), INCONCLUSIVE,
         "a fifth of them: 25% (22%-29%) holds 25%",
         reason="the 95% interval holds a threshold"),
    Case("C4", "qemu fork storm repeats", c4_causes(upgrades_stolen=1.0, off_flags=0.6),
         INCONCLUSIVE, "every upgrade stolen, 60% of the misses moved off page->flags, where "
         "they count for nothing: 40%", reason="not measured"),
    Case("C4", "qemu fork storm repeats", c4_causes(upgrades_stolen=1.0, off_flags=0.8),
         NOT_SUPPORTED, "80% of them off page->flags: 20%", other=NOT_SUPPORTED),
    # C5: adds 66.9% from fork, removes 98.2% from zap; supported from
    # 33.8% and 46.9% (half the seed's 67.6% and 93.8%), refuted at 16.9%
    # or 23.4% or less.  The control, baseline, 4.3% from fork.
    Case("C5", "qemu seed-scale fork storm", unchanged, SUPPORTED, "66.9%, 98.2%",
         NOT_SUPPORTED),
    Case("C5", "qemu seed-scale fork storm", rmap_callers(jittered=0.02), SUPPORTED,
         "every count jittered by 2%: 66.2%", NOT_SUPPORTED),
    Case("C5", "qemu seed-scale fork storm", rmap_callers(fork_to_fault=0.1), SUPPORTED,
         "60% from fork"),
    Case("C5", "qemu seed-scale fork storm", rmap_callers(fork_to_fault=0.6), INCONCLUSIVE,
         "26.8% from fork: between 16.9% and 33.8%"),
    Case("C5", "qemu seed-scale fork storm", rmap_callers(fork_to_fault=0.8), NOT_SUPPORTED,
         "13.4% from fork"),
    Case("C5", "qemu seed-scale fork storm", rmap_callers(zap_to_other=0.6), INCONCLUSIVE,
         "39% of removes from zap: between 23.4% and 46.9%"),
    Case("C5", "qemu seed-scale fork storm", rmap_callers(zap_to_other=0.8), NOT_SUPPORTED,
         "19.6% from zap"),
    # C6: acquisitions cut 73% (70%-77%), contention 80% (78%-83%), spin time
    # 64% (52%-76%); supported from 45%, 49%, 33% (half the seed's 90%, 98%,
    # 66%), refuted at 22.5%, 24.5%, 16.5% or less; gem5 only.
    Case("C6", "gem5 lru writers", unchanged, SUPPORTED, "73%, 80%, 64%"),
    Case("C6", "gem5 lru writers", lru_lock(jittered=0.1), SUPPORTED,
         "baseline's counts jittered by 10%, about its own spread: 74%, 79%"),
    Case("C6", "gem5 lru writers", lru_lock(acquisitions=1.5), SUPPORTED,
         "acquisitions cut 60% (55%-65%)"),
    Case("C6", "gem5 lru writers", lru_lock(acquisitions=2.0), INCONCLUSIVE,
         "acquisitions cut 46% (39%-53%): holds 45%"),
    Case("C6", "gem5 lru writers", lru_lock(contended=3.0), INCONCLUSIVE,
         "contention cut 41% (33%-49%): between 24.5% and 49%"),
    Case("C6", "gem5 lru writers", lru_lock(spinning=1.8), INCONCLUSIVE,
         "spin time cut 35% (14%-56%): holds both its thresholds"),
    Case("C6", "gem5 lru writers", lru_lock(acquisitions=3.5), NOT_SUPPORTED,
         "acquisitions cut 6% (-6%-18%)"),
    Case("C6", "gem5 lru writers", lru_lock(contended=4.6), NOT_SUPPORTED,
         "contention cut 9% (-3%-21%)"),
    Case("C6", "qemu lru writers", unchanged, INCONCLUSIVE, "QEMU's"),
    Case("C6", "qemu lru writers", lru_lock(acquisitions=0.3, contended=0.1), INCONCLUSIVE,
         "QEMU's: cuts of 91% and 93% decide nothing there"),
    # C7: mmap 92.0% user, read 0.2%: moved 91.8 points; supported from 44.9
    # (half the seed's 89.8), refuted at 22.4 or less.
    Case("C7", "qemu dump copies", unchanged, SUPPORTED, "91.8 points"),
    Case("C7", "qemu dump copies", mmap_user_stalls(0.6), SUPPORTED, "59.8 points"),
    Case("C7", "qemu dump copies", mmap_user_stalls(0.35), INCONCLUSIVE,
         "34.8 points: between 22.4 and 44.9"),
    Case("C7", "qemu dump copies", mmap_user_stalls(0.15), NOT_SUPPORTED, "14.8 points"),
    Case("C7", "qemu dump copies", mmap_user_stalls(swapped=True), NOT_SUPPORTED,
         "the copies' user and kernel stalls swapped: -91.8 points"),
    # C8: zap #4 or #5 (mean 4.6, 4.2-5.0) at 3.6%, fault-around #2 in every
    # run; supported with both in the top three and zap's top instruction
    # missing on struct page, refuted out of the top ten.
    Case("C8", "o3 script storm", unchanged, INCONCLUSIVE, "zap #4.6 (4.2-5.0)"),
    Case("C8", "o3 script storm", zap_cycles(1.1, jittered=0.03), INCONCLUSIVE,
         "zap 10% dearer, each run jittered by 3%: #4 or #5 still"),
    Case("C8", "o3 script storm", zap_cycles(1.7), SUPPORTED,
         "zap 6.1%, #3 in every run"),
    Case("C8", "o3 script storm", zap_cycles(2.5), SUPPORTED,
         "zap 8.9%, #2 in every run, fault-around #3"),
    Case("C8", "o3 script storm", zap_cycles(1.7, top_missing_elsewhere=True), INCONCLUSIVE,
         "#3, but zap's top instruction misses on something else"),
    Case("C8", "o3 script storm", zap_cycles(0.1), NOT_SUPPORTED,
         "zap 0.4%: #31 or so, out of the top ten"),
    # C9: legacy's cycles in unlock_page's code per call over wordop's, in
    # stalls of the model's forwarding control (8.0 cycles), supported from
    # half a stall a call, refuted at a quarter or less, not decidable where
    # the control costs under 2 cycles.  As committed: -0.1 (-1.8-1.5)
    # cycles a call, -0.02 (-0.22-0.19) stalls, the repeats' spread about
    # 0.2 stalls either way, so that no interval fits between the
    # thresholds (0.25 apart); the control, baseline over wordop, refuted.
    Case("C9", "o3 unlock_page", unchanged, NOT_SUPPORTED,
         "-0.02 (-0.22-0.19) stalls a call: gem5's fenced lock andb, no stall after it",
         NOT_SUPPORTED),
    Case("C9", "o3 unlock_page", stalls_at_unlock(1.0), SUPPORTED,
         "a stall every call: 0.98 (0.78-1.19)", NOT_SUPPORTED),
    Case("C9", "o3 unlock_page", stalls_at_unlock(0.75), SUPPORTED,
         "0.73 (0.53-0.94) stalls a call"),
    Case("C9", "o3 unlock_page", stalls_at_unlock(0.4), INCONCLUSIVE,
         "0.38 (0.18-0.59) stalls a call: holds both thresholds", reason="the 95% interval "
         "holds a threshold"),
    Case("C9", "o3 unlock_page", stalls_at_unlock(0.05), NOT_SUPPORTED,
         "0.03 (-0.17-0.24) stalls a call"),
    Case("C9", "o3 unlock_page", stalls_at_unlock(1.0, forwarding=0.1), INCONCLUSIVE,
         "a model whose failed forwarding costs 0.8 cycles", reason="not decidable on this "
         "model: a store-forwarding failure costs it, in cycles, 0.80 (the same in 5 runs)"),
    Case("C9", "qemu script storm", unchanged, INCONCLUSIVE,
         "QEMU's model has no cycle profile: decides nothing", INCONCLUSIVE,
         reason="no cycle profile"),
    # C10: 0.92 wake-up misses per unlock_page call, one object at 0.1 or
    # more per call, no waiters; supported from 1.5 per call on 1.5 objects
    # (half the seed's three and three) with under 5% of calls finding
    # waiters, refuted at 0.75 per call or less, or on no object.  The
    # control, baseline, takes none.
    Case("C10", "qemu wake-ups", unchanged, INCONCLUSIVE, "0.92 per call, 1 object",
         NOT_SUPPORTED),
    Case("C10", "qemu wake-ups", wake_misses(1.05), INCONCLUSIVE, "0.96 per call"),
    Case("C10", "qemu wake-ups", wake_misses(1.8), INCONCLUSIVE,
         "1.65 per call, but on one object"),
    Case("C10", "qemu wake-ups", wake_misses(1.8, spread=True), SUPPORTED,
         "1.65 per call on two objects", NOT_SUPPORTED),
    Case("C10", "qemu wake-ups", wake_misses(1.8, spread=True, waiters=0.06), INCONCLUSIVE,
         "6% of calls find waiters"),
    Case("C10", "qemu wake-ups", wake_misses(0.8), NOT_SUPPORTED, "0.73 per call"),
    # C11: the seed's forkwait (lmbench-lite's first region, 120
    # iterations, 123 timer ticks), busy cycles x0.966 (0.952-0.980),
    # elapsed x1.018 (1.001-1.036); 123 pgds reused.  Supported within 3% of
    # baseline's, elapsed and busy; refuted 3% cheaper or more in either;
    # elapsed cycles read where the region spans 100 ticks or more.
    Case("C11", "o3 microbenchmarks", unchanged, INCONCLUSIVE,
         "busy x0.966 (0.952-0.980) holds x0.97, elapsed x1.018 (1.001-1.036) holds x1.03",
         reason="the 95% interval holds a threshold"),
    Case("C11", "o3 microbenchmarks", regions(1.01, 1.0, jittered=0.005), SUPPORTED,
         "pgd-cache's elapsed 1% dearer, busy the same, both kernels moving alike"),
    Case("C11", "o3 microbenchmarks", regions(1.01, 1.0, hits=0), INCONCLUSIVE,
         "as above, but no pgd taken from the cache"),
    Case("C11", "o3 microbenchmarks", regions(1.05, 1.0, jittered=0.005), INCONCLUSIVE,
         "elapsed 5% dearer: more than 3%, which the claim neither says nor denies"),
    Case("C11", "o3 microbenchmarks", regions(1.0, 0.95, jittered=0.005), NOT_SUPPORTED,
         "busy 5% cheaper: refuted on busy cycles alone"),
    Case("C11", "o3 microbenchmarks", regions(0.95, 1.0, jittered=0.005), NOT_SUPPORTED,
         "elapsed 5% cheaper: refuted on elapsed cycles alone"),
    Case("C11", "o3 microbenchmarks", regions(1.0, 0.95, longer=0.5, jittered=0.005),
         NOT_SUPPORTED, "half as long (61 ticks): elapsed unread, busy 5% cheaper refutes"),
    Case("C11", "o3 microbenchmarks", regions(1.0, 1.0, longer=0.5, jittered=0.005),
         INCONCLUSIVE, "half as long, busy the same, elapsed unread: supported needs both",
         reason="not measured"),
]


def committed_verdict(claim: str, name: str) -> str:
    """The claim's verdict on the source's tables as committed (its
    unchanged case)."""
    (verdict,) = [c.verdict for c in CASES
                  if (c.claim, c.source) == (claim, name) and c.perturb is unchanged]
    return verdict


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.claim}-{c.source}-{c.why[:40]}")
def test_a_perturbed_table_moves_the_verdict_where_the_rule_says(case, tmp_path, monkeypatch):
    # The committed results re-analyse without the kernels' builds.
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "empty-cache"))
    tables = source(case.source)
    case.perturb(tables)
    check = claims.check(CLAIMS[case.claim], tables.write(tmp_path / "results"))
    assert check.verdict == case.verdict, (case.why, check.measured, check.reason)
    assert bool(check.reason) == (check.verdict == INCONCLUSIVE), check.reason
    assert check.reason.startswith(case.reason), (case.why, check.reason)
    if case.control:
        assert check.control.verdict == case.control, check.control.measured
    if check.control and check.control.verdict == INCONCLUSIVE:
        assert check.control.reason
    if case.other:
        assert f"with upgrades counted as stolen: {case.other};" in check.measured, \
            (case.why, check.measured)


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_every_rule_reaches_each_verdict_and_is_moved_and_left_by_perturbations(claim):
    """Each rule reaches supported, not supported and inconclusive on
    perturbed committed tables; and among its cases, some leave the
    committed verdict as it was and some move it."""
    cases = [c for c in CASES if c.claim == claim]
    assert {c.verdict for c in cases} == set(VERDICTS)
    moved = left = 0
    for c in cases:
        if c.perturb is not unchanged:
            before = committed_verdict(claim, c.source)
            moved += c.verdict != before
            left += c.verdict == before
    assert moved and left


def test_both_readings_of_stolen_reach_each_verdict_and_move():
    """C4's two readings of "stolen", each to every verdict on perturbed
    committed tables: the rule's (an upgrade not stolen) and the one shown
    beside it (upgrades counted); moving the upgrades to coherence moves the
    rule's reading, and scaling the lock's waits for its misses moves the
    other's."""
    cases = [c for c in CASES if c.claim == "C4"]
    assert {c.verdict for c in cases} == {c.other for c in cases if c.other} == set(VERDICTS)
    committed = {c.source: (c.verdict, c.other) for c in cases if c.perturb is unchanged}
    assert committed["o3 fork storm, 32-byte lines"] == (NOT_SUPPORTED, INCONCLUSIVE)
    moved = [(c.verdict, c.other) for c in cases
             if c.source == "o3 fork storm, 32-byte lines" and c.perturb is not unchanged]
    assert (INCONCLUSIVE, INCONCLUSIVE) in moved       # the upgrades moved to coherence
    assert (NOT_SUPPORTED, SUPPORTED) in moved and (NOT_SUPPORTED, NOT_SUPPORTED) in moved


def c9_with_a_stall_at_the_word_read(tmp_path, stalls: list[float]):
    """C9 checked where wordop's runs are made legacy's own (the same
    profile and calls, repeat by repeat), and then legacy is charged a stall
    of stalls[i] cycles a call in its repeat i, at its first unlock_page
    instruction, marked as the zone lookup's word read (page_zone) in both
    kernels, with the skid view's samples of those cycles at the
    instruction after it."""
    PERIOD = 1000
    t = source("o3 unlock_page")
    runs, cycles = t.runs, t.tables["cycles"]
    cycles["skid_samples"] = pd.array([0] * len(cycles), dtype="Int64")
    marked, regions = [], []
    repeats = sorted(runs.loc[runs["variant"] == "unlock-page-legacy", "repeat"])
    assert len(repeats) == len(stalls)
    def run_of(variant: str, repeat: int) -> str:
        return runs.loc[(runs["variant"] == variant) & (runs["repeat"] == repeat),
                        "run_id"].iloc[0]
    for repeat, stall in zip(repeats, stalls):
        legacy, wordop = (run_of(v, repeat) for v in ("unlock-page-legacy",
                                                       "unlock-page-wordop"))
        runs.loc[runs["run_id"] == wordop, "manifest"] = \
            runs.loc[runs["run_id"] == legacy, "manifest"].iloc[0]
        cycles = pd.concat([cycles[cycles["run"] != wordop],
                            cycles[cycles["run"] == legacy].assign(run=wordop)],
                           ignore_index=True)
        calls = t.counters(legacy)["unlock_page"]
        unlock = cycles.index[(cycles["run"] == legacy)
                              & cycles["symbol"].isin(["unlock_page", "folio_unlock"])]
        read, after = unlock[0], unlock[1]
        cycles.loc[read, "cycles"] += round(stall * calls)
        cycles.loc[after, "skid_samples"] += round(stall * calls / PERIOD)
        marked += [{"run": run, "pc": cycles.at[read, "pc"], "function": "page_zone"}
                   for run in (legacy, wordop)]
    for run in runs["run_id"]:
        regions.append({"run": run, "region": 0, "cpu": 0, "cycles": 1, "halted_cycles": 0,
                        "sample_period": PERIOD})
    t.tables["cycles"] = cycles
    t.tables["inlined"] = pd.DataFrame(marked).astype(
        {"run": "string", "pc": "uint64", "function": "string"})
    t.tables["region_cycles"] = pd.DataFrame(regions)
    return claims.check(CLAIMS["C9"], t.write(tmp_path / "results"))


def test_c9_says_where_the_difference_lies_in_the_exact_and_skid_views(tmp_path, monkeypatch):
    """Worked by hand: a stall of 24 cycles a call at the word read in every
    repeat.  The whole difference, 24 a call, is then at the word read
    exactly, and none of it in the skid view, which names the instruction
    after."""
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "empty-cache"))
    check = c9_with_a_stall_at_the_word_read(tmp_path, [24.0] * 5)
    figures = check.numbers["intervals"]
    assert figures["extra_cycles"][0] == pytest.approx(24.0, rel=1e-3)
    assert figures["word_read_exact"][0] == pytest.approx(1.0, rel=1e-3)
    assert figures["word_read_skid"][0] == pytest.approx(0.0)
    said = "of the difference, at the word read (page_zone: the load of flags, its shifts) 100%"
    assert said in check.measured
    assert "0% (the same in 5 runs) in the P6 skid view" in check.measured


def test_c9_places_no_difference_it_cannot_tell_from_none(tmp_path, monkeypatch):
    """Worked by hand: stalls of 24 cycles a call in one repeat and half a
    cycle in the other four: a mean of 5.2, a standard deviation of 10.5
    and a 95% half-width of 2.776 x 10.5 / sqrt(5) = 13.1, so the interval
    runs below zero, and the shares of so uncertain a difference are not
    shown, though every repeat has one."""
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "empty-cache"))
    check = c9_with_a_stall_at_the_word_read(tmp_path, [24.0, 0.5, 0.5, 0.5, 0.5])
    extra = check.numbers["intervals"]["extra_cycles"]
    assert extra[0] == pytest.approx(5.2, rel=1e-2) and extra[1] < 0
    assert "no difference surely above zero to place at the word read" in check.measured
    assert "of the difference" not in check.measured


def test_c2_says_where_the_host_contradicts_the_models_fenced_locks(tmp_path, monkeypatch):
    """Where the model cannot decide C2 (the remove path's unlock as dear
    as its lock), the figure says that the host's cores contradict it: their
    locked instruction drains a store that hits in 0.0 ticks and one that
    misses in 364 (bench/results/groundtruth-host.json's medians, by hand:
    0.011 and 364.26; a quarter of 364 is 91, so the hit's cost is within
    it).  Where the remove path shows the seed's asymmetry, the model
    decides, and nothing is said of the host."""
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "empty-cache"))
    said = ("the host's cores drain a store that hits in 0.0 ticks and one that misses in "
            "364: there a locked instruction costs what it drains")
    blind = claims.check(CLAIMS["C2"], source("o3 fork storm").write(tmp_path / "blind"))
    assert blind.reason.startswith("not decidable on this model") and said in blind.measured
    t = source("o3 fork storm")
    c2_times(remove_unlock=TO_THE_SEEDS)(t)
    decided = claims.check(CLAIMS["C2"], t.write(tmp_path / "decided"))
    assert decided.verdict == SUPPORTED and "host" not in decided.measured
