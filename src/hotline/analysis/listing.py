"""Instruction-level helpers for the notebooks' annotated listings: the
instruction text of a listing's rows, from the bytes the guest ran
(instructions.parquet), and which locked instructions of a function are its
lock and its unlock: from the instructions the guest ran where the run
recorded them (QEMU), from the kernel's own disassembly where it did not
(gem5)."""

import re

import pandas as pd

from hotline.results.symbols import disassemble_bytes


def with_instructions(listing: pd.DataFrame, instructions: pd.DataFrame,
                      symbol: str) -> pd.DataFrame:
    """The listing (one row per offset in `symbol`) with the instruction."""
    mine = instructions[instructions["symbol"] == symbol].drop_duplicates("offset")
    text = {int(r.offset): disassemble_bytes(int(r.pc), r.bytes) for r in mine.itertuples()}
    return listing.assign(instruction=listing["offset"].map(lambda o: text.get(int(o), "")))


def lock_and_unlock(instructions: pd.DataFrame, symbol: str) -> dict[str, int]:
    """Offsets of a bit spinlock's lock and unlock in a function: among the
    locked read-modify-writes it executes on its main path (at least half as
    often as the busiest one: a contended retry or an error path runs
    rarely), the first (lock bts) and the last (lock btr / andb)."""
    locked = instructions[(instructions["symbol"] == symbol) & (instructions["kind"] == "rmw")]
    per_offset = locked.groupby("offset")["accesses"].sum()
    main_path = sorted(int(o) for o, n in per_offset.items() if n >= per_offset.max() / 2)
    if not main_path:
        return {}
    if len(main_path) == 1:
        return {"lock": main_path[0]}
    return {"lock": main_path[0], "unlock": main_path[-1]}


# objdump's text of a locked bit set, and of a locked clear (btr, or an and
# with the bit's complement: clear_bit_unlock of a constant bit).
_LOCKED_SET = re.compile(r"^lock bts")
_LOCKED_CLEAR = re.compile(r"^lock (btr|and)")


def lock_and_unlock_in_code(code: dict[int, tuple[str, str]], start: int) -> dict[str, int]:
    """Offsets of a bit spinlock's lock and unlock in a function, from its
    disassembly ({pc: (bytes, text)}, Symbolizer.disassemble) for runs that
    recorded no instructions: the lock is the first locked bit set (lock
    bts), the unlock the first locked clear after it (lock btr / and).  A
    contended retry's second lock bts, out of line after the main path, is
    neither.  On the pte-chain kernel this finds the offsets that
    lock_and_unlock finds from the instructions QEMU ran."""
    pcs = sorted(code)
    lock = next((pc for pc in pcs if _LOCKED_SET.match(code[pc][1])), None)
    if lock is None:
        return {}
    unlock = next((pc for pc in pcs if pc > lock and _LOCKED_CLEAR.match(code[pc][1])), None)
    if unlock is None:
        return {"lock": lock - start}
    return {"lock": lock - start, "unlock": unlock - start}


# The roles of the seed's page_add_rmap and page_remove_rmap listings, in
# the order a call runs them, as found in a pte_chain function's code.
CHAIN_ROLES = ("allocation", "lock", "after lock", "head load", "after head load", "walk",
               "unlock", "after unlock")

# The seeds' instruction tables beside the functions that do their work in
# hotline's pte_chain kernels: 2.5.27's page_add_rmap and page_remove_rmap
# took the chain's lock and unlock themselves, 6.1's rmap calls
# pte_chain_add and pte_chain_remove for it.  The seed's rows stand where
# the Pentium III's counter interrupt put them: at the instruction after the
# one whose time they are (claims/seeds.py), so its lock, unlock and walk
# figures go with the roles "after lock", "after unlock" and "after head
# load".  The roles the seed names no row of (the allocation, the walk as a
# whole, the locked instructions themselves) have no seed figure.
SEED_ROLES = {
    "pte_chain_add": ("page_add_rmap", {"after lock": "add_lock_pct",
                                        "after unlock": "add_unlock_pct"}),
    "pte_chain_remove": ("page_remove_rmap", {
        "after lock": "remove_lock_pct", "head load": "remove_head_pct",
        "after head load": "remove_after_head_pct", "after unlock": "remove_unlock_pct"}),
}

# A load into a register from memory addressed by a register (not %rip:
# a global; not %gs: a per-CPU counter or the preempt count).
_LOAD = re.compile(r"^mov[bwlq]?\s+(-?0x[0-9a-f]+)?\(%r(?!ip)[a-z0-9]+(,[^)]*)?\),%")
# A direct jump or call and its target: "jne ffffffff81143c12 <pte_chain_remove+0x42>".
_BRANCH = re.compile(r"^(j[a-z]+|call)\s+([0-9a-f]+)\s+<([^>]+)>")
_ALLOCATOR = re.compile(r"^kmem_cache_(alloc|free)")


def chain_roles(code: dict[int, tuple[str, str]], start: int) -> dict[str, list[int]]:
    """Offsets of the instructions in each role (CHAIN_ROLES) of a pte_chain
    function, from its disassembly ({pc: (bytes, text)}); a role the code
    does not have is left out.

      lock, unlock      lock_and_unlock_in_code's
      after lock,       the instruction after each: where a profiler that
      after unlock      reports the next instruction puts a locked
                        instruction's wait
      walk              the loop between them: from the target of a backward
                        jump to the jump (pte_chain_remove's walk of the chain)
      head load         the first load from memory (through a register, not a
                        global or per-CPU datum) after the lock: the chain
                        head, page->pte_chain or the head array's slot
      after head load   the instruction after it, where a profiler that
                        reports the next instruction puts the load's wait
                        (the seed's c013aca3)
      allocation        the call (or tail jump) to kmem_cache_alloc or
                        kmem_cache_free: the chain entry's allocation or free
    """
    found = lock_and_unlock_in_code(code, start)
    if "lock" not in found:
        return {}
    lock = start + found["lock"]
    unlock = start + found.get("unlock", max(code) + 1)
    pcs = sorted(code)
    text = {pc: code[pc][1].removeprefix("* ") for pc in pcs}
    roles = {role: [found[role]] for role in ("lock", "unlock") if role in found}

    def after(role: str) -> None:
        """The instruction after the role's, as the role "after ROLE"."""
        i = pcs.index(start + roles[role][0]) + 1
        if i < len(pcs):
            roles[f"after {role}"] = [pcs[i] - start]
    for role in ("lock", "unlock"):
        if role in roles:
            after(role)
    for pc in pcs:
        branch = _BRANCH.match(text[pc])
        if branch and branch[1].startswith("j") and lock < int(branch[2], 16) <= pc < unlock:
            target = int(branch[2], 16)
            roles["walk"] = [p - start for p in pcs if target <= p <= pc]
            break
    inside = [pc for pc in pcs if lock < pc < unlock]
    head = next((pc for pc in inside if _LOAD.match(text[pc])), None)
    if head is not None:
        roles["head load"] = [head - start]
        after("head load")
    calls = [pc for pc in pcs if (b := _BRANCH.match(text[pc])) and _ALLOCATOR.match(b[3])]
    if calls:
        roles["allocation"] = [calls[0] - start]
    return {role: roles[role] for role in CHAIN_ROLES if role in roles}


def role_shares(cycles: pd.DataFrame, roles: dict[str, list[int]]) -> pd.DataFrame:
    """Each role's share of one function's time, from its rows of a cycle
    profile (offset, cycles, samples and, where the profile has the skid
    view, skid_samples; any cores and regions): one row per role, in
    CHAIN_ROLES order, with exact (its share of the function's cycles), next
    (of its samples, next-committing view) and skid (of its samples, skid
    view; NaN without it)."""
    skid = "skid_samples" in cycles.columns and cycles["skid_samples"].notna().all()
    totals = {"exact": cycles["cycles"].sum(), "next": cycles["samples"].sum(),
              "skid": cycles["skid_samples"].sum() if skid else 0}
    columns = {"exact": "cycles", "next": "samples", "skid": "skid_samples"}
    rows = []
    for role, offsets in roles.items():
        mine = cycles[cycles["offset"].isin(offsets)]
        rows.append({"role": role, **{
            view: mine[column].sum() / totals[view] if totals[view] and column in mine
            else float("nan") for view, column in columns.items()}})
    return pd.DataFrame(rows, columns=["role", "exact", "next", "skid"])
