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
