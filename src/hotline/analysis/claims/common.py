"""What several claims' figures share: the kernel designs they compare,
and reading counters, lock instructions, storms and costs out of results."""

import json

import pandas as pd

from hotline.analysis.cost import run_cost
from hotline.analysis.listing import lock_and_unlock, lock_and_unlock_in_code
from hotline.analysis.results import Results
from hotline.errors import HotlineError
from hotline.results import schema
from hotline.results.objects import KERNEL_START
from hotline.simulate import get_backend

NAN = float("nan")

# C1-C4 are about 2.5.27's pte_chain, whose chain head lived in struct page in
# the line of page->flags, the chain lock's word: lock, head and unlock
# touched one line.  They are decided on that layout, pte-chain-inpage,
# against the same kernel without memory cgroups (the head takes
# memcg_data's slot), baseline-nomemcg.  The other layout, the heads in a
# side array (pte-chain against baseline), is measured beside it.
BASE, CHAIN = "baseline-nomemcg", "pte-chain-inpage"
SIDE_BASE, SIDE_CHAIN = "baseline", "pte-chain"
# The pte_chain functions (pte_chain_add stands for 2.5.27's page_add_rmap,
# pte_chain_remove for page_remove_rmap): C1's share of the time, and where
# C2 and C4 find the chain lock and unlock instructions.
CHAIN_FUNCTIONS = ("pte_chain_add", "pte_chain_remove")
# unlock_page's code: folio_unlock holds it on this kernel, and is inlined
# into filemap_map_pages (the fault-around path, most of a script storm's
# calls), so C9 counts its cycles wherever it was compiled (inlined_pcs).
INLINED_FUNCTIONS = ("unlock_page", "folio_unlock")
# The read of page->flags that seed 003 names after unlock_page's byte
# clear: page_waitqueue's zone lookup, page_zone() inlined into unlock_page's
# code (unlock-page-legacy's folio_waitqueue), found by the kernel's debug
# information as unlock_page's inlined copies are.
ZONE_LOOKUP = "page_zone"
# A design's measuring build (docs/kernels.md, "Counting builds and
# measuring builds"): its kernel with the counters compiled out, so that no
# counter's store sits in the code whose time is measured.  Where results
# hold its O3 profiles, a claim about a function's time reads them; the
# counts come from the design's own build.
MEASURING = "-nocounters"
# What a figure read from a measuring build says of it.
MEASURING_SAYS = "; the design's measuring build, its counters compiled out"
# The chain lock in a hashed spinlock array instead of page->flags' bit.
HASHLOCK = "pte-chain-hashlock"
# C5 is about 2.5.27's fork, which copied every mapping's PTEs; 6.1's skips
# file mappings without an anon_vma.  fork-copy-ptes copies them again.
FORK = "fork-copy-ptes"


def pct(value: float, digits: int = 0) -> str:
    return f"{value:.{digits}%}"


def backend(results: Results) -> str:
    return "/".join(results.backends) or "no"


def made_without(results: Results, runs, capability: str) -> bool:
    """Whether a backend of these runs lacks `capability` (a Backend
    attribute, such as contends_as_hardware): what its model does there is
    the model's, not a measurement."""
    return any(not getattr(get_backend(name), capability)
               for name in results.backends_of(runs))


def no_table(results: Results, name: str) -> str:
    """Why a figure that needs the table `name` cannot be measured, or "" if
    a run made it."""
    if results.has(name):
        return ""
    return f"no run made a {name} table (none of these {backend(results)} runs did)"


def splits_causes(misses: pd.DataFrame) -> bool:
    """Whether misses carry the cause split (compulsory, capacity, conflict,
    coherence); gem5's classic caches tell upgrades only, the rest is ""."""
    return bool(misses["cause"].isin(["compulsory", "capacity", "conflict", "coherence"]).any())


def counter_values(results: Results, **where) -> pd.Series:
    """Kernel counters summed over the runs selected by `where`, by name."""
    return results.select(results.counters(), **where).groupby("counter")["value"].sum()


def lock_offsets(results: Results, runs: list[str], symbol: str) -> tuple[dict[str, int], str]:
    """Offsets of the chain lock and unlock in `symbol` ({"lock": o, "unlock": o},
    either may be missing) and where they were found: in the instructions
    these runs executed (QEMU's instructions table), or, for runs that made
    no such table (gem5), in the disassembly of the kernel they booted, as
    committed results keep it (the code table) or from the kernel's build.
    A HotlineError says why neither could be read."""
    if results.has("instructions"):
        instructions = results.table("instructions")
        return lock_and_unlock(instructions[instructions["run"].isin(runs)], symbol), \
            "the instructions run"
    if not runs:
        raise HotlineError("no runs to find the lock in")
    mine = chain_code(results, runs[:1], (symbol,))
    code = {int(r.pc): (r.bytes, r.text) for r in mine.itertuples()}
    # A function's code starts at its first instruction.
    return (lock_and_unlock_in_code(code, min(code)) if code else {}), \
        "the kernel's disassembly"


def inlined_pcs(results: Results, run: str, pcs, functions=INLINED_FUNCTIONS) -> set[int]:
    """The pcs of `pcs` (kernel instructions of the run) that are in one of
    `functions`, compiled there or inlined: as committed results keep them
    (the inlined table), or from the debug information of the kernel the
    run booted.  A HotlineError says why neither could be read."""
    if results.has("inlined"):
        table = results.table("inlined")
        return {int(pc) for pc in table.loc[(table["run"] == run)
                                            & table["function"].isin(functions), "pc"]}
    return {pc for pc, chain in inline_chains(results, run, pcs).items()
            if set(chain) & set(functions)}


def inline_chains(results: Results, run: str, pcs) -> dict[int, list[str]]:
    """The functions each kernel pc of `pcs` is in, innermost first, from
    the debug information of the kernel the run booted."""
    from hotline.results.symbols import Symbolizer
    return Symbolizer(results.vmlinux(run)).inline_functions(
        [int(pc) for pc in pcs if int(pc) >= KERNEL_START])


def disassembly(results: Results, run: str, symbol: str) -> dict[int, tuple[str, str]]:
    """{pc: (bytes, text)} of `symbol` in the kernel the run booted ({} if
    the kernel has no such function); a HotlineError if its build is gone."""
    from hotline.results.symbols import Symbolizer
    symbolizer = Symbolizer(results.vmlinux(run))
    function = symbolizer.function_named(symbol)
    if function is None:
        return {}
    return symbolizer.disassemble(function.start, function.start + function.size)


def kernel_code(results: Results, runs=None, symbols=CHAIN_FUNCTIONS) -> pd.DataFrame:
    """The code table (results/schema.py): each successful run's (or each
    of `runs`') chain functions (or `symbols` of them) as its kernel
    disassembles (one objdump per kernel and function)."""
    by_kernel, rows = {}, []
    for run in results.ok["run_id"] if runs is None else sorted(runs):
        vmlinux = results.vmlinux(run)
        for symbol in symbols:
            if (vmlinux, symbol) not in by_kernel:
                by_kernel[(vmlinux, symbol)] = disassembly(results, run, symbol)
            code = by_kernel[(vmlinux, symbol)]
            start = min(code, default=0)
            rows += [{"run": run, "symbol": symbol, "offset": pc - start, "pc": pc,
                      "bytes": code[pc][0], "text": code[pc][1]} for pc in sorted(code)]
    return schema.conform(pd.DataFrame(rows, columns=list(schema.CODE)), schema.CODE, "code")


def chain_code(results: Results, runs, symbols=CHAIN_FUNCTIONS) -> pd.DataFrame:
    """The chain functions' (or `symbols` of them) code in the kernels of
    `runs` (successful runs of results), with the runs' labels: as
    committed results keep it (the code table), else from each run's
    kernel build (kernel_code; a HotlineError if a build is gone)."""
    if results.has("code"):
        code = results.table("code")
        return code[code["run"].isin(set(runs)) & code["symbol"].isin(symbols)] \
            .reset_index(drop=True)
    return results.labelled(kernel_code(results, runs, symbols))


def largest_storm(results: Results, variant: str, profiled: bool = False) -> list[str]:
    """The successful scriptstorm runs of `variant` on 4 CPUs with the most
    scripts (profiled: among those with an O3 cycle profile).  A profile is
    one storm's: an experiment can also hold a smaller storm made for
    another rule (claims-gem5.toml's one-script storm on O3 cores, for C9),
    which would weigh another core model into it."""
    runs = results.select(results.ok, workload="scriptstorm", variant=variant, cpus=4)
    if profiled:
        runs = runs[runs["run_id"].isin(set(o3_profile(results)["run"]))]
    scripts = runs["params"].map(lambda p: json.loads(p).get("scripts", 0))
    return list(runs.loc[scripts == scripts.max(), "run_id"]) if len(runs) else []


def region_seconds(results: Results, runs: list[str]) -> float:
    """Simulated seconds inside the regions of interest of gem5 runs, summed
    over regions and runs (each region's figure is the machine's, repeated
    on every core's row)."""
    core = results.table("gem5_core_stats")
    core = core[core["run"].isin(runs)]
    return float(core.groupby(["run", "region"])["sim_seconds"].first().sum())


# What a claim about time is decided on where gem5's O3 cores profiled the
# runs (cycles.parquet: every cycle charged to one instruction).
O3_CYCLES = "cycles (gem5 O3)"


def o3_profile(results: Results, **where) -> pd.DataFrame:
    """The O3 cycle profile's rows of the runs selected by `where` (empty
    where no run made one)."""
    if not results.has("cycles"):
        return results.table("cycles").iloc[0:0]
    return results.select(results.table("cycles"), **where)


def timed_variant(results: Results, design: str, **where) -> str:
    """The variant whose O3 cycle profiles give `design`'s time: its
    measuring build where results hold such profiles of it (the runs
    selected by `where`), else the design's own build."""
    measuring = design + MEASURING
    return measuring if not o3_profile(results, variant=measuring, **where).empty else design


def timed_pair(results: Results, reference: str, design: str, **where) -> tuple[str, str]:
    """The variants whose O3 cycle profiles give a reference's and a
    design's time, built alike: both measuring builds where the results
    hold profiles of both, else both kernels' own builds (a counting build
    against a measuring one would charge the counters to one side only)."""
    pair = (timed_variant(results, reference, **where), timed_variant(results, design, **where))
    return pair if all(v.endswith(MEASURING) for v in pair) else (reference, design)


# The kernel's idle loop: idle, not time, as the seeds' halting CPUs, their
# profilers (CPU_CLK_UNHALTED) and `time` had it.  The cycle profile counts
# a halted core's cycles apart; what the loop runs around its mwait is
# left out here.  (Its 65% of the tiny fork storm's cycles, 2026-11-25, was
# most likely the profile's bug with halted cycles: docs/gem5-notes.md.)
IDLE_FUNCTIONS = frozenset({"mwait_idle", "default_idle", "default_idle_call",
                            "arch_cpu_idle", "cpu_idle_poll", "poll_idle", "do_idle",
                            "cpuidle_idle_call", "intel_idle", "acpi_idle_do_entry",
                            "native_safe_halt"})


def busy_rows(cycles: pd.DataFrame) -> pd.DataFrame:
    """The rows of a cycle profile outside the kernel's idle loop."""
    return cycles[~cycles["symbol"].isin(IDLE_FUNCTIONS)]


def kernel_rows(cycles: pd.DataFrame) -> pd.DataFrame:
    """The rows of kernel instructions outside the idle loop: their cycles
    are system time, what the seeds' `time` and oprofile called it."""
    busy = busy_rows(cycles)
    return busy[busy["pc"] >= KERNEL_START]


def system_cycles(cycles: pd.DataFrame) -> pd.Series:
    """Cycles charged to kernel instructions, by variant, over every CPU and
    region of the runs: the system time of the region."""
    return kernel_rows(cycles).groupby("variant")["cycles"].sum()


def cost_ratio(results: Results, misses: pd.DataFrame, roi: pd.DataFrame, base: str,
               other: str) -> tuple[float, str, dict]:
    """other's cost over base's in the runs of `misses` and `roi` (one
    workload), what the cost is, and the figures behind it: modelled cycles,
    or on gem5 the regions' simulated time (NaN where a variant has no runs)."""
    if not {base, other} <= set(misses["variant"]):
        return NAN, "", {}
    if results.has("gem5_core_stats"):     # gem5 runs: simulated time
        seconds = {v: region_seconds(results, sorted(set(results.select(misses, variant=v)["run"])))
                   for v in (base, other)}
        return seconds[other] / seconds[base], "simulated time", \
            {v: {"simulated_seconds": s} for v, s in seconds.items()}
    cost = run_cost(misses, roi, ["variant"]).set_index("variant")
    return cost.loc[other, "modelled_cycles"] / cost.loc[base, "modelled_cycles"], \
        "modelled cycles", \
        cost.loc[[base, other], ["instructions", "stall_cycles"]].to_dict("index")
