"""The claims C1-C11 of the design brief, each checked against an
experiment's gathered results by a written rule.

Over 500 lines: the eleven rules beside the helpers they share, until each
claim is a module of its own (issue 31).

A claim is what a seed (a public mailing-list post, in the brief's seeds/
directory) measured, with the figure it gave.  Its check takes the gathered
results of one experiment (analysis/results.py: made by the QEMU backend or
by gem5) and returns a Check: the seed's figure, the measured one on the same
scale of comparison (a ratio or a share: absolute times do not transfer from
a 2002 Pentium III to a model), and a verdict by the claim's rule:

  supported      the measure meets the rule's "supported" thresholds
  not supported  it meets the "not supported" ones
  inconclusive   neither; or the runs the claim needs are missing; or the
                 backend cannot give what the rule needs (gem5 runs make no
                 instructions table, rapw only with O3 cores, and causes
                 only for L1D misses): the Check's reason says which

Every threshold is a named constant, stated once below its claim and used
both in the decision and in the rule's text.  Cost is modelled (cost.py):
instructions plus the stall cycles of L1 misses; shares of functions are
shares of stall cycles.

  from hotline.analysis.claims import check_all
  for check in check_all(Results("results/claims-smoke")): print(check.verdict)
"""

import json
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from hotline.analysis.cost import L1, function_shares, run_cost
from hotline.analysis.listing import lock_and_unlock, lock_and_unlock_in_code
from hotline.analysis.results import Results
from hotline.errors import HotlineError

SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE)
NAN = float("nan")

# The seed files (the brief's seeds/ directory), by the number claims cite them by.
SEED_FILES = {
    "000": "000_d023e6a6738eedf9.txt",  # 2.5.27 pte_chain rmap, fork/exit loops, 4-way PIII
    "001": "001_31c3f086c4b86bbe.txt",  # pagevec LRU batching, 4-way, six large-file writers
    "002": "002_a4f426efd262aca1.txt",  # makedumpfile's copy via mmap() vs read()
    "003": "003_7411048adf5c66b5.txt",  # git's make test profile: zap, unlock_page
    "004": "004_56a947d9b6e0fe78.txt",  # caching PAE pmds with pgds
}

# The seeds' figures, typed once from the seed files.
SEED = {
    # 000: system time 95.0 s with rmap vs 76.2 s without; shares of samples
    "C1_system_time_ratio": 95.0 / 76.2,
    "C1_page_add_rmap_share": 0.054, "C1_page_remove_rmap_share": 0.127,
    # 000: shares of the function's samples at the chain lock and unlock
    "C2_add_lock_share": 0.335, "C2_add_unlock_share": 0.360,
    "C2_remove_lock_share": 0.363, "C2_remove_unlock_share": 0.06,
    "C3_locks": 8152300, "C3_contended": 22436, "C3_spins": 1946858,
    "C5_add_fork": 2774954 / 4106673, "C5_add_fault": 1029498 / 4106673,
    "C5_remove_zap": 3863194 / 4119825,
    # 001
    "C6_acquisition_cut": 0.90, "C6_contention_cut": 0.98,
    # 002: L1D penalty cycles, user of total
    "C7_mmap_user_share": 1.166 / 1.18, "C7_read_user_share": 0.15 / 1.69,
    "C7_mmaps_fragmented": 13454, "C7_mmaps_whole": 482,
    # 003: shares of CPU
    "C8_zap_share": (0.03, 0.04), "C8_unlock_page_share": 0.017, "C8_wake_up_bit_share": 0.014,
    # 004: forkwait about 4.5 s either way
    "C11_ratio": 1.0,
}


@dataclass(frozen=True)
class Check:
    """One claim checked against one experiment's results."""
    claim: str              # "C1"
    title: str
    seed: str               # the seed file
    experiment: str         # the runs it reads
    seed_figure: str
    measured: str           # the measured figure ("-": nothing to measure)
    verdict: str            # one of VERDICTS
    rule: str               # the rule, with its thresholds
    reason: str             # why the rule could not decide ("" where it did)
    evidence: str           # the notebook of analysis/ with the evidence, e.g. "rmap"
    numbers: dict = field(default_factory=dict)   # behind the figure, for pictures


@dataclass(frozen=True)
class Claim:
    """What a claim is, apart from any results."""
    id: str
    title: str
    seed: str               # key of SEED_FILES
    experiment: str
    seed_figure: str
    rule: str
    evidence: str

    def checked(self, measured: str, verdict: str, reason: str = "", **numbers) -> Check:
        assert verdict in VERDICTS, verdict
        return Check(self.id, self.title, SEED_FILES[self.seed], self.experiment,
                     self.seed_figure, measured, verdict, self.rule, reason, self.evidence,
                     numbers)

    def inconclusive(self, reason: str, measured: str = "-", **numbers) -> Check:
        return self.checked(measured, INCONCLUSIVE, reason, **numbers)


def decide(supported: bool, not_supported: bool) -> str:
    """A rule's verdict: "supported" is tested first (NaN meets neither)."""
    return SUPPORTED if supported else NOT_SUPPORTED if not_supported else INCONCLUSIVE


CHECKS: dict[str, tuple[Claim, Callable[[Results], Check]]] = {}


def checks(claim: Claim):
    """Register the function that checks `claim` (CHECKS, in claim order)."""
    def register(function):
        CHECKS[claim.id] = (claim, function)
        return function
    return register


def check_all(results: Results) -> list[Check]:
    return [function(results) for _, function in CHECKS.values()]


def claims() -> list[Claim]:
    return [claim for claim, _ in CHECKS.values()]


# What the rules share ---------------------------------------------------------

def _backend(results: Results) -> str:
    return "/".join(results.backends) or "no"


def _no_table(results: Results, name: str) -> str:
    """Why a rule that needs the table `name` cannot decide, or "" if a run made it."""
    if results.has(name):
        return ""
    return f"no run made a {name} table (none of these {_backend(results)} runs did)"


def _splits_causes(misses: pd.DataFrame) -> bool:
    """Whether misses carry the cause split (compulsory, capacity, conflict,
    coherence); gem5's classic caches tell upgrades only, the rest is ""."""
    return bool(misses["cause"].isin(["compulsory", "capacity", "conflict", "coherence"]).any())


def _counter_values(results: Results, **where) -> pd.Series:
    """Kernel counters summed over the runs selected by `where`, by name."""
    return results.select(results.counters(), **where).groupby("counter")["value"].sum()


def lock_offsets(results: Results, runs: list[str], symbol: str) -> tuple[dict[str, int], str]:
    """Offsets of the chain lock and unlock in `symbol` ({"lock": o, "unlock": o},
    either may be missing) and where they were found: in the instructions
    these runs executed (QEMU's instructions table), or, for runs that made
    no such table (gem5), in the disassembly of the kernel they booted.  A
    HotlineError says why neither could be read."""
    if results.has("instructions"):
        instructions = results.table("instructions")
        return lock_and_unlock(instructions[instructions["run"].isin(runs)], symbol), \
            "the instructions run"
    from hotline.results.symbols import Symbolizer
    if not runs:
        raise HotlineError("no runs to find the lock in")
    symbolizer = Symbolizer(results.vmlinux(runs[0]))
    function = symbolizer.function_named(symbol)
    if function is None:
        return {}, "the kernel's disassembly"
    code = symbolizer.disassemble(function.start, function.start + function.size)
    return lock_and_unlock_in_code(code, function.start), "the kernel's disassembly"


def largest_storm(results: Results, variant: str) -> list[str]:
    """The successful scriptstorm runs of `variant` on 4 CPUs with the most
    scripts.  A profile is one storm's: an experiment can also hold a smaller
    storm made for another rule (claims-gem5.toml's one-script storm on O3
    cores, for C9), which would weigh another core model into it."""
    runs = results.select(results.ok, workload="scriptstorm", variant=variant, cpus=4)
    scripts = runs["params"].map(lambda p: json.loads(p).get("scripts", 0))
    return list(runs.loc[scripts == scripts.max(), "run_id"]) if len(runs) else []


def _pct(value: float, digits: int = 0) -> str:
    return f"{value:.{digits}%}"


# C1-C4 are about 2.5.27's pte_chain, whose chain head lived in struct page in
# the line of page->flags, the chain lock's word: lock, head and unlock
# touched one line.  They are decided on that layout, pte-chain-inpage,
# against the same kernel without memory cgroups (the head takes
# memcg_data's slot), baseline-nomemcg.  The other layout, the heads in a
# side array (pte-chain against baseline), is measured beside it.
BASE, CHAIN = "baseline-nomemcg", "pte-chain-inpage"
SIDE_BASE, SIDE_CHAIN = "baseline", "pte-chain"
# C5 is about 2.5.27's fork, which copied every mapping's PTEs; 6.1's skips
# file mappings without an anon_vma.  fork-copy-ptes copies them again.
FORK = "fork-copy-ptes"


def region_seconds(results: Results, runs: list[str]) -> float:
    """Simulated seconds inside the regions of interest of gem5 runs, summed
    over regions and runs (each region's figure is the machine's, repeated
    on every core's row)."""
    core = results.table("gem5_core_stats")
    core = core[core["run"].isin(runs)]
    return float(core.groupby(["run", "region"])["sim_seconds"].first().sum())


# C1 -------------------------------------------------------------------------

C1_RATIO_ABOVE = 1.02          # supported: the chain kernel's cost / the reference's above this
C1_CHAIN_SHARE_AT_LEAST = 0.02  # ... and pte_chain_add + pte_chain_remove this share of stalls
C1_RATIO_AT_MOST = 1.0         # not supported: the ratio at most this
C1_CHAIN = ("pte_chain_add", "pte_chain_remove")

C1 = Claim(
    "C1", "pte_chain makes the fork storm dearer", "000",
    f"forkstorm: {BASE} vs {CHAIN}, 4 CPUs ({SIDE_BASE} vs {SIDE_CHAIN} beside)",
    f"x{SEED['C1_system_time_ratio']:.2f} system time; rmap functions "
    f"{_pct(SEED['C1_page_add_rmap_share'], 1)} + {_pct(SEED['C1_page_remove_rmap_share'], 1)}",
    f"supported if {CHAIN}'s cost (modelled cycles; on gem5 the regions' simulated time) is "
    f"more than x{C1_RATIO_ABOVE} {BASE}'s and the chain functions ({' + '.join(C1_CHAIN)}) "
    f"take at least {_pct(C1_CHAIN_SHARE_AT_LEAST)} of its stall cycles; not supported if the "
    f"ratio is at most x{C1_RATIO_AT_MOST}",
    "rmap")


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


@checks(C1)
def c1(results: Results) -> Check:
    misses = results.table("misses")
    fork = results.select(misses, workload="forkstorm", cpus=4)
    fork_roi = results.select(results.table("roi"), workload="forkstorm", cpus=4)
    ratio, unit, cost = cost_ratio(results, fork, fork_roi, BASE, CHAIN)
    side, _, side_cost = cost_ratio(results, fork, fork_roi, SIDE_BASE, SIDE_CHAIN)
    beside = "" if pd.isna(side) else f"; side array ({SIDE_CHAIN}/{SIDE_BASE}) x{side:.3f}"
    if pd.isna(ratio):
        return C1.inconclusive(_no_table(results, "misses") or
                               f"no fork storm runs of {BASE} and {CHAIN} on 4 CPUs",
                               beside.removeprefix("; ") or "-")
    shares = function_shares(results.select(fork, variant=CHAIN),
                             ["variant"]).set_index("symbol")["share"]
    add, remove = (float(shares.get(s, 0)) for s in C1_CHAIN)
    verdict = decide(ratio > C1_RATIO_ABOVE and add + remove >= C1_CHAIN_SHARE_AT_LEAST,
                     ratio <= C1_RATIO_AT_MOST)
    return C1.checked(
        f"x{ratio:.3f} {unit}; pte_chain_add {_pct(add, 1)}, pte_chain_remove "
        f"{_pct(remove, 1)} of stalls{beside}", verdict,
        ratio=ratio, side_ratio=side,
        chain_shares={"pte_chain_add": add, "pte_chain_remove": remove},
        cost=cost, side_cost=side_cost)


# C2 -------------------------------------------------------------------------

C2_UNLOCK_OVER_LOCK_AT_LEAST = 0.5   # supported: add's unlock share >= this x the lock's
C2_UNLOCK_OVER_LOCK_BELOW = 0.25     # not supported: below this x the lock's

C2 = Claim(
    "C2", "the unlock costs as much as the lock", "000",
    f"forkstorm: {CHAIN}, lock vs unlock instructions, 4 CPUs ({SIDE_CHAIN} beside)",
    f"add: lock {_pct(SEED['C2_add_lock_share'], 1)}, unlock "
    f"{_pct(SEED['C2_add_unlock_share'], 1)}; remove: lock "
    f"{_pct(SEED['C2_remove_lock_share'], 1)}, unlock ~{_pct(SEED['C2_remove_unlock_share'])}",
    "the share of pte_chain_add's stall cycles at its chain lock (the first locked bit set) "
    f"and at its unlock: supported if the unlock's is at least x{C2_UNLOCK_OVER_LOCK_AT_LEAST} "
    f"the lock's; not supported if below x{C2_UNLOCK_OVER_LOCK_BELOW}; inconclusive if the "
    "lock never stalled",
    "rmap")


def lock_shares(fork: pd.DataFrame, roles: dict[str, int], symbol: str) -> dict[str, float]:
    """Share of `symbol`'s L1 stall cycles at each role's offset."""
    mine = fork[(fork["symbol"] == symbol) & fork["level"].isin(L1)]
    total = mine["cycles"].sum()
    return {role: mine.loc[mine["offset"] == offset, "cycles"].sum() / total if total else NAN
            for role, offset in roles.items()}


def chain_lock_shares(results: Results, variant: str) -> dict | None:
    """pte_chain_add's and pte_chain_remove's lock shares (lock_shares) in
    `variant`'s fork storms on 4 CPUs, and where the lock was found; None
    without such runs.  A HotlineError says why the lock is not known."""
    fork = results.select(results.table("misses"), workload="forkstorm", variant=variant,
                          cpus=4)
    if fork.empty:
        return None
    runs = sorted(set(fork["run"]))
    roles = {s: lock_offsets(results, runs, s) for s in ("pte_chain_add", "pte_chain_remove")}
    return {"add": lock_shares(fork, roles["pte_chain_add"][0], "pte_chain_add"),
            "remove": lock_shares(fork, roles["pte_chain_remove"][0], "pte_chain_remove"),
            "found_in": roles["pte_chain_add"][1]}


@checks(C2)
def c2(results: Results) -> Check:
    try:
        shares = chain_lock_shares(results, CHAIN)
    except HotlineError as e:
        return C2.inconclusive(f"the lock and unlock instructions are not known: {e}")
    if shares is None:
        return C2.inconclusive(_no_table(results, "misses") or
                               f"no {CHAIN} fork storm run on 4 CPUs")
    try:
        side = chain_lock_shares(results, SIDE_CHAIN)
    except HotlineError:
        side = None     # the side array is shown beside, never decides
    add, remove = shares["add"], shares["remove"]
    lock, unlock = add.get("lock", NAN), add.get("unlock", NAN)
    measured = (f"add: lock {_pct(lock, 1)}, unlock {_pct(unlock, 1)}; remove: lock "
                f"{_pct(remove.get('lock', NAN), 1)}, unlock {_pct(remove.get('unlock', NAN), 1)}")
    if shares["found_in"] != "the instructions run":
        measured += f" (lock and unlock found in {shares['found_in']})"
    if side:
        measured += (f"; side array ({SIDE_CHAIN}) add: lock "
                     f"{_pct(side['add'].get('lock', NAN), 1)}, unlock "
                     f"{_pct(side['add'].get('unlock', NAN), 1)}")
    numbers = {"add": add, "remove": remove,
               "side_add": side["add"] if side else {}, "side_remove": side["remove"] if side else {}}
    if not lock > 0:
        return C2.inconclusive("the lock instruction of pte_chain_add never stalled",
                               measured, **numbers)
    return C2.checked(measured, decide(unlock >= lock * C2_UNLOCK_OVER_LOCK_AT_LEAST,
                                       unlock < lock * C2_UNLOCK_OVER_LOCK_BELOW), **numbers)


# C3 -------------------------------------------------------------------------

C3_CONTENDED_BELOW = 0.02       # supported: fewer than this share of locks contended
C3_SPINS_ABOVE = 10             # ... and more spins than this per contended lock
C3_CONTENDED_ABOVE = 0.10       # not supported: more than this share contended

C3 = Claim(
    "C3", "chain locks are rarely contended, but contention spins long", "000",
    f"forkstorm: {CHAIN} counters, 4 CPUs",
    f"{SEED['C3_locks']:,} locks, {_pct(SEED['C3_contended'] / SEED['C3_locks'], 2)} contended, "
    f"{SEED['C3_spins'] / SEED['C3_contended']:.0f} spins per contended lock",
    f"supported if fewer than {_pct(C3_CONTENDED_BELOW)} of chain locks are contended and a "
    f"contended lock spins more than {C3_SPINS_ABOVE} times on average; not supported if more "
    f"than {_pct(C3_CONTENDED_ABOVE)} are contended; inconclusive otherwise, and when no lock "
    "was contended (deterministic mode's long vCPU slices hide most contention: "
    "docs/interleaving.md)",
    "rmap")


@checks(C3)
def c3(results: Results) -> Check:
    values = _counter_values(results, workload="forkstorm", variant=CHAIN, cpus=4)
    locks, contended, spins = (int(values.get(k, 0)) for k in
                               ("chain_lock", "chain_lock_contended", "chain_lock_spins"))
    if locks == 0:
        return C3.inconclusive(f"no {CHAIN} chain-lock counters from a fork storm on 4 CPUs")
    rate = contended / locks
    per = spins / contended if contended else NAN
    measured = f"{locks:,} locks, {_pct(rate, 2)} contended, {per:.1f} spins per contended lock"
    numbers = {"locks": locks, "contended": contended, "spins": spins}
    verdict = decide(bool(contended) and rate < C3_CONTENDED_BELOW and per > C3_SPINS_ABOVE,
                     rate > C3_CONTENDED_ABOVE)
    reason = "no chain lock was contended" if not contended and verdict == INCONCLUSIVE else ""
    return C3.checked(measured, verdict, reason, **numbers)


# C4 -------------------------------------------------------------------------

C4_EVICTED_OR_STOLEN_ABOVE = 0.5   # supported: more than this share of the lock's L1D misses
                                   # on page->flags and evicted or stolen
C4_SHORT_CHAINS_ABOVE = 0.8        # ... and more than this share of adds to chains 1-2 long
C4_FLAGS_BELOW = 0.25              # not supported: under this share on page->flags
C4_EVICTED_OR_STOLEN = ("capacity", "conflict", "coherence")
C4_SHORT_CHAINS = ("chain_len_1", "chain_len_2")

C4 = Claim(
    "C4", "the cost is page->flags missing", "000",
    f"forkstorm: {CHAIN}, L1D misses at the chain lock, 4 CPUs",
    "page->flags evicted or stolen; chain length no big factor",
    f"supported if more than {_pct(C4_EVICTED_OR_STOLEN_ABOVE)} of the lock instructions' L1D "
    f"misses (pte_chain_add's and pte_chain_remove's) are on struct page.flags and evicted or "
    f"stolen ({', '.join(C4_EVICTED_OR_STOLEN)}), and more than {_pct(C4_SHORT_CHAINS_ABOVE)} "
    f"of chains are 1 or 2 long; not supported if under {_pct(C4_FLAGS_BELOW)} are on "
    "page->flags",
    "rmap")


@checks(C4)
def c4(results: Results) -> Check:
    fork = results.select(results.table("misses"), workload="forkstorm", variant=CHAIN,
                          cpus=4)
    if fork.empty:
        return C4.inconclusive(_no_table(results, "misses") or
                               f"no {CHAIN} fork storm run on 4 CPUs")
    runs = sorted(set(fork["run"]))
    at_lock = []
    try:
        for symbol in ("pte_chain_add", "pte_chain_remove"):
            roles, found_in = lock_offsets(results, runs, symbol)
            if "lock" in roles:
                at_lock.append(fork[(fork["symbol"] == symbol) & (fork["offset"] == roles["lock"])
                                    & (fork["level"] == "L1D")])
    except HotlineError as e:
        return C4.inconclusive(f"the lock instructions are not known: {e}")
    at_lock = pd.concat(at_lock) if at_lock else fork.iloc[0:0]
    total = at_lock["count"].sum()
    flags = at_lock[(at_lock["object"] == "struct page") & (at_lock["field"] == "flags")]
    flags_share = flags["count"].sum() / total if total else NAN
    evicted_or_stolen = flags[flags["cause"].isin(C4_EVICTED_OR_STOLEN)]["count"].sum() / total \
        if total else NAN
    values = _counter_values(results, workload="forkstorm", variant=CHAIN, cpus=4)
    short = sum(int(values.get(k, 0)) for k in C4_SHORT_CHAINS)
    adds = sum(int(v) for k, v in values.items() if str(k).startswith("chain_len_"))
    short_share = short / adds if adds else NAN
    causes = {cause or "not known": int(n) for cause, n in
              flags.groupby("cause")["count"].sum().items()}
    by_cause = ", ".join(f"{cause} {n}" for cause, n in causes.items())
    measured = (f"{_pct(flags_share)} of lock misses on page->flags (by cause {by_cause}); "
                f"{_pct(short_share)} of chains 1-2 long")
    if found_in != "the instructions run":
        measured += f" (lock found in {found_in})"
    numbers = {"flags_share": flags_share, "evicted_or_stolen": evicted_or_stolen,
               "short_chains": short_share, "causes": causes}
    if not total:
        return C4.inconclusive("the lock instructions never missed", measured, **numbers)
    if flags_share >= C4_FLAGS_BELOW and not _splits_causes(fork):
        return C4.inconclusive(
            f"the {_backend(results)} runs' misses are not split by cause: evicted or stolen "
            "cannot be told", measured, **numbers)
    verdict = decide(evicted_or_stolen > C4_EVICTED_OR_STOLEN_ABOVE
                     and short_share > C4_SHORT_CHAINS_ABOVE, flags_share < C4_FLAGS_BELOW)
    return C4.checked(measured, verdict, **numbers)


# C5 -------------------------------------------------------------------------

C5_FORK_SHARE_WITHIN = 0.20   # supported: fork's share of adds within this of the seed's
C5_ZAP_SHARE_ABOVE = 0.80     # ... and zap's share of removes above this

C5 = Claim(
    "C5", "rmap adds come from fork, removes from zap", "000",
    f"forkstorm: {FORK} rmap counters by caller, 4 CPUs (baseline beside)",
    f"adds: {_pct(SEED['C5_add_fork'], 1)} fork, {_pct(SEED['C5_add_fault'], 1)} fault; "
    f"removes: {_pct(SEED['C5_remove_zap'], 1)} zap",
    f"supported if fork's share of rmap adds is within {C5_FORK_SHARE_WITHIN * 100:.0f} points "
    f"of the seed's and zap's share of removes above {_pct(C5_ZAP_SHARE_ABOVE)}; not supported "
    "otherwise",
    "rmap")


def rmap_by_caller(results: Results, variant: str) -> tuple[dict, dict]:
    """variant's rmap adds and removes by caller, fork storms on 4 CPUs."""
    rmap = _counter_values(results, workload="forkstorm", variant=variant, cpus=4)
    return ({k: int(v) for k, v in rmap.items() if str(k).startswith("rmap_add_")},
            {k: int(v) for k, v in rmap.items() if str(k).startswith("rmap_remove_")})


def _rmap_shares(adds: dict, removes: dict) -> str:
    total, gone = sum(adds.values()), sum(removes.values())
    return (f"adds: {_pct(adds.get('rmap_add_fork', 0) / total, 1)} fork, "
            f"{_pct(adds.get('rmap_add_fault', 0) / total, 1)} fault; removes: "
            f"{_pct(removes.get('rmap_remove_zap', 0) / gone, 1)} zap")


@checks(C5)
def c5(results: Results) -> Check:
    adds, removes = rmap_by_caller(results, FORK)
    base_adds, base_removes = rmap_by_caller(results, "baseline")
    beside = f"; baseline {_rmap_shares(base_adds, base_removes)}" \
        if sum(base_adds.values()) and sum(base_removes.values()) else ""
    if not (sum(adds.values()) and sum(removes.values())):
        return C5.inconclusive(f"no rmap counters from {FORK} fork storm runs on 4 CPUs",
                               beside.removeprefix("; ") or "-")
    fork_share = adds.get("rmap_add_fork", 0) / sum(adds.values())
    zap_share = removes.get("rmap_remove_zap", 0) / sum(removes.values())
    ok = abs(fork_share - SEED["C5_add_fork"]) <= C5_FORK_SHARE_WITHIN and \
        zap_share > C5_ZAP_SHARE_ABOVE
    return C5.checked(_rmap_shares(adds, removes) + beside, decide(ok, not ok),
                      adds=adds, removes=removes, baseline_adds=base_adds,
                      baseline_removes=base_removes)


# C6 -------------------------------------------------------------------------

C6_CUT_AT_LEAST = 0.75   # supported: baseline (15 a batch) takes this many fewer acquisitions
C6_CUT_BELOW = 0.25      # not supported: fewer than this many fewer

C6 = Claim(
    "C6", "batching LRU work cuts LRU-lock traffic", "001",
    "lruwriters: pagevec-1 vs baseline (15), 4 CPUs",
    f"-{_pct(SEED['C6_acquisition_cut'])} acquisitions, -{_pct(SEED['C6_contention_cut'])} "
    "contention",
    f"supported if baseline takes at least {_pct(C6_CUT_AT_LEAST)} fewer LRU-lock acquisitions "
    f"than pagevec-1; not supported if under {_pct(C6_CUT_BELOW)} fewer",
    "lru_batching")


@checks(C6)
def c6(results: Results) -> Check:
    lru = results.select(results.counters(), workload="lruwriters", cpus=4)
    lru = lru.pivot_table(index="variant", columns="counter", values="value", aggfunc="sum",
                          fill_value=0)
    if not ({"baseline", "pagevec-1"} <= set(lru.index) and
            lru.loc["pagevec-1"].get("lru_lock", 0)):
        why = ""
        if results.backends == ["gem5"]:
            from hotline.simulate.gem5.simulator import cannot_run
            why = cannot_run("lruwriters")
        return C6.inconclusive(why or "no lruwriters counters of pagevec-1 and baseline on 4 CPUs")
    cut = 1 - lru.loc["baseline", "lru_lock"] / lru.loc["pagevec-1", "lru_lock"]
    c1 = lru.loc["pagevec-1"].get("lru_lock_contended", 0)
    ccut = 1 - lru.loc["baseline"].get("lru_lock_contended", 0) / c1 if c1 else NAN
    measured = f"{-cut:+.0%} acquisitions, contention {-ccut:+.0%}" if c1 else \
        f"{-cut:+.0%} acquisitions, no contention seen"
    acquisitions = {v: int(lru.loc[v].get("lru_lock", 0)) for v in lru.index}
    contended = {v: int(lru.loc[v].get("lru_lock_contended", 0)) for v in lru.index}
    return C6.checked(measured, decide(cut >= C6_CUT_AT_LEAST, cut < C6_CUT_BELOW),
                      cut=cut, contention_cut=ccut, acquisitions=acquisitions,
                      contended=contended)


# C7 -------------------------------------------------------------------------

C7_USER_SHARE = 0.5     # supported: mmap's user share above this, read's below
C7_METHOD = {1: "read", 2: "mmap"}   # the dumpcopy workload's `measure` parameter

C7 = Claim(
    "C7", "mmap moves the copy's misses into user space", "002",
    "dumpcopy: read() vs mmap() copy, one copy per region",
    f"user share of L1D penalty: mmap {_pct(SEED['C7_mmap_user_share'], 1)}, read "
    f"{_pct(SEED['C7_read_user_share'], 1)}",
    f"supported if the mmap copy's user share of L1D stall cycles is above "
    f"{_pct(C7_USER_SHARE)} and the read copy's below; not supported if the mmap copy's is at "
    "most that or the read copy's at least",
    "dumpcopy")


@checks(C7)
def c7(results: Results) -> Check:
    dump = results.select(results.table("misses"), workload="dumpcopy", level="L1D")
    dump = dump[dump["params"].map(lambda p: json.loads(p).get("measure") in C7_METHOD)]
    if dump.empty:
        return C7.inconclusive(_no_table(results, "misses") or
                               "no dumpcopy runs with measure = 1 and 2")
    dump = dump.assign(method=dump["params"].map(lambda p: C7_METHOD[json.loads(p)["measure"]]))
    by = dump.groupby(["method", "space"])["cycles"].sum().unstack(fill_value=0)
    user = (by.get("user", 0) / by.sum(axis=1)).to_dict()
    mm, rd = user.get("mmap", NAN), user.get("read", NAN)
    verdict = decide(mm > C7_USER_SHARE and rd < C7_USER_SHARE,
                     mm <= C7_USER_SHARE or rd >= C7_USER_SHARE)
    return C7.checked(f"mmap {_pct(mm, 1)}, read {_pct(rd, 1)}", verdict,
                      user_share={"mmap": mm, "read": rd})


# C8 -------------------------------------------------------------------------

C8_TOP = 5            # supported: zap and fault-around both among the top this many
C8_NOT_TOP = 10       # not supported: neither among the top this many
C8_ZAP = "unmap_page_range"        # 6.1 inlines zap_pte_range into it
C8_FAULT_AROUND = ("filemap_map_pages", "next_uptodate_page")   # counted as one function

C8 = Claim(
    "C8", "zap and fault-around lead a script storm's kernel profile", "003",
    "scriptstorm: baseline kernel profile, 4 CPUs",
    f"zap_pte_range {SEED['C8_zap_share'][0]:.0%}-{SEED['C8_zap_share'][1]:.0%}, "
    f"filemap_map_pages #2, unlock_page {_pct(SEED['C8_unlock_page_share'], 1)}, __wake_up_bit "
    f"{_pct(SEED['C8_wake_up_bit_share'], 1)}",
    f"kernel functions ranked by L1 stall cycles, zap_pte_range being {C8_ZAP} (inlined in "
    f"6.1) and fault-around {' with '.join(C8_FAULT_AROUND)} (one function in the seed's "
    f"kernel): supported if both are in the top {C8_TOP} and {C8_ZAP}'s top instruction "
    f"misses on struct page; not supported if neither is in the top {C8_NOT_TOP}",
    "unlock_page")


@checks(C8)
def c8(results: Results) -> Check:
    scripts = results.select(results.table("misses"), run=largest_storm(results, "baseline"))
    if scripts.empty:
        return C8.inconclusive(_no_table(results, "misses") or
                               "no baseline scriptstorm run on 4 CPUs")
    kernel = scripts[scripts["space"] == "kernel"]
    kernel = kernel.assign(symbol=kernel["symbol"].where(~kernel["symbol"].isin(C8_FAULT_AROUND),
                                                         C8_FAULT_AROUND[0]))
    shares = function_shares(kernel, ["variant"])
    ranking = list(shares["symbol"])
    rank = {s: ranking.index(s) + 1 if s in ranking else None
            for s in (C8_ZAP, C8_FAULT_AROUND[0])}
    zap = scripts[(scripts["symbol"] == C8_ZAP) & (scripts["level"] == "L1D")]
    top = zap.groupby(["offset", "object"])["cycles"].sum().idxmax() if not zap.empty \
        else (None, "")
    in_top = all(r is not None and r <= C8_TOP for r in rank.values())
    out_of_top = all(r is None or r > C8_NOT_TOP for r in rank.values())
    share = shares.set_index("symbol")["share"]
    place = {s: f"#{r}" if r else "not ranked" for s, r in rank.items()}
    measured = (f"{C8_ZAP} {place[C8_ZAP]} ({_pct(share.get(C8_ZAP, 0), 1)}), "
                f"{' with '.join(C8_FAULT_AROUND)} {place[C8_FAULT_AROUND[0]]} "
                f"({_pct(share.get(C8_FAULT_AROUND[0], 0), 1)}); zap's top instruction misses "
                f"on {top[1] or 'nothing'}")
    return C8.checked(measured, decide(in_top and top[1] == "struct page", out_of_top),
                      rank=rank, top_object=top[1],
                      shares=share.head(C8_NOT_TOP).to_dict())


# C9 -------------------------------------------------------------------------

C9_PER_CALL_AT_LEAST = 0.10   # supported: legacy's events at unlock per unlock_page call
C9_WORDOP_BELOW = 0.1         # ... and wordop's below this fraction of legacy's
C9_STORES = ("unlock_page", "folio_unlock")

C9 = Claim(
    "C9", "unlock_page's byte clear and word read make a partial-write stall", "003",
    "scriptstorm: unlock-page-legacy (lock andb) vs unlock-page-wordop",
    "lock andb then a full-word read of flags: a read-after-partial-write stall",
    f"reads after partial writes whose store is in {' or '.join(C9_STORES)}, per unlock_page "
    f"call: supported if unlock-page-legacy has at least {C9_PER_CALL_AT_LEAST} and "
    f"unlock-page-wordop fewer than x{C9_WORDOP_BELOW} legacy's; not supported if legacy has "
    "none",
    "unlock_page")


@checks(C9)
def c9(results: Results) -> Check:
    if _no_table(results, "rapw"):
        return C9.inconclusive(_no_table(results, "rapw"))
    rapw = results.select(results.table("rapw"), workload="scriptstorm")
    # The runs that looked for these events (on gem5 only the O3 runs have a
    # load/store queue to replay in), whether they found any or not.
    looked = results.runs_with("rapw")
    unlocks = results.select(results.counters(), workload="scriptstorm", counter="unlock_page",
                             run=looked).groupby("variant")["value"].sum()
    at_unlock = rapw[rapw["store_symbol"].isin(C9_STORES)].groupby("variant")["count"].sum()
    variants = set(results.select(results.ok, workload="scriptstorm", run_id=looked)["variant"])
    if not {"unlock-page-legacy", "unlock-page-wordop"} <= variants or \
            not unlocks.get("unlock-page-legacy"):
        return C9.inconclusive("no scriptstorm runs of both variants")
    per_call = {v: at_unlock.get(v, 0) / max(unlocks.get(v, 0), 1)
                for v in ("unlock-page-legacy", "unlock-page-wordop", "baseline")}
    legacy, wordop = per_call["unlock-page-legacy"], per_call["unlock-page-wordop"]
    measured = (f"events per unlock_page call: legacy {legacy:.2f}, wordop {wordop:.2f}, "
                f"baseline {per_call['baseline']:.2f}")
    return C9.checked(measured, decide(legacy >= C9_PER_CALL_AT_LEAST and
                                       wordop < legacy * C9_WORDOP_BELOW, legacy == 0),
                      per_call=per_call)


# C10 ------------------------------------------------------------------------

C10_PER_CALL_AT_LEAST = 0.5   # supported: wake-up path misses per unlock_page call
C10_OBJECTS_AT_LEAST = 2      # ... on at least this many objects
C10_WAITERS_BELOW = 0.05      # ... while under this share of calls find waiters
C10_PER_CALL_BELOW = 0.1      # not supported: fewer misses per call than this
C10_WAKE = ("folio_unlock", "unlock_page", "__wake_up_bit", "page_waitqueue", "bit_waitqueue",
            "__wake_up", "wake_up_page", "wake_up_page_bit", "folio_wake_bit")

C10 = Claim(
    "C10", "the wake-up path's three misses for an empty queue", "003",
    "scriptstorm: unlock-page-legacy wake-up path",
    "3 misses per unlock (zone wait_table, bucket, queue head), queue almost always empty",
    f"L1D misses of the wake-up path ({', '.join(C10_WAKE)}) on objects other than struct page "
    f"and hotline's counters, per unlock_page call of unlock-page-legacy (the zone's hashed wait "
    f"table): supported if at least {C10_PER_CALL_AT_LEAST} per call on at least "
    f"{C10_OBJECTS_AT_LEAST} objects while under {_pct(C10_WAITERS_BELOW)} of calls find "
    f"waiters; not supported if under {C10_PER_CALL_BELOW} per call",
    "unlock_page")


@checks(C10)
def c10(results: Results) -> Check:
    storm = largest_storm(results, "unlock-page-legacy")
    legacy = results.select(results.table("misses"), run=storm, level="L1D")
    counters = results.select(results.counters(), run=storm)
    calls = int(counters.loc[counters["counter"] == "unlock_page", "value"].sum())
    waiters = int(counters.loc[counters["counter"] == "unlock_page_waiters", "value"].sum())
    if legacy.empty or not calls:
        return C10.inconclusive(_no_table(results, "misses") or
                                "no unlock-page-legacy scriptstorm run with counters")
    wake = legacy[legacy["symbol"].isin(C10_WAKE) & (legacy["object"] != "struct page")
                  & ~legacy["object"].str.startswith("hotline_counters")]
    per_call = wake["count"].sum() / calls
    objects = wake.groupby("object")["count"].sum().sort_values(ascending=False)
    measured = (f"{per_call:.2f} L1D misses per unlock_page call on {len(objects)} objects "
                f"({', '.join(objects.index[:4])}); {_pct(waiters / calls, 1)} of calls with "
                "waiters")
    verdict = decide(per_call >= C10_PER_CALL_AT_LEAST and len(objects) >= C10_OBJECTS_AT_LEAST
                     and waiters / calls < C10_WAITERS_BELOW, per_call < C10_PER_CALL_BELOW)
    return C10.checked(measured, verdict, per_call=per_call, waiters=waiters / calls,
                       objects={o: int(n) / calls for o, n in objects.items()})


# C11 ------------------------------------------------------------------------

C11_WITHIN = 0.03    # supported: pgd-cache's cost within this of baseline's;
                     # not supported: more than this cheaper

C11 = Claim(
    "C11", "caching page tables gains nothing measurable", "004",
    "lmbench-lite: baseline vs pgd-cache",
    f"forkwait ~4.5 s either way (x{SEED['C11_ratio']:.2f})",
    f"supported if pgd-cache's cost (modelled cycles; on gem5 the regions' simulated time) is "
    f"within {_pct(C11_WITHIN)} of baseline's and the cache is used (pgd_cache_hit > 0); not "
    f"supported if pgd-cache is more than {_pct(C11_WITHIN)} cheaper",
    "microbench")


@checks(C11)
def c11(results: Results) -> Check:
    bench = results.select(results.table("misses"), workload="lmbench-lite")
    ratio, unit, cost = cost_ratio(results, bench,
                                   results.select(results.table("roi"), workload="lmbench-lite"),
                                   "baseline", "pgd-cache")
    if pd.isna(ratio):
        return C11.inconclusive(_no_table(results, "misses") or
                                "no lmbench-lite runs of both variants")
    hits = int(_counter_values(results, workload="lmbench-lite", variant="pgd-cache").get(
        "pgd_cache_hit", 0))
    verdict = decide(abs(ratio - 1) < C11_WITHIN and hits > 0, ratio < 1 - C11_WITHIN)
    return C11.checked(f"x{ratio:.3f} {unit}; {hits:,} pgds reused", verdict,
                       ratio=ratio, hits=hits, cost=cost)
