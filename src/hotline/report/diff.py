"""./hotline diff A B: two runs side by side, perf diff style.

A side is one run: a run directory, a run id under the results tree, or, in
a gathered experiment (./hotline diff EXPERIMENT A B), a variant or run id
of it.  Per function and per instruction: the L1 and L2 misses and the
modelled stall cycles in each run, and B - A, sorted by the absolute
difference of stall cycles.

Modelled cycles (analysis/cost.py): a run's instructions (one cycle each)
plus the stall cycles of its L1 misses (data and instruction; the latency
of whatever served each).  The plugin counts instructions per block, not
per instruction, so per function and per instruction the difference is in
the stall cycles, and the runs' totals say what share of the modelled
cycles they are.

Functions are matched by name: kernel builds differ in addresses, and a
function that exists in one kernel only (a patch adds pte_chain_add) is
listed as such.  Instructions are matched within their function by their
code: the instructions each run executed are aligned in address order by
their text with addresses left out (difflib), so that code a patch inserts
shifts no pairing after it; an instruction that did not run (or does not
exist) in the other run is listed as only in one.  The code is the kernel
build's where it is in the cache, else the run's instructions table's (by
address, or in slimmed results, which keep no address in the misses, by
function and offset).  An instruction whose code is in neither pairs with
nothing (unknown code is not the same code), and the diff says how many
there are and which kernel to build to pair them.
"""

import difflib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from hotline import outputs, paths
from hotline.analysis.cost import l1_stalls, run_cost
from hotline.errors import HotlineError
from hotline.kernel.build import kernel_directory
from hotline.report import pictures as pic
from hotline.report import render
from hotline.report.tables import disassemble_blocks, disassemble_many
from hotline.results.symbols import Symbolizer

FUNCTIONS = 30      # functions listed
INSTRUCTIONS = 40   # instructions listed
PICTURE_FUNCTIONS = 20
USER, NO_SYMBOL = "[user]", "[kernel: no symbol]"
STATS = ["L1 misses", "L2 misses", "stall cycles"]


@dataclass
class Side:
    """One run's tables, as the diff reads them."""
    run_id: str
    label: str                  # what the run is called in the columns (its variant)
    misses: pd.DataFrame
    instructions: pd.DataFrame
    roi: pd.DataFrame
    vmlinux: Path | None = None     # the run's kernel, where its build is cached

    @classmethod
    def of_run(cls, run_dir: Path) -> "Side":
        from hotline.report.run import Run
        run = Run.read(run_dir)
        t = run.tables
        return cls(run.run_id, run.variant, t.misses, t.instructions, t.roi,
                   run.kernel / "vmlinux")

    def cost(self) -> dict[str, int]:
        costs = run_cost(self.misses.assign(run=self.run_id), self.roi.assign(run=self.run_id),
                         ["run"])
        if costs.empty:
            raise HotlineError(f"run {self.run_id}: its tables hold no row of its region of "
                               "interest (roi): nothing to compare; gather or make the run "
                               "again")
        cost = costs.iloc[0]
        return {k: int(cost[k]) for k in ("instructions", "stall_cycles", "modelled_cycles")}


def sides_of_experiment(directory: Path, wanted: tuple[str, str], workload: str | None = None,
                        system: str | None = None) -> tuple[Side, Side]:
    """The runs of a gathered experiment that `wanted` names (a variant or a
    run id each), narrowed by workload and system; each must name one run."""
    from hotline.analysis.results import Results
    results = Results(directory)
    ok = results.ok
    if workload:
        ok = ok[ok["workload"] == workload]
    if system:
        ok = ok[ok["system"] == system]
    chosen = []
    for name in wanted:
        runs = ok[(ok["run_id"] == name) | (ok["variant"] == name)]
        if len(runs) != 1:
            what = (f"{len(runs)} runs: {', '.join(runs['run_id'])}; narrow with --workload "
                    "and --system, or give a run id" if len(runs) else
                    f"no successful run (variants: {', '.join(sorted(set(ok['variant'])))})")
            raise HotlineError(f"{directory}: '{name}' names {what}")
        chosen.append(runs.iloc[0])
    tables = {name: results.table(name) for name in ("misses", "instructions", "roi")}
    return tuple(Side(r["run_id"], r["variant"],
                      *(tables[n][tables[n]["run"] == r["run_id"]] for n in
                        ("misses", "instructions", "roi")),
                      _cached_vmlinux(r["manifest"]))
                 for r in chosen)


def _cached_vmlinux(manifest: str) -> Path | None:
    """The vmlinux of a gathered run's kernel, if its build is in the cache."""
    try:
        kernel = json.loads(manifest)["inputs"]["kernel"]
    except (TypeError, ValueError, KeyError):
        return None
    vmlinux = kernel_directory(kernel["variant"], kernel["key"]) / "vmlinux"
    return vmlinux if vmlinux.is_file() else None


class KernelCode:
    """Functions' code from a vmlinux: their bytes, read from the ELF's
    loadable segments, disassembled with one objdump per batch."""

    def __init__(self, vmlinux: Path):
        self.vmlinux = vmlinux
        self.symbolizer = Symbolizer(vmlinux)

    @cached_property
    def _segments(self) -> list[tuple[int, int, int]]:
        from elftools.elf.elffile import ELFFile
        with open(self.vmlinux, "rb") as f:
            return [(seg["p_vaddr"], seg["p_filesz"], seg["p_offset"])
                    for seg in ELFFile(f).iter_segments() if seg["p_type"] == "PT_LOAD"]

    def _read(self, address: int, size: int) -> bytes:
        for vaddr, filesz, offset in self._segments:
            if vaddr <= address and address + size <= vaddr + filesz:
                with open(self.vmlinux, "rb") as f:
                    f.seek(offset + address - vaddr)
                    return f.read(size)
        return b""

    def functions(self, names: list[str]) -> dict[str, dict[int, str]]:
        """{name: {offset: instruction text}} of the named functions that
        this kernel has."""
        found = [(n, s) for n in names if (s := self.symbolizer.function_named(n))]
        listings = disassemble_blocks([(s.start, self._read(s.start, s.size))
                                       for _, s in found])
        return {n: {pc - s.start: text for pc, text in listing.items()}
                for (n, s), listing in zip(found, listings)}


def _function(symbol: str, space: str) -> str:
    if symbol:
        return symbol
    return USER if space == "user" else NO_SYMBOL


def per_instruction(side: Side) -> pd.DataFrame:
    """function, offset, pc: L1 misses, L2 misses, stall cycles, bytes."""
    m = side.misses.assign(function=[_function(s, sp) for s, sp in
                                     zip(side.misses["symbol"], side.misses["space"])])
    if "pc" not in m.columns:
        # Slimmed results (hotline.analysis.slim) keep each miss's function
        # and offset but not its address: the address (and so the bytes) is
        # the instructions table's at that function and offset, where it
        # lists the function; code outside any function is one row.
        m = m.assign(pc=_pcs_by_place(m, side.instructions))
    # A pc outside any function (user space, kernel code without a symbol)
    # has its address as its offset: the same address pairs up across runs.
    outside = m["function"].isin([USER, NO_SYMBOL])
    m = m.assign(offset=m["offset"].astype("uint64").where(~outside, m["pc"].astype("uint64")))
    keys = ["function", "offset", "pc"]
    stalls = l1_stalls(m).groupby(keys)[["count", "cycles"]].sum()
    l2 = m[m["level"] == "L2"].groupby(keys)["count"].sum()
    table = pd.DataFrame({"L1 misses": stalls["count"], "stall cycles": stalls["cycles"]})
    table = table.join(l2.rename("L2 misses"), how="outer").fillna(0).astype("int64")
    code = dict(zip(side.instructions["pc"], side.instructions["bytes"]))
    table = table.reset_index()
    table["bytes"] = [c if isinstance(c := code.get(pc), str) else "" for pc in table["pc"]]
    return table[keys + STATS + ["bytes"]]


def _pcs_by_place(misses: pd.DataFrame, instructions: pd.DataFrame) -> pd.Series:
    """Each miss's instruction address, found by its function and offset in
    the instructions table (0 where the table does not list it)."""
    if not {"symbol", "offset"} <= set(instructions.columns):
        return pd.Series(0, index=misses.index, dtype="uint64")
    listed = instructions[instructions["symbol"] != ""].drop_duplicates(["symbol", "offset"])
    at = dict(zip(zip(listed["symbol"], listed["offset"].astype("int64")),
                  listed["pc"].astype("uint64")))
    return pd.Series([at.get((s, int(o)), 0) if s else 0
                      for s, o in zip(misses["symbol"], misses["offset"])],
                     index=misses.index, dtype="uint64")


def per_function(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    fa, fb = (x.groupby("function")[STATS].sum() for x in (a, b))
    both = fa.add_suffix(f" {names[0]}").join(fb.add_suffix(f" {names[1]}"), how="outer")
    table = pd.DataFrame(index=both.index)
    for stat in STATS:
        table[f"{stat} {names[0]}"] = both[f"{stat} {names[0]}"].fillna(0).astype("int64")
        table[f"{stat} {names[1]}"] = both[f"{stat} {names[1]}"].fillna(0).astype("int64")
        table[f"{stat} diff"] = table[f"{stat} {names[1]}"] - table[f"{stat} {names[0]}"]
    table["only in"] = ""
    table.loc[~table.index.isin(fb.index), "only in"] = names[0]
    table.loc[~table.index.isin(fa.index), "only in"] = names[1]
    table = table.reset_index()
    order = table["stall cycles diff"].abs()
    return (table.assign(_order=order)
            .sort_values(["_order", "function"], ascending=[False, True], kind="stable")
            .drop(columns="_order").reset_index(drop=True))


_HEX = re.compile(r"-?0x[0-9a-f]+")


def normalised(text: str) -> str:
    """An instruction's text with every number left out (branch and call
    targets, %rip displacements and the other constants that move between
    builds) and objdump's notes dropped: what pairs instructions across
    two kernels."""
    return _HEX.sub("N", text.split(" #")[0].split(" <")[0])


def aligned(a: list[tuple[int, str]], b: list[tuple[int, str]]) -> dict[int, int]:
    """{A's offset: B's offset} for two listings of (offset, text) in address
    order, aligned by their normalised text: equal runs pair up, and a run
    replaced by one of the same length pairs instruction by instruction
    (the same code with other registers or constants).  An instruction
    whose text is not known ("") pairs with nothing: two unknown
    instructions are not the same code."""
    ka = [normalised(text) if text else ("unknown", "a", i) for i, (_, text) in enumerate(a)]
    kb = [normalised(text) if text else ("unknown", "b", j) for j, (_, text) in enumerate(b)]
    pairs = {}
    matcher = difflib.SequenceMatcher(a=ka, b=kb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            pairs.update((a[i][0], b[j][0]) for i, j in zip(range(i1, i2), range(j1, j2))
                         if a[i][1] and b[j][1])
    return pairs


def unknown_code(a: pd.DataFrame, b: pd.DataFrame, variants: tuple[str, str],
                 functions: list[str], code: tuple[dict, dict]) -> list[str]:
    """What instruction_diff could not pair for want of code, one line per
    side: the instructions of kernel functions that missed in both runs
    whose text is in neither the run's instructions table nor its kernel's
    build here, and the kernel to build."""
    notes = []
    both = set(a["function"]) & set(b["function"]) & set(functions) - {USER, NO_SYMBOL}
    for side, variant, kernel in ((a, variants[0], code[0]), (b, variants[1], code[1])):
        kernel_code = side["function"].isin(both)
        known = side["bytes"] != ""
        missing = side[kernel_code & ~known & ~side["function"].isin(list(kernel))]
        if len(missing):
            shown = ", ".join(sorted(set(missing["function"]))[:5])
            notes.append(f"{variant}: the code of {len(missing)} instruction(s) that missed "
                         f"(in {shown}) is in neither the run's instructions table nor a "
                         "kernel built here, so they are listed unpaired; to pair them: "
                         f"./hotline build-kernel {variant}")
    return notes


def instruction_diff(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str],
                     functions: list[str], code: tuple[dict, dict] = ({}, {})) -> pd.DataFrame:
    """Every instruction of the given functions that missed in either run,
    paired across the runs, with the stats of each and B - A.

    code: {function: {offset: text}} of each kernel, where known: the whole
    functions are aligned; otherwise only the instructions that missed are."""
    a = a[a["function"].isin(functions)]
    b = b[b["function"].isin(functions)]
    text_a = disassemble_many({int(p): c for p, c in zip(a["pc"], a["bytes"]) if c})
    text_b = disassemble_many({int(p): c for p, c in zip(b["pc"], b["bytes"]) if c})
    rows = []
    groups_a = {f: g.set_index("offset") for f, g in a.groupby("function")}
    groups_b = {f: g.set_index("offset") for f, g in b.groupby("function")}
    for function in functions:
        ga = groups_a.get(function, a.iloc[0:0].set_index("offset"))
        gb = groups_b.get(function, b.iloc[0:0].set_index("offset"))
        if function in (USER, NO_SYMBOL):   # the same address is the same instruction
            pairs = {int(o): int(o) for o in ga.index if o in gb.index}
        elif function in code[0] and function in code[1]:
            pairs = aligned(sorted(code[0][function].items()), sorted(code[1][function].items()))
        else:
            pairs = aligned([(int(o), text_a.get(int(r["pc"]), "")) for o, r in ga.iterrows()],
                            [(int(o), text_b.get(int(r["pc"]), "")) for o, r in gb.iterrows()])
        back = {ob: oa for oa, ob in pairs.items()}
        keys = {(int(o), pairs.get(int(o))) for o in ga.index}
        keys |= {(back.get(int(o)), int(o)) for o in gb.index}
        for oa, ob in keys:
            ra = ga.loc[oa] if oa is not None and oa in ga.index else None
            rb = gb.loc[ob] if ob is not None and ob in gb.index else None
            # The text from B's run, else A's, else from the kernels' code
            # (a function slimming left without instruction rows).
            text = (rb is not None and text_b.get(int(rb["pc"]), "")) or \
                (ra is not None and text_a.get(int(ra["pc"]), "")) or \
                code[1].get(function, {}).get(ob, "") or code[0].get(function, {}).get(oa, "")
            row = {"function": function,
                   f"offset {names[0]}": f"{oa:#x}" if oa is not None else "",
                   f"offset {names[1]}": f"{ob:#x}" if ob is not None else "",
                   "instruction": text}
            for stat in STATS:
                va = int(ra[stat]) if ra is not None else 0
                vb = int(rb[stat]) if rb is not None else 0
                row.update({f"{stat} {names[0]}": va, f"{stat} {names[1]}": vb,
                            f"{stat} diff": vb - va})
            row["only in"] = names[0] if ob is None else names[1] if oa is None else ""
            rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = table["stall cycles diff"].abs()
    return (table.assign(_order=order)
            .sort_values(["_order", "function", f"offset {names[0]}", f"offset {names[1]}"],
                         ascending=[False, True, True, True], kind="stable")
            .drop(columns="_order").reset_index(drop=True))


@dataclass
class Diff:
    a: Side
    b: Side
    names: tuple[str, str]
    totals: pd.DataFrame
    functions: pd.DataFrame
    instructions: pd.DataFrame
    unpaired: list[str]     # why some instructions could not be paired (unknown_code)


def diff(a: Side, b: Side) -> Diff:
    names = (a.label, b.label) if a.label != b.label else ("A", "B")
    ia, ib = per_instruction(a), per_instruction(b)
    functions = per_function(ia, ib, names)
    # Instructions of the functions that moved most (every instruction of
    # the others moved less than their function did, summed).
    top = list(functions["function"].head(FUNCTIONS))
    code = tuple(KernelCode(side.vmlinux).functions(top) if side.vmlinux else {}
                 for side in (a, b))
    instructions = instruction_diff(ia, ib, names, top, code)
    unpaired = unknown_code(ia, ib, (a.label, b.label), top, code)
    ca, cb = a.cost(), b.cost()
    totals = pd.DataFrame([
        {"measure": k.replace("_", " "), names[0]: ca[k], names[1]: cb[k],
         "diff": cb[k] - ca[k], "ratio": f"x{cb[k] / ca[k]:.3f}" if ca[k] else ""}
        for k in ("instructions", "stall_cycles", "modelled_cycles")])
    return Diff(a, b, names, totals, functions, instructions, unpaired)


def sections(d: Diff) -> list[render.Section]:
    a, b = d.names
    shown = d.functions.head(PICTURE_FUNCTIONS)
    labels = [f + (f"  (only in {o})" if o else "") for f, o in
              zip(shown["function"], shown["only in"])]
    picture = pic.difference_bars(
        "diff-functions", f"Stall cycles per function: {a} and {b}", labels,
        list(shown[f"stall cycles {a}"]), list(shown[f"stall cycles {b}"]), (a, b),
        "modelled stall cycles (L1 misses x latency)")
    return [
        render.Section("Modelled cost", f"{a}: {d.a.run_id}; {b}: {d.b.run_id}. Modelled "
                       "cycles = instructions + L1 stall cycles (analysis/cost.py).", d.totals),
        render.Section(f"Functions by |{b} - {a}| in stall cycles",
                       "L1 (data + instruction) and L2 misses and L1 stall cycles in each "
                       "run and the difference; 'only in': the function ran (or exists) in "
                       f"one run only. Top {FUNCTIONS}.", d.functions.head(FUNCTIONS),
                       [picture]),
        render.Section(f"Instructions by |{b} - {a}| in stall cycles",
                       f"Instructions of those {FUNCTIONS} functions, paired across the runs "
                       "by their code (addresses left out); 'only in': no partner in the "
                       f"other run. Top {INSTRUCTIONS}." +
                       "".join(f" Unpaired: {n}." for n in d.unpaired),
                       d.instructions.head(INSTRUCTIONS)),
    ]


def head(d: Diff) -> list[tuple[str, str]]:
    return [(d.names[0], d.a.run_id), (d.names[1], d.b.run_id)]


def write_diff(d: Diff, out: Path | None = None) -> tuple[str, Path, Path]:
    out = out or paths.results_dir() / "diff" / f"{d.a.run_id}--vs--{d.b.run_id}"
    outputs.make_dir(out)
    report = sections(d)
    lines = [f"{k:9} {v}" for k, v in head(d)]
    text = render.as_text_sections(lines, report)
    for s in report:
        for p in s.pictures:
            p.write(out / render.PICTURES)
    text_path, html_path = out / "diff.txt", out / "diff.html"
    outputs.write_text(text_path, text, sync=False)
    outputs.write_text(html_path, render.page(f"hotline diff {d.names[0]} vs {d.names[1]}",
                                              head(d), [render.section_html(s) for s in report]),
                       sync=False)
    return text, text_path, html_path


def sides(names: list[str], workload: str | None = None,
          system: str | None = None) -> tuple[Side, Side]:
    """The two sides the command line names: two runs (directories or run
    ids), or a gathered experiment and two of its variants or run ids."""
    from hotline.report.run import find_run
    if len(names) == 3:
        return sides_of_experiment(Path(names[0]), (names[1], names[2]), workload, system)
    if len(names) != 2:
        raise HotlineError("diff takes two runs (RUN_A RUN_B) or an experiment and two of its "
                           "variants (EXPERIMENT VARIANT_A VARIANT_B)")
    if workload or system:
        raise HotlineError("--workload and --system choose runs in an experiment: "
                           "./hotline diff EXPERIMENT VARIANT_A VARIANT_B")
    return Side.of_run(find_run(names[0])), Side.of_run(find_run(names[1]))
