"""The modelled cost measures the notebooks compare variants by.

The cache model gives, per miss, the latency of whatever served it.  A run's
modelled time is then its instructions inside the regions of interest (one
cycle each: the model has no pipeline) plus the stall cycles of its L1
misses (data and instruction).  Shares of a function or an instruction are
shares of the stall cycles: the part of the cost the cache model can place,
and the part the seeds' profiles were dominated by.  Absolute figures do not
transfer from a 2002 Pentium III to a model; ratios between variants and
shares within a run do, and the notebooks compare those.
"""

import pandas as pd

from hotline.results.objects import describe

L1 = ("L1D", "L1I")


def l1_stalls(misses: pd.DataFrame) -> pd.DataFrame:
    """The rows of L1 misses: each access's stall is counted once, there."""
    return misses[misses["level"].isin(L1)]


def run_cost(misses: pd.DataFrame, roi: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group of runs (e.g. by variant): instructions, stall cycles and
    modelled cycles = instructions + stall cycles, summed over their runs."""
    instructions = roi.groupby(by)["instructions"].sum()
    stalls = l1_stalls(misses).groupby(by)["cycles"].sum()
    cost = pd.DataFrame({"instructions": instructions, "stall_cycles": stalls}).fillna(0)
    cost["modelled_cycles"] = cost["instructions"] + cost["stall_cycles"]
    return cost.reset_index()


def function_shares(misses: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Each kernel function's share of its group's stall cycles."""
    stalls = l1_stalls(misses)
    per_function = stalls.groupby([*by, "symbol"])["cycles"].sum().rename("stall_cycles")
    total = stalls.groupby(by)["cycles"].sum().rename("total")
    shares = per_function.reset_index().merge(total.reset_index(), on=by)
    shares["share"] = shares["stall_cycles"] / shares["total"]
    return shares[shares["symbol"] != ""].drop(columns="total").sort_values(
        [*by, "stall_cycles"], ascending=[True] * len(by) + [False], ignore_index=True)


def instruction_listing(misses: pd.DataFrame, symbol: str) -> pd.DataFrame:
    """The seeds' oprofile layout for one function: every instruction of it
    that stalled, its stall cycles, its share of the function's, its L1D
    misses by cause and what it missed on."""
    stalls = l1_stalls(misses)
    mine = stalls[stalls["symbol"] == symbol]
    if mine.empty:
        return pd.DataFrame(columns=["offset", "stall_cycles", "share", "misses",
                                     "main cause", "data"])
    grouped = mine.groupby("offset")
    listing = pd.DataFrame({"stall_cycles": grouped["cycles"].sum(),
                            "misses": grouped["count"].sum()})
    listing["share"] = listing["stall_cycles"] / listing["stall_cycles"].sum()
    listing["main cause"] = mine.groupby(["offset", "cause"])["count"].sum().groupby(
        level=0).idxmax().map(lambda key: key[1])
    data = mine.assign(data=[describe(o, f) for o, f in zip(mine["object"], mine["field"])])
    listing["data"] = data.groupby(["offset", "data"])["count"].sum().groupby(
        level=0).idxmax().map(lambda key: key[1])
    return listing.reset_index()[["offset", "stall_cycles", "share", "misses", "main cause",
                                  "data"]]
