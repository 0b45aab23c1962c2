"""C11 (seed 004): caching page-table pages (pgds) gains nothing measurable.

The seed's forkwait: five runs each, 4.50-4.55 s without the cache and
4.48-4.53 s with it.

Measure: pgd-cache's time over baseline's on the microbenchmarks: the
regions' elapsed cycles where gem5's O3 cores ran them (a wall clock around
each region, as the seed's forkwait was timed).  Without O3 runs, a
stand-in labelled as such: modelled cycles on QEMU (a model, not time), the
regions' simulated time on gem5's in-order timing cores.
"""

from statistics import mean

from hotline.analysis.claims.claim import Claim, Needs
from hotline.analysis.claims.common import (
    O3_CYCLES, cost_ratio, counter_values, no_table, o3_profile, region_length)
from hotline.analysis.claims.rules import Condition, Measured, Rule
from hotline.analysis.claims.seeds import FIGURES
from hotline.analysis.results import Results

SEED_WITHOUT = [FIGURES[f"forkwait_without_s_{i}"].value for i in range(1, 6)]
SEED_WITH = [FIGURES[f"forkwait_with_s_{i}"].value for i in range(1, 6)]
SEED_RATIO = mean(SEED_WITH) / mean(SEED_WITHOUT)
WITHIN = 0.03

RULE = Rule(
    supported=(
        Condition("ratio", ">", 1 - WITHIN, "pgd-cache's cost over baseline's", "x"),
        Condition("ratio", "<", 1 + WITHIN, "pgd-cache's cost over baseline's", "x"),
        Condition("hits", ">", 0, "pgds taken from the cache"),
    ),
    not_supported=(Condition("ratio", "<=", 1 - WITHIN, "pgd-cache's cost over baseline's",
                             "x"),),
    basis=(f"the claim is of no effect, so there is none to take fractions of: within "
           f"{WITHIN:.0%} of baseline's cost either way supports, {WITHIN:.0%} cheaper or "
           "more refutes; pgds taken from the cache check that the cache was used"))


def figures(results: Results, design: str) -> Measured | str:
    hits = int(counter_values(results, workload="lmbench-lite", variant=design).get(
        "pgd_cache_hit", 0))
    cycles = o3_profile(results, workload="lmbench-lite")
    if {"baseline", design} <= set(cycles["variant"]):
        elapsed = {v: region_length(results, sorted(set(cycles.loc[cycles["variant"] == v,
                                                                    "run"])))
                   for v in ("baseline", design)}
        unit = "elapsed cycles (gem5 O3)"
        return Measured({"ratio": elapsed[design] / elapsed["baseline"], "hits": hits},
                        {"cost": {v: {"elapsed_cycles": c} for v, c in elapsed.items()},
                         "unit": unit}, O3_CYCLES)
    bench = results.select(results.table("misses"), workload="lmbench-lite")
    ratio, unit, cost = cost_ratio(
        results, bench, results.select(results.table("roi"), workload="lmbench-lite"),
        "baseline", design)
    if ratio != ratio:
        return no_table(results, "misses") or f"no lmbench-lite runs of baseline and {design}"
    return Measured({"ratio": ratio, "hits": hits}, {"cost": cost, "unit": unit}, unit)


def describe(f, numbers) -> str:
    return f"x{f['ratio']:.3f} {numbers['unit']}; {f['hits']:,.0f} pgds reused"


CLAIM = Claim(
    "C11", "caching page tables gains nothing measurable", "004",
    "lmbench-lite: baseline vs pgd-cache",
    f"forkwait {min(SEED_WITHOUT):.2f}-{max(SEED_WITHOUT):.2f} s without, "
    f"{min(SEED_WITH):.2f}-{max(SEED_WITH):.2f} s with (x{SEED_RATIO:.3f})",
    "pgd-cache", RULE, figures, describe, "microbench",
    needs=(Needs("lmbench-lite", ("baseline", "pgd-cache")),
           Needs("lmbench-lite", ("baseline", "pgd-cache"), o3=True)),
    no_control="no variant caches page tables in a way that must pay off",
    history=(
        "2026-11-22: supported within 3% of baseline's cost with the cache used; not "
        "supported if more than 3% cheaper.",
        "2026-11-25: decided on the regions' elapsed O3 cycles where "
        "gem5's O3 cores ran both; the thresholds unchanged.  No O3 run of the "
        "microbenchmarks had been seen.",
    ))
