"""The shared-line (perf c2c style) tables, on small hand-written results
tables whose answers are worked out by hand in the comments."""

import pandas as pd

from hotline.report.c2c import SharedLines
from hotline.results.members import Members

PAGE_FIELDS = [("flags", 0, 8), ("lru", 8, 16), ("_refcount", 52, 4), ("next_line", 64, 8)]
STARTS = {"jiffies": 0xffffffff82000000, "jiffies_64": 0xffffffff82000008,
          "zone_table": 0xffffffff82000100}
A, B, C, D, E, F, G, H = (0xffffffff81000000 + 0x100 * i for i in range(8))
CODE = {A: ("f", 0x10), B: ("g", 0x20), C: ("h", 0x5), D: ("tick", 0x1), E: ("tick", 0x9),
        F: ("other", 0x3), G: ("writer", 0x7), H: ("zone", 0x2)}


def miss(cpu, pc, kind, obj, field, level, cause, count):
    symbol, offset = CODE[pc]
    return {"cpu": cpu, "pc": pc, "space": "kernel", "kind": kind, "symbol": symbol,
            "offset": offset, "source_line": "", "object": obj, "field": field,
            "level": level, "cause": cause, "count": count, "cycles": 10 * count}


MISSES = pd.DataFrame([
    miss(0, A, "read", "struct page", "flags", "L1D", "coherence", 5),
    miss(1, A, "read", "struct page", "flags", "L1D", "coherence", 3),
    miss(1, A, "read", "struct page", "flags", "L2", "coherence", 3),      # L2: not counted
    miss(2, B, "rmw", "struct page", "flags", "L1D", "upgrade", 4),
    miss(1, C, "write", "struct page", "_refcount", "L1D", "upgrade", 2),
    miss(0, C, "write", "struct page", "_refcount", "L1D", "capacity", 50),  # not sharing
    miss(3, A, "read", "struct page", "next_line", "L1D", "coherence", 6),  # the second line
    miss(0, D, "read", "jiffies", "+0x0", "L1D", "coherence", 7),
    miss(3, E, "write", "jiffies_64", "+0x0", "L1D", "upgrade", 1),
    miss(2, H, "read", "zone_table", "+0x40", "L1D", "coherence", 2),
    miss(0, F, "read", "kernel-other", "", "L1D", "coherence", 9),
])
COHERENCE = pd.DataFrame([
    {"cpu": 0, "pc": A, "object": "struct page", "field": "flags", "thief_cpu": 2,
     "thief_pc": B, "count": 5},
    {"cpu": 1, "pc": A, "object": "struct page", "field": "flags", "thief_cpu": 2,
     "thief_pc": B, "count": 3},
    {"cpu": 3, "pc": A, "object": "struct page", "field": "next_line", "thief_cpu": 1,
     "thief_pc": G, "count": 6},
    {"cpu": 0, "pc": D, "object": "jiffies", "field": "+0x0", "thief_cpu": 3,
     "thief_pc": E, "count": 7},
    {"cpu": 2, "pc": H, "object": "zone_table", "field": "+0x40", "thief_cpu": 0,
     "thief_pc": G, "count": 2},
    {"cpu": 0, "pc": F, "object": "kernel-other", "field": "", "thief_cpu": 1,
     "thief_pc": G, "count": 9},
]).assign(symbol="", offset=0, thief_symbol=lambda c: [CODE[pc][0] for pc in c["thief_pc"]],
          thief_offset=lambda c: [CODE[pc][1] for pc in c["thief_pc"]])


def shared() -> SharedLines:
    return SharedLines(MISSES, COHERENCE, PAGE_FIELDS, 64, STARTS)


def test_one_row_per_line_most_shared_first():
    lines = shared().lines().set_index("line")
    # struct page's first line: coherence 5 + 3 (A; the L2 row is not a
    # second miss), upgrades 4 (B) + 2 (C); its fields are those at bytes 0-63.
    first = lines.loc["struct page+0x0"]
    assert (first["coherence"], first["upgrade"]) == (8, 6)
    assert (first["reading insns"], first["writing insns"]) == (1, 2)
    assert first["CPUs"] == "0,1,2"
    assert first["fields"] == "flags, lru, _refcount"
    assert first["taken most by"] == "g+0x20 (8)"
    # jiffies and jiffies_64 share the line at 0xffffffff82000000.
    tick = lines.loc["0xffffffff82000000"]
    assert (tick["coherence"], tick["upgrade"]) == (7, 1)
    assert tick["fields"] == "jiffies+0x0, jiffies_64+0x0"
    assert tick["CPUs"] == "0,3" and tick["taken most by"] == "tick+0x9 (7)"
    # zone_table+0x40 is the line after the one its start is in.
    assert lines.loc["0xffffffff82000140", "coherence"] == 2
    assert lines.loc["struct page+0x40", "coherence"] == 6
    assert lines.loc["kernel-other", "coherence"] == 9
    # order: 14, 9, 8, 6, 2 events
    assert list(lines.index) == ["struct page+0x0", "kernel-other", "0xffffffff82000000",
                                 "struct page+0x40", "0xffffffff82000140"]


def test_a_line_offset_by_offset_with_the_writes_that_took_it():
    rows = shared().offsets("struct page+0x0")
    got = [(r.offset, r.data, r.instruction, r.kind, r.CPUs, r.coherence, r.upgrade,
            r._8) for r in rows.itertuples(index=False)]
    # In offset order, and at one offset the most events first.
    assert got == [
        ("0x0", "struct page.flags", "f+0x10", "read", "0,1", 8, 0, 0),
        # B as the thief of A's 8 misses (B's own misses say which field it
        # writes: flags), and B's own upgrade miss.
        ("0x0", "struct page.flags", "g+0x20", "write (thief)", "2", 0, 0, 8),
        ("0x0", "struct page.flags", "g+0x20", "rmw", "2", 0, 4, 0),
        ("0x34", "struct page._refcount", "h+0x5", "write", "1", 0, 2, 0),
    ]


def test_a_thief_that_never_missed_has_no_offset():
    rows = shared().offsets("struct page+0x40")
    thief = rows[rows["kind"] == "write (thief)"].iloc[0]
    assert (thief["instruction"], thief["offset"], thief["data"], thief["took the line"]) == \
        ("writer+0x7", "?", "", 6)


def test_top_keeps_the_busiest_rows_in_offset_order():
    rows = shared().offsets("struct page+0x0", top=2)
    assert list(rows["instruction"]) == ["f+0x10", "g+0x20"]
    assert list(rows["kind"]) == ["read", "write (thief)"]
    rows = shared().offsets("struct page+0x0", top=3)
    assert list(rows["kind"]) == ["read", "write (thief)", "rmw"]


def test_a_run_without_a_coherence_table_still_lists_its_upgrades(tmp_path):
    """A gem5 run makes misses and roi only: the other tables read as empty,
    and the shared lines come from the misses' causes alone."""
    from hotline.report import tables as rt
    MISSES.assign(run="r1").to_parquet(tmp_path / "misses.parquet")
    pd.DataFrame({"run": "r1", "cpu": [0, 1], "instructions": [600, 400]}).to_parquet(
        tmp_path / "roi.parquet")
    t = rt.RunTables.read(tmp_path, made={"misses", "roi"})
    assert t.absent == {"instructions", "coherence", "rapw", "cycles"}
    assert len(t.coherence) == 0 and set(rt.COLUMNS["coherence"]) <= set(t.coherence.columns)
    assert len(rt.thieves(t, "flags", 5)) == 0
    assert len(rt.partial_writes(t, 5, rt.Disassembly(None, t.instructions))) == 0
    # L1D misses: 5+3+4+2+50+6+7+1+2+9 = 89 in 1000 instructions.
    totals = rt.totals(t).set_index("level")
    assert totals.loc["L1D", "misses"] == 89 and totals.loc["L1D", "per 1k instructions"] == 89
    # Misses of no known cause (gem5's, but for upgrades) count as misses.
    gem5 = t.misses.assign(cause=t.misses["cause"].where(t.misses["cause"] == "upgrade", ""))
    split = rt.cause_split(gem5[gem5["level"] == "L1D"], ["symbol"]).set_index("symbol")
    assert split.loc["f", "misses"] == 5 + 3 + 6 and split.loc["f", "upgrade"] == 0
    assert split.loc["g", "misses"] == 4 and split.loc["g", "upgrade"] == 4
    lines = SharedLines(t.misses, t.coherence, PAGE_FIELDS, 64, STARTS).lines().set_index("line")
    # As in the test above, but no write is known to have taken a line.
    assert tuple(lines.loc["struct page+0x0", ["coherence", "upgrade"]]) == (8, 6)
    assert list(lines.index) == ["struct page+0x0", "kernel-other", "0xffffffff82000000",
                                 "struct page+0x40", "0xffffffff82000140"]


# A line of kernel data as a 6.1 kernel lays it out: nr_threads 8 bytes into
# a line, vm_area_cachep 0x20 into the same line (false sharing: the counter
# fork writes and the cache pointer every mmap reads), and input_pool's
# +0x60, which is the start of the next line.
LINE = 0xffffffff82a00000
DATA = {"nr_threads": LINE + 0x8, "vm_area_cachep": LINE + 0x20, "input_pool": LINE - 0x20}
P, Q, R = (0xffffffff81100000 + 0x40 * i for i in range(3))
CODE.update({P: ("copy_process", 0x2f1), Q: ("vm_area_alloc", 0x11), R: ("mix_pool", 0x60)})
SHARED = pd.DataFrame([
    miss(0, P, "rmw", "nr_threads", "+0x0", "L1D", "upgrade", 9),
    miss(1, Q, "read", "vm_area_cachep", "+0x0", "L1D", "coherence", 7),
    miss(2, R, "read", "input_pool", "+0x60", "L1D", "coherence", 3),
    miss(2, A, "read", "struct page", "flags", "L1D", "coherence", 11),
    miss(3, C, "write", "struct page", "_refcount", "L1D", "upgrade", 5),
])
SHARED_THEFTS = pd.DataFrame([
    {"cpu": 1, "pc": Q, "object": "vm_area_cachep", "field": "+0x0", "thief_cpu": 0,
     "thief_pc": P, "count": 7},
]).assign(symbol="", offset=0, thief_symbol=lambda c: [CODE[pc][0] for pc in c["thief_pc"]],
          thief_offset=lambda c: [CODE[pc][1] for pc in c["thief_pc"]])


def offsets_of(lines: SharedLines, line: str) -> list[tuple[str, str, str]]:
    return [(r.offset, r.data, r.kind) for r in lines.offsets(line).itertuples(index=False)]


def test_the_offset_is_the_bytes_place_in_its_cache_line():
    """Not its place in its object: nr_threads+0x0 is at 0x8 of its line,
    vm_area_cachep+0x0 at 0x20 (before, both said 0x0 and the false
    sharing did not show), and input_pool+0x60 opens the next line."""
    lines = SharedLines(SHARED, SHARED_THEFTS, PAGE_FIELDS, 64, DATA)
    assert offsets_of(lines, f"{LINE:#x}") == [
        ("0x8", "nr_threads+0x0", "rmw"),
        ("0x8", "nr_threads+0x0", "write (thief)"),
        ("0x20", "vm_area_cachep+0x0", "read")]
    assert offsets_of(lines, f"{LINE + 0x40:#x}") == [("0x0", "input_pool+0x60", "read")]
    # struct page's second line: next_line (byte 64) is its first byte.
    assert offsets_of(shared(), "struct page+0x40") == [
        ("0x0", "struct page.next_line", "read"), ("?", "", "write (thief)")]


def test_a_32_byte_system_groups_accesses_into_32_byte_lines():
    """On pentium3-4way-32b (the seeds' line) nr_threads and vm_area_cachep
    are two lines, and struct page's _refcount (byte 52) is 0x14 into its
    second line, apart from flags."""
    lines = SharedLines(SHARED, SHARED_THEFTS, PAGE_FIELDS, 32, DATA)
    table = lines.lines().set_index("line")
    assert set(table.index) == {f"{LINE:#x}", f"{LINE + 0x20:#x}", f"{LINE + 0x40:#x}",
                                "struct page+0x0", "struct page+0x20"}
    assert table.loc["struct page+0x0", "fields"] == "flags, lru"
    assert table.loc["struct page+0x20", "fields"] == "_refcount"
    assert offsets_of(lines, "struct page+0x20") == [("0x14", "struct page._refcount", "write")]
    assert offsets_of(lines, f"{LINE + 0x20:#x}") == [("0x0", "vm_area_cachep+0x0", "read"),
                                                      ("?", "", "write (thief)")]
    # The write that took vm_area_cachep's line is known to write nr_threads
    # only, in the line before: no offset in this one.
    assert table.loc[f"{LINE + 0x20:#x}", "taken most by"] == "copy_process+0x2f1 (7)"
    thief = lines.offsets(f"{LINE + 0x20:#x}").iloc[-1]
    assert (thief["kind"], thief["offset"], thief["data"]) == ("write (thief)", "?", "")


class _Text:
    def at(self, pc: int) -> str:
        return ""


def test_a_runs_line_is_its_system_specs(tmp_path):
    """The report reads the line from the run's manifest (the system spec's
    [caches] line_bytes): a run of pentium3-4way-32b is cut into 32-byte
    lines by c2c, one of pentium3-4way into 64-byte ones."""
    from hotline import specs
    from hotline.records.manifest import Manifest
    from hotline.report import tables as rt
    from hotline.report.run import Run
    layout = {"fields": [{"name": n, "offset": o, "size": s, "primary": True}
                         for n, o, s in PAGE_FIELDS]}
    found = {}
    for system in ("pentium3-4way-32b", "pentium3-4way"):
        spec = specs.load_system(system).model_dump()
        manifest = Manifest({"inputs": {"system": {"name": system, "spec": spec}}})
        tables = rt.RunTables(SHARED, pd.DataFrame(), SHARED_THEFTS, pd.DataFrame(),
                              pd.DataFrame(), pd.DataFrame())
        run = Run(tmp_path, manifest, tables, tmp_path)
        run.__dict__.update(layout=layout, object_starts=DATA, disassembly=_Text())
        found[system] = (run.line_bytes, set(SharedLines.of_run(run).lines()["line"]))
    assert found["pentium3-4way-32b"][0] == 32
    assert {"struct page+0x20", f"{LINE + 0x20:#x}"} <= found["pentium3-4way-32b"][1]
    assert found["pentium3-4way"][0] == 64
    assert found["pentium3-4way"][1] == {"struct page+0x0", f"{LINE:#x}", f"{LINE + 0x40:#x}"}


def test_struct_pages_line_names_the_union_member_its_misses_were_attributed_to():
    """lru's bytes are compound_head to PageTail(): the line's fields say
    compound_head (and lru where it missed too), most misses first."""
    fields = [("flags", 0, 8), ("lru", 8, 16), ("_refcount", 52, 4)]
    members = Members([{"name": "flags", "offset": 0, "size": 8},
                       {"name": "lru", "offset": 8, "size": 16},
                       {"name": "compound_head", "offset": 8, "size": 8},
                       {"name": "_refcount", "offset": 52, "size": 4}])
    misses = pd.DataFrame([
        miss(0, A, "read", "struct page", "compound_head", "L1D", "coherence", 162),
        miss(1, B, "rmw", "struct page", "lru", "L1D", "upgrade", 3),
        miss(2, C, "write", "struct page", "_refcount", "L1D", "upgrade", 4),
        # a union no source line told apart: its field is already named
        miss(3, A, "read", "struct page", "lru | compound_head", "L1D", "coherence", 50)])
    lines = SharedLines(misses, COHERENCE.iloc[0:0], fields, 64, {}, page_members=members)
    assert lines.lines().loc[0, "fields"] == "flags, compound_head, lru, _refcount"
    assert offsets_of(lines, "struct page+0x0")[0] == ("0x8", "struct page.compound_head",
                                                       "read")


def test_who_stole_page_flags_names_the_field_the_write_touches():
    """All of flags' thieves here write another field of its line (false
    sharing inside struct page): g writes flags itself, h _refcount."""
    from hotline.report import tables as rt
    misses = pd.concat([MISSES, pd.DataFrame([
        miss(1, G, "write", "struct page", "_refcount", "L1D", "upgrade", 6)])])
    coherence = pd.concat([COHERENCE, COHERENCE.iloc[[0]].assign(
        thief_pc=G, thief_symbol="writer", thief_offset=0x7, count=20)]).assign(
        symbol=lambda c: [CODE[pc][0] for pc in c["pc"]],
        offset=lambda c: [CODE[pc][1] for pc in c["pc"]])
    t = rt.RunTables(misses, pd.DataFrame(), coherence, pd.DataFrame(), pd.DataFrame(),
                     pd.DataFrame())
    table = rt.thieves(t, "flags", 5)
    assert [tuple(r) for r in table.itertuples(index=False)] == [
        ("f+0x10", "writer+0x7", "struct page._refcount", 20),
        ("f+0x10", "g+0x20", "struct page.flags", 8)]
