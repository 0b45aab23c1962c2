"""The seeds' figures, each typed once, with the line of the seed it was read from.

A claim's figure copied by hand into several places drifts; a figure with no source
line cannot be checked.  So every number the claims take from a seed (the mailing-list
posts in analysis/seeds/) has one home here, as a Figure: its value, the seed file, the
1-based line, and a quote that appears verbatim on that line and holds the number as
the seed writes it.  tests/test_claim_seeds.py reads each line and checks both.

Only numbers the seeds write are here.  Ratios and shares are derived where they are
used, so a derivation cannot hide a typo in the number it starts from.

Where a quote holds more than one number (a profile row with its label), the figure's
number is the first one in the quote.  Values are the seed's own units: the L1D penalty
figures of seed 002 are raw cycle counts, not the billions the claims round them to.

  from hotline.analysis.claims.seeds import FIGURES
  FIGURES["system_with_rmap"].value / FIGURES["system_without_rmap"].value
"""

from dataclasses import dataclass

# The seed files (in analysis/seeds/), by the number claims cite them by.
SEED_FILES = {
    "000": "000_d023e6a6738eedf9.txt",  # 2.5.27 pte_chain rmap, fork/exit loops, 4-way PIII
    "001": "001_31c3f086c4b86bbe.txt",  # pagevec LRU batching, 4-way, six large-file writers
    "002": "002_a4f426efd262aca1.txt",  # makedumpfile's copy via mmap() vs read()
    "003": "003_7411048adf5c66b5.txt",  # git's make test profile: zap, unlock_page
    "004": "004_56a947d9b6e0fe78.txt",  # caching PAE pmds with pgds
}


@dataclass(frozen=True)
class Figure:
    """One number a seed gives, where it gives it."""
    value: float
    seed: str      # key of SEED_FILES
    line: int      # 1-based line number in the seed file
    quote: str     # text that appears verbatim on that line and contains the number as written


FIGURES: dict[str, Figure] = {
    # 000, C1: `time` of ./doitlots.sh 10, with and without rmap (seconds)
    "system_with_rmap": Figure(95.04, "000", 37, "95.04s system"),
    "system_without_rmap": Figure(76.19, "000", 60, "76.19s system"),
    # 000, C1: percent of all samples in the run with rmap
    "page_add_rmap_pct": Figure(5.41516, "000", 54, "5.41516     page_add_rmap"),
    "page_remove_rmap_pct": Figure(12.7341, "000", 55, "12.7341     page_remove_rmap"),

    # 000, C2: percent of the function's own samples at one instruction; the seed names
    # the instruction in the row's trailing comment, which the quote keeps.  Each of the
    # four locked instructions' rows is 5 bytes after a row of 1 to 7 samples (c013ab58,
    # c013abd8, c013ac45, c013acf8): the length of a `lock btsl`/`btrl $imm8,(%reg)`.  The
    # row holds the instruction after the locked one, where the Pentium III's counter
    # interrupt, taken at the next instruction boundary, names the locked one's time.
    "add_lock_pct": Figure(
        33.4806, "000", 125, "33.4806     0        0           (pte_chain_lock)"),
    "add_unlock_pct": Figure(
        36.0334, "000", 153, "36.0334     0        0           (pte_chain_unlock)"),
    "remove_lock_pct": Figure(
        36.3485, "000", 179, "36.3485     0        0           (The pte_chain_lock)"),
    # the row the seed marks as its chain walk, `for (pc = page->pte.chain)`: the load
    # of the chain head (a 3-byte instruction, a mov with an 8-bit displacement), and
    # the instruction after it, to which oprofile gave the walk's samples
    "remove_head_pct": Figure(
        0.151515, "000", 193, "0.151515    0        0           (The `for (pc = page->pte.chain)"),
    "remove_after_head_pct": Figure(39.8939, "000", 194, "39.8939     0        0"),
    # the seed is only fairly sure this row is the unlock: "Probably"
    "remove_unlock_pct": Figure(
        6.22727, "000", 215,
        "6.22727     0        0           (Probably the pte_chain_unlock)"),

    # 000, C3: the instrumented pte_chain_lock() of ./doitlots.sh 5
    "chain_locks": Figure(8152300.0, "000", 232, "nr_chain_locks =         8152300"),
    "chain_lock_contends": Figure(22436.0, "000", 233, "nr_chain_lock_contends =   22436"),
    "chain_lock_spins": Figure(1946858.0, "000", 234, "nr_chain_lock_spins =    1946858"),

    # 000, C5: gdb's dump of rmap_stats, the same run; the prose (lines 101-104) repeats
    # these with thousands separators
    "page_add_rmap_calls": Figure(4106673.0, "000", 89, "page_add_rmap = 4106673"),
    "add_copy_page_range": Figure(2774954.0, "000", 92, "add_copy_page_range = 2774954"),
    "add_do_no_page": Figure(1029498.0, "000", 93, "add_do_no_page = 1029498"),
    "page_remove_rmap_calls": Figure(4119825.0, "000", 90, "page_remove_rmap = 4119825"),
    "remove_zap_pte_range": Figure(
        3863194.0, "000", 93, "remove_zap_pte_range = 3863194"),

    # 001, C6: the cuts by all eight patches of the series, on the 4-way
    "lru_acquisition_cut_pct": Figure(
        90.0, "001", 23, "pagemap_lru_lock is taken is reduced by 90%"),
    "lru_contention_cut_pct": Figure(98.0, "001", 26, "reduced by 98%"),
    # "Total amount of system time lost to lock spinning went from 2.5% to 0.85%"
    "lock_spin_before_pct": Figure(2.5, "001", 27, "from 2.5% to 0.85%"),
    "lock_spin_after_pct": Figure(0.85, "001", 27, "0.85%"),
    # the workload; the post gives no file size ("a large file")
    "writers": Figure(6.0, "001", 20, "six processes each flat-out writing a large"),
    "mem_mb": Figure(512.0, "001", 19, "mem=512m"),

    # 002, C7: s390 L1D penalty cycles of makedumpfile -d31; PROBLEM_STATE counts user
    # space only, the plain counter kernel plus user; "read" is the --non-mmap run
    "mmap_total_l1d": Figure(1180577929.0, "002", 134, "1180577929      L1D_PENALTY_CYCLES"),
    "mmap_user_l1d": Figure(
        1166005960.0, "002", 135, "1166005960      PROBLEM_STATE_L1D_PENALTY_CYCLES"),
    "read_total_l1d": Figure(1691463111.0, "002", 141, "1691463111      L1D_PENALTY_CYCLES"),
    "read_user_l1d": Figure(
        151987617.0, "002", 142, "151987617      PROBLEM_STATE_L1D_PENALTY_CYCLES"),
    # mmap() calls counted by perf stat: -d31 excludes pages, so it maps in fragments
    "mmaps_fragmented": Figure(13454.0, "002", 20, "mmap -d31         13454"),
    "mmaps_whole": Figure(482.0, "002", 19, "mmap -d0            482"),

    # 003, C8: percent of CPU time; the seed is one line without a break
    "zap_pct_low": Figure(3.0, "003", 1, "3-4% of CPU time"),
    "zap_pct_high": Figure(4.0, "003", 1, "4% of CPU time"),
    "unlock_page_pct": Figure(1.7, "003", 1, "(1.7% and 1.4% respectively)"),
    "wake_up_bit_pct": Figure(1.4, "003", 1, "1.4% respectively"),
    # 003, C10: written as a word
    "wakeup_misses": Figure(3.0, "003", 1, "It takes a cache miss on three different things"),

    # 004, C11: forkwait's elapsed time, five runs each, without the patch ("Before:")
    # and with it ("After:"); one figure per run, as the seed gives no mean.  csh writes
    # elapsed time as m:ss.ss, read as seconds
    "forkwait_without_s_1": Figure(4.54, "004", 30, "0:04.54"),
    "forkwait_without_s_2": Figure(4.50, "004", 31, "0:04.50"),
    "forkwait_without_s_3": Figure(4.51, "004", 32, "0:04.51"),
    "forkwait_without_s_4": Figure(4.50, "004", 33, "0:04.50"),
    "forkwait_without_s_5": Figure(4.55, "004", 34, "0:04.55"),
    "forkwait_with_s_1": Figure(4.53, "004", 64, "0:04.53"),
    "forkwait_with_s_2": Figure(4.51, "004", 65, "0:04.51"),
    "forkwait_with_s_3": Figure(4.52, "004", 66, "0:04.52"),
    "forkwait_with_s_4": Figure(4.48, "004", 67, "0:04.48"),
    "forkwait_with_s_5": Figure(4.51, "004", 68, "0:04.51"),
}
