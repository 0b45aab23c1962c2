"""The roles of the seed's rmap listings (analysis/listing.py chain_roles),
found in the code of the pte_chain functions as the kernel compiles them,
and each role's share of a function's time (role_shares)."""

import math

import pandas as pd

from hotline import paths
from hotline.analysis.listing import chain_roles, role_shares
from hotline.analysis.results import Results
from hotline.report import seed_listing

K = 0xffffffff81143bd0

# pte_chain_remove on pte-chain-inpage as objdump prints it (analysis/
# o3-tiny-results/code.parquet), the error path after the unlock cut short.
REMOVE = """\
0 cmpq $0x0,0x983618(%rip) # ffffffff81ac71f0 <pte_chain_cache>
8 je ffffffff81143cbf <pte_chain_remove+0xef>
14 push %rbp
19 mov %rdi,%rbx
22 incl %gs:0x7eed6fd3(%rip) # 1abc0 <__preempt_count>
29 incq %gs:0x7eedb22b(%rip) # 1ee20 <hotline_counter_state+0x80>
37 lock btsq $0x18,(%rdi)
43 jb ffffffff81143c8e <pte_chain_remove+0xbe>
49 mov 0x38(%rbx),%rsi
53 lea 0x38(%rbx),%rdi
57 xor %eax,%eax
59 test %rsi,%rsi
62 jne ffffffff81143c1a <pte_chain_remove+0x4a>
64 jmp ffffffff81143c33 <pte_chain_remove+0x63>
66 mov %rdx,%rdi
69 test %rsi,%rsi
72 je ffffffff81143c33 <pte_chain_remove+0x63>
74 mov 0x8(%rsi),%rcx
78 mov %rsi,%rdx
81 add $0x1,%rax
85 mov (%rsi),%rsi
88 cmp %rbp,%rcx
91 jne ffffffff81143c12 <pte_chain_remove+0x42>
93 mov %rsi,(%rdi)
96 mov %rdx,%rsi
99 lock btrq $0x18,(%rbx)
105 decl %gs:0x7eed6f80(%rip) # 1abc0 <__preempt_count>
114 add %rax,%gs:0x7eedb1c6(%rip) # 1ee10 <hotline_counter_state+0x70>
127 mov 0x98359a(%rip),%rdi # ffffffff81ac71f0 <pte_chain_cache>
136 jmp ffffffff8116e8a0 <kmem_cache_free>
190 incq %gs:0x7eedb192(%rip) # 1ee28 <hotline_counter_state+0x88>
200 mov (%rbx),%rax
210 lock btsq $0x18,(%rbx)
216 jb ffffffff81143c98 <pte_chain_remove+0xc8>
226 jmp ffffffff81143c01 <pte_chain_remove+0x31>
"""

# pte_chain_add on pte-chain (the heads in an array): the first load after
# the lock is the array's base, a global; the head is the slot it indexes.
ADD_ARRAY = """\
5 mov 0x983734(%rip),%rdi # ffffffff81ac71f0 <pte_chain_cache>
25 call ffffffff8116de70 <kmem_cache_alloc>
39 mov %rbp,0x8(%rax)
58 lock btsq $0x18,(%rbx)
64 jb ffffffff81143b77 <pte_chain_add+0xc7>
70 mov 0x980048(%rip),%rdx # ffffffff81ac9e70 <pte_chain_heads>
77 sub 0x7c2d36(%rip),%rcx # ffffffff8190cb68 <vmemmap_base>
84 mov (%rdx,%rcx,8),%rdx
88 mov %rax,(%rdx,%rcx,8)
92 lock btrq $0x18,(%rbx)
"""


def code(listing: str) -> dict[int, tuple[str, str]]:
    rows = (line.split(" ", 1) for line in listing.splitlines())
    return {K + int(offset): ("", text) for offset, text in rows}


def test_the_roles_of_the_remove_path():
    # Worked out from the listing: the lock bts at 37 (its jb after it), the first load
    # through a register after it at 49 (page->pte_chain, 0x38 into the
    # page), then 53; the backward jne at 91 goes to 66, so the walk is
    # 66..91; the btr at 99, the decl after it; the free is the tail jump at 136.  The
    # contended path's second bts (210) and its jump back (226) are after
    # the unlock, so neither is a role.
    assert chain_roles(code(REMOVE), K) == {
        "allocation": [136], "lock": [37], "after lock": [43], "head load": [49],
        "after head load": [53], "walk": [66, 69, 72, 74, 78, 81, 85, 88, 91], "unlock": [99],
        "after unlock": [105]}


def test_the_head_is_the_slot_not_the_global_array_base():
    roles = chain_roles(code(ADD_ARRAY), K)
    assert roles == {"allocation": [25], "lock": [58], "after lock": [64], "head load": [84],
                     "after head load": [88], "unlock": [92]}


def test_code_without_a_lock_has_no_roles():
    assert chain_roles(code("0 push %rbp\n1 ret\n"), K) == {}


def test_each_roles_share_in_the_three_views():
    # 200 cycles in all: the lock 80, the walk's two instructions 30 + 20,
    # the rest 70.  Samples 10 (next) and 20 (skid): the lock 4 and 2, the
    # walk 1 + 1 and 10 + 6.
    cycles = pd.DataFrame({"offset": [0, 5, 6, 9], "cycles": [80, 30, 20, 70],
                           "samples": [4, 1, 1, 4], "skid_samples": [2, 10, 6, 2]})
    table = role_shares(cycles, {"lock": [0], "walk": [5, 6], "unlock": [12]})
    got = table.set_index("role")
    assert list(table["role"]) == ["lock", "walk", "unlock"]
    assert got.loc["lock"].tolist() == [0.4, 0.4, 0.1]
    assert got.loc["walk"].tolist() == [0.25, 0.2, 0.8]
    assert got.loc["unlock"].tolist() == [0.0, 0.0, 0.0]
    no_skid = role_shares(cycles.drop(columns="skid_samples"), {"lock": [0]})
    assert math.isnan(no_skid["skid"].iloc[0]) and no_skid["exact"].iloc[0] == 0.4


def test_the_seeds_figures_go_with_their_roles_and_the_rest_say_so():
    listing = {pc: text for pc, (_, text) in code(REMOVE).items()}
    cycles = pd.DataFrame({"pc": [K + 37, K + 53, K + 99], "cycles": [50, 40, 10],
                           "samples": [5, 4, 1], "skid_samples": [5, 4, 1]})
    # The seed's rows are the instructions after the locked ones and after
    # the head's load: its lock's 36.3% goes with the jb after our lock.
    table = seed_listing.by_role("pte_chain_remove", K, listing, cycles).set_index("role")
    # The seed's page_remove_rmap rows (analysis/seeds/000_*.txt lines 179,
    # 193, 194 and 215): lock 36.3485%, the head load 0.151515%, the
    # instruction after it 39.8939%, the unlock 6.22727%.
    seed = {"after lock": 0.363485, "head load": 0.00151515, "after head load": 0.398939,
            "after unlock": 0.0622727}
    for role, share in seed.items():
        assert math.isclose(table.loc[role, "seed"], share, rel_tol=1e-12), role
    for role in ("allocation", "lock", "walk", "unlock"):
        assert math.isnan(table.loc[role, "seed"]), role
    assert table.loc["after head load", "exact"] == 0.4
    assert table.loc["walk", "where"] == "+0x42..+0x5b"
    lines = seed_listing.role_lines(table.reset_index())
    assert lines[0].split() == ["role", "where", "seed", "exact", "next", "skid"]
    assert any(line.startswith("after head load") and "39.9%" in line for line in lines)


# The committed exact runs of the smoke fork storm on the seeds' machine
# (analysis/p6-smoke-32b-results/PROVENANCE.md), whose measuring build's
# role shares docs/claims.md sets beside the seed's.
P6 = paths.REPO / "analysis" / "p6-smoke-32b-results"
DOC_ROLES = {"lock": "lock", "after lock": "instruction after the lock",
             "head load": "load of the chain head", "after head load": "instruction after it",
             "walk": "rest of the walk", "unlock": "unlock",
             "after unlock": "instruction after the unlock"}


def committed_roles(variant: str) -> dict[str, pd.DataFrame]:
    """{function: its role table} of the variant's committed run on the
    seeds' machine, from its cycle profile and code."""
    results = Results(P6)
    run = results.select(results.ok, variant=variant)["run_id"].item()
    cycles, code = results.table("cycles"), results.table("code")
    tables = {}
    for symbol in ("pte_chain_add", "pte_chain_remove"):
        mine = code[(code["run"] == run) & (code["symbol"] == symbol)]
        tables[symbol] = seed_listing.by_role(
            symbol, int(mine["pc"].min()), {int(r.pc): r.text for r in mine.itertuples()},
            cycles[(cycles["run"] == run) & (cycles["symbol"] == symbol)]).set_index("role")
    return tables


def test_docs_role_table_is_the_committed_measuring_runs():
    """docs/claims.md's table of the seed's two listings by role, row by
    row, from the committed cycle profile and code of
    pte-chain-inpage-nocounters: exact and skid shares, the seed's beside
    them ('-' where the seed has no row in a role, blank where the function
    has no such role)."""
    tables = committed_roles("pte-chain-inpage-nocounters")

    def cells(symbol: str, role: str) -> list[str]:
        if role not in tables[symbol].index:
            return ["", "", ""]
        row = tables[symbol].loc[role]
        return [seed_listing.share(row[view]) for view in ("seed", "exact", "skid")]

    text = (paths.REPO / "docs" / "claims.md").read_text()
    for role, words in DOC_ROLES.items():
        line = "| " + " | ".join([words, *cells("pte_chain_add", role),
                                  *cells("pte_chain_remove", role)]) + " |"
        assert line in text, line


# Each pte_chain design whose lock and unlock are 2.5.27's, its measuring
# build: (function, role, view) in the order of docs/claims.md's columns.
DESIGN_COLUMNS = [("pte_chain_add", "lock", "exact"), ("pte_chain_add", "unlock", "exact"),
                  ("pte_chain_add", "after lock", "skid"),
                  ("pte_chain_add", "after unlock", "skid"),
                  ("pte_chain_remove", "lock", "exact"), ("pte_chain_remove", "walk", "exact"),
                  ("pte_chain_remove", "unlock", "exact"),
                  ("pte_chain_remove", "after lock", "skid"),
                  ("pte_chain_remove", "after unlock", "skid")]
DESIGNS = ["pte-chain-inpage-nocounters", "pte-chain-inpage-locked-nocounters",
           "pte-chain-nocounters", "pte-chain-direct-nocounters"]


def test_docs_table_of_every_designs_roles_is_the_committed_runs():
    """docs/claims.md's table of the lock's and unlock's shares in each
    pte_chain design's measuring build on the seeds' machine, row by row
    from the committed runs."""
    text = (paths.REPO / "docs" / "claims.md").read_text()
    for variant in DESIGNS:
        tables = committed_roles(variant)
        cells = [seed_listing.share(tables[symbol].loc[role, view])
                 for symbol, role, view in DESIGN_COLUMNS]
        line = "| " + " | ".join([f"`{variant}`", *cells]) + " |"
        assert line in text, line
