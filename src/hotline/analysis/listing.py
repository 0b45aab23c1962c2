"""Instruction-level helpers for the notebooks' annotated listings: the
instruction text of a listing's rows, from the bytes the guest ran
(instructions.parquet), and which locked instructions of a function are its
lock and its unlock."""

import pandas as pd

from hotline.results.symbols import disassemble_bytes


def with_instructions(listing: pd.DataFrame, instructions: pd.DataFrame,
                      symbol: str) -> pd.DataFrame:
    """The listing (one row per offset in `symbol`) with the instruction."""
    mine = instructions[instructions["symbol"] == symbol].drop_duplicates("offset")
    text = {int(r.offset): disassemble_bytes(int(r.pc), r.bytes) for r in mine.itertuples()}
    return listing.assign(instruction=listing["offset"].map(lambda o: text.get(int(o), "")))


def lock_and_unlock(instructions: pd.DataFrame, symbol: str) -> dict[str, int]:
    """Offsets of the first and the last locked read-modify-write the
    function executed: a bit spinlock's lock (lock bts) comes first and its
    unlock (lock btr / andb) last, as in the chain functions."""
    locked = instructions[(instructions["symbol"] == symbol) & (instructions["kind"] == "rmw")]
    offsets = sorted(set(int(o) for o in locked["offset"]))
    if not offsets:
        return {}
    if len(offsets) == 1:
        return {"lock": offsets[0]}
    return {"lock": offsets[0], "unlock": offsets[-1]}
