"""annotate's pieces on hand-written tables: misses per instruction, level
and cause; the reads after partial writes an instruction took part in; the
cycles, sampled share and main wait of each instruction (gem5 O3); what a
locked instruction's fences waited for; the files a patch touches (whose
source is shown patched)."""

import pandas as pd
import pytest

from hotline.records import manifest as run_record
from hotline.report.annotate import cycle_split, drain_split, miss_split, partial_writes
from hotline.results.schema import CYCLE_CAUSES
from hotline.kernel.source_text import touched_files

K = 0xffffffff81000000


def test_misses_per_instruction_level_and_cause():
    misses = pd.DataFrame({
        "pc": [K, K, K, K + 8, K + 99],
        "level": ["L1D", "L1D", "L2", "L1D", "L1D"],
        "cause": ["coherence", "coherence", "capacity", "upgrade", "capacity"],
        "count": [3, 4, 2, 5, 100]})
    assert miss_split(misses, [K, K + 8]) == {
        K: {"L1D": {"coherence": 7}, "L2": {"capacity": 2}},
        K + 8: {"L1D": {"upgrade": 5}}}


def test_partial_writes_as_store_and_as_load():
    rapw = pd.DataFrame({
        "store_pc": [K + 8, K + 8, K + 8, K + 8, K + 0x40],
        "store_symbol": ["folio_unlock"] * 4 + ["other"],
        "store_offset": [8, 8, 8, 8, 0],
        "load_pc": [K + 0x100, K + 0x200, K + 0x100, K + 0x300, K + 0x10],
        "load_symbol": ["page_zone", "folio_mark_accessed", "page_zone", "x", "folio_unlock"],
        "load_offset": [4, 0x1f, 4, 0, 0x10],
        "count": [10, 6, 5, 1, 2]})
    notes = partial_writes(rapw, {K + 8, K + 0x10}, "folio_unlock", partners=2)
    # As the store: 10 + 6 + 5 + 1 = 22 events, page_zone+0x4 15 of them.
    assert notes[K + 8] == ("22 as the store, loaded by page_zone+0x4 15; "
                            "folio_mark_accessed+0x1f 6; 1 more")
    # As the load, of the store in `other`.
    assert notes[K + 0x10] == "2 as the load, of stores by other+0x0 2"


def test_the_files_a_patch_touches(tmp_path):
    patch = tmp_path / "0001.patch"
    patch.write_text("""From: x
Subject: [PATCH] y
---
diff --git a/mm/filemap.c b/mm/filemap.c
--- a/mm/filemap.c
+++ b/mm/filemap.c
@@ -1 +1 @@
-a
+b
diff --git a/include/linux/new.h b/include/linux/new.h
--- /dev/null
+++ b/include/linux/new.h\t2024-01-01
@@ -0,0 +1 @@
+c
diff --git a/mm/gone.c b/mm/gone.c
--- a/mm/gone.c
+++ /dev/null
""")
    assert touched_files(patch) == {"mm/filemap.c", "include/linux/new.h"}


def test_cycles_per_instruction_share_sampled_share_and_wait():
    # Two cores' rows of two instructions of one function and one of
    # another.  K: 30 + 10 = 40 cycles, 25 of them waiting on memory; K + 8:
    # 60 cycles, all committing.  The function's 100 cycles: 40% and 60%.
    # Samples: K 1 + 0, K + 8 2 + 1: 25% and 75%.
    causes = {f"cycles_{c}": 0.0 for c in CYCLE_CAUSES}
    cycles = pd.DataFrame([
        {"pc": K, "cycles": 30.0, "samples": 1, **causes, "cycles_commit": 10.0,
         "cycles_load_memory": 20.0},
        {"pc": K, "cycles": 10.0, "samples": 0, **causes, "cycles_commit": 5.0,
         "cycles_load_memory": 5.0},
        {"pc": K + 8, "cycles": 60.0, "samples": 2, **causes, "cycles_commit": 60.0},
        {"pc": K + 8, "cycles": 0.0, "samples": 1, **causes},
        {"pc": K + 99, "cycles": 500.0, "samples": 9, **causes, "cycles_commit": 500.0}])
    split = cycle_split(cycles, [K, K + 8])
    assert (split["cycles"], split["samples"]) == (100.0, 4)
    assert split["per_pc"][K] == {"cycles": 40.0, "share": 0.4, "sampled": 0.25,
                                  "skid": None, "waiting": "load_memory"}
    assert split["per_pc"][K + 8] == {"cycles": 60.0, "share": 0.6, "sampled": 0.75,
                                      "skid": None, "waiting": ""}
    # With the skid view: K's stalled load names K + 8 in it (K 0 + 0, K + 8
    # 3 + 1 of the function's 4): 0% and 100%.
    cycles["skid_samples"] = pd.array([0, 0, 3, 1, 9], dtype="Int64")
    split = cycle_split(cycles, [K, K + 8])
    assert (split["per_pc"][K]["skid"], split["per_pc"][K + 8]["skid"]) == (0.0, 1.0)


def test_the_listing_shows_time_beside_misses_when_the_run_has_it(monkeypatch):
    from hotline.report import annotate
    monkeypatch.setattr(annotate, "header", lambda manifest: [])   # needs a whole manifest
    timed = {"cycles": 40.0, "share": 0.4, "sampled": 0.25, "skid": 0.125,
             "waiting": "load_memory"}
    rows = [{"source": "mm/rmap.c:10", "text": "lock();"},
            {"pc": K, "offset": 0, "instruction": "lock btsl $0x0,(%rdi)", "kind": "rmw",
             "accesses": 4, "misses": {"L1D": {"coherence": 3}}, "partial writes": "",
             "time": timed},
            {"pc": K + 5, "offset": 5, "instruction": "ret", "kind": "", "accesses": 0,
             "misses": {"L1D": {}}, "partial writes": "", "time": None}]
    a = annotate.Annotation("f", K, 6, ["L1D"], rows, {"L1D": 3}, None,
                            {"cycles": 100.0, "samples": 4, "run_share": 0.02, "per_pc": {}})
    text = annotate.as_text({}, a)
    assert "100 cycles, 2.0% of the run's; 4 samples" in text
    line = next(line for line in text.splitlines() if "btsl" in line)
    assert "40" in line and "40.0%" in line and "25.0%" in line and "12.5%" in line \
        and "load_memory" in line
    page = annotate.as_html({}, a)
    assert "<th>next</th>" in page and "<td>25.0%</td>" in page
    assert "<th>skid</th>" in page and "<td>12.5%</td>" in page


def drain(pc, waited_for, cycles, store_pc=0, symbol="", offset=0, obj="", field=""):
    return {"pc": pc, "waited_for": waited_for, "store_pc": store_pc, "store_symbol": symbol,
            "store_offset": offset, "object": obj, "field": field, "cycles": float(cycles)}


def test_a_locked_instructions_fences_say_what_they_waited_for():
    # pte_chain_add's lock at K + 0x20, on two cores.  Its fences waited 380
    # cycles (300 + 80) for the store at K + 0x10 to a struct page's flags,
    # which went to memory; 20 for its own locked store (an L1D hit); 2 for
    # a store in another function, served by the L2; 12 with nothing older
    # in the store queue: 414 cycles, its barrier cycles.  Another
    # function's fence (K + 0x99) is not this listing's.
    drains = pd.DataFrame([
        drain(K + 0x20, "store_memory", 300, K + 0x10, "pte_chain_add", 0x10,
              "struct page", "flags"),
        drain(K + 0x20, "store_memory", 80, K + 0x10, "pte_chain_add", 0x10,
              "struct page", "flags"),
        drain(K + 0x20, "store_l1d_hit", 20, K + 0x20, "pte_chain_add", 0x20,
              "struct page", "lru | compound_head"),
        drain(K + 0x20, "store_l2", 2, K + 0x500, "page_add_rmap", 0x8, "pte_chain", "+0x8"),
        drain(K + 0x20, "no_store", 7), drain(K + 0x20, "no_store", 5),
        drain(K + 0x99, "no_store", 3)])
    notes = drain_split(drains, [K + 0x10, K + 0x20], "pte_chain_add")
    assert notes == {K + 0x20: (
        "waited 414 cycles for: store at ffffffff81000010 +0x10 (struct page.flags, memory) "
        "380, store at ffffffff81000020 +0x20 (struct page.(lru | compound_head), L1D hit) "
        "20, store at ffffffff81000500 page_add_rmap+0x8 (pte_chain+0x8, L2) 2, nothing in "
        "the store queue 12")}
    # At most `stores` stores, then the rest in one.
    assert drain_split(drains, [K + 0x20], "pte_chain_add", stores=1)[K + 0x20].endswith(
        "(struct page.flags, memory) 380, 2 more stores 22, nothing in the store queue 12")


def test_the_listing_shows_the_drain_under_the_locked_instruction(monkeypatch):
    from hotline.report import annotate
    monkeypatch.setattr(annotate, "header", lambda manifest: [])   # needs a whole manifest
    waited = "waited 414 cycles for: nothing in the store queue 414"
    rows = [{"pc": K, "offset": 0, "instruction": "lock btsl $0x0,(%rdi)", "kind": "rmw",
             "accesses": 4, "misses": {"L1D": {}}, "partial writes": "",
             "time": {"cycles": 420.0, "share": 1.0, "sampled": 1.0, "skid": None,
                      "waiting": "barrier"}, "drain": waited},
            {"pc": K + 5, "offset": 5, "instruction": "ret", "kind": "", "accesses": 0,
             "misses": {"L1D": {}}, "partial writes": "", "time": None, "drain": ""}]
    a = annotate.Annotation("f", K, 6, ["L1D"], rows, {"L1D": 0}, None,
                            {"cycles": 420.0, "samples": 4, "run_share": 0.02, "per_pc": {}})
    lines = annotate.as_text({}, a).splitlines()
    at = next(i for i, line in enumerate(lines) if "btsl" in line)
    assert lines[at + 1].strip() == waited and "ret" in lines[at + 2]
    assert any(line.startswith("Under an instruction whose fences waited") for line in lines)
    page = annotate.as_html({}, a)
    assert '<tr class="drain"><td colspan="' in page and f"{waited}</td></tr>" in page


def test_a_run_without_an_instructions_table_reads_as_one_with_no_rows(tmp_path):
    """gem5 runs make no instructions table: annotate still selects from it
    (by pc and kind) and sums its accesses."""
    from hotline.report.tables import RunTables
    t = RunTables.read(tmp_path, made=set())
    data = t.instructions[t.instructions["pc"].isin([K]) & (t.instructions["kind"] != "fetch")]
    assert data.empty and data.groupby("pc")["accesses"].sum().empty
    assert "instructions" in t.absent


def test_the_seeds_table_goes_beside_the_instructions_after_the_lock_and_the_unlock(
        monkeypatch):
    # pte_chain_add in miniature: the lock is the first lock bts, the unlock
    # the first locked clear after it (a patched one, marked '*', too); the
    # seed's page_add_rmap gave 33.4806% and 36.0334% of its samples
    # (analysis/seeds/000_*.txt, lines 125 and 153) to the instructions
    # after them, where the Pentium III's skid put their time.
    from hotline.report import annotate
    listing = {K: "push %rbx", K + 1: "lock btsl $0x1a,(%rdi)", K + 6: "mov %rax,0x38(%rdi)",
               K + 10: "* lock andb $0xfb,0x3(%rdi)", K + 15: "ret"}
    what, beside = annotate.seed_beside("pte_chain_add", K, listing)
    assert beside == {K + 6: "33.5% after lock", K + 15: "36.0% after unlock"}
    assert "seed 000" in what and "page_add_rmap" in what
    assert annotate.seed_beside("page_add_anon_rmap", K, listing) is None
    assert annotate.SEED_NAMES["page_add_rmap"] == "pte_chain_add"
    rows = [{"pc": pc, "offset": pc - K, "instruction": text, "kind": "", "accesses": 0,
             "misses": {"L1D": {}}, "partial writes": "", "time": None}
            for pc, text in listing.items()]
    a = annotate.Annotation("pte_chain_add", K, 16, ["L1D"], rows, {"L1D": 0}, None,
                            seed=(what, beside))
    monkeypatch.setattr(annotate, "header", lambda manifest: [])   # needs a whole manifest
    text = annotate.as_text({}, a)
    assert "Seed: seed 000" in text
    assert "33.5% after lock" in next(line for line in text.splitlines() if "mov %rax" in line)
    assert "36.0% after unlock" in next(line for line in text.splitlines() if "ret" in line)
    assert "% after" not in next(line for line in text.splitlines() if "btsl" in line)
    assert "<td>36.0% after unlock</td>" in annotate.as_html({}, a)


def sampled_run(directory, kernel_key="k", tables=("sampled_cycles",)):
    """A sampled run's directory as experiment.execute() leaves it: 0x10
    past K estimated at 2% (1.5-2.5%) of its unhalted cycles in 40 windows."""
    from made_runs import write_run
    frames = {"sampled_cycles": pd.DataFrame({
        "pc": [K + 0x10, K + 0x999], "windows": 40, "share": [0.02, 0.5],
        "share_low": [0.015, 0.4], "share_high": [0.025, 0.6]})}
    return write_run(directory, {
        "status": "ok", "failure": None, "tables": {t: f"{t}.parquet" for t in tables},
        "inputs": {"kernel": {"key": kernel_key}, "system": {"name": "p6-sampled"}}},
        {t: frames[t] for t in tables})


def test_a_sampled_runs_estimates_go_beside_the_exact_shares(tmp_path, monkeypatch):
    """The estimate and its interval beside the instruction's exact share of
    the run's cycles (40 of 2,000: 2.00%); an instruction the windows never
    saw has a blank estimate; a sampled run of another kernel build is
    refused, as is one without estimates."""
    from types import SimpleNamespace

    from hotline.errors import HotlineError
    from hotline.report import annotate
    run = SimpleNamespace(manifest=run_record.of({"inputs": {"kernel": {"key": "k"}}}, "m"),
                          directory=tmp_path)
    what, by_pc = annotate.estimates(run, sampled_run(tmp_path / "s"), [K, K + 0x10])
    assert what == "s (p6-sampled, 40 windows)" and by_pc == {K + 0x10: (0.02, 0.015, 0.025)}
    monkeypatch.setattr(annotate, "header", lambda manifest: [])   # needs a whole manifest
    rows = [{"pc": pc, "offset": pc - K, "instruction": text, "kind": "", "accesses": 0,
             "misses": {"L1D": {}}, "partial writes": "",
             "time": {"cycles": 40.0, "share": 0.5, "sampled": 0.5, "waiting": ""}}
            for pc, text in ((K, "push %rbx"), (K + 0x10, "mov (%rdi),%rax"))]
    time = {"cycles": 80.0, "samples": 2, "run_share": 0.04, "run_cycles": 2000.0,
            "per_pc": {K: rows[0]["time"], K + 0x10: rows[1]["time"]}}
    a = annotate.Annotation("f", K, 0x20, ["L1D"], rows, {"L1D": 0}, None, time,
                            estimate=(what, by_pc))
    text = annotate.as_text({}, a)
    assert "Sampled: s (p6-sampled, 40 windows)" in text
    assert "2.00%   2.00% (1.50%-2.50%)" in next(line for line in text.splitlines()
                                                  if "mov (%rdi)" in line)
    assert "(" not in next(line for line in text.splitlines() if "push" in line)
    assert "<td>2.00% (1.50%-2.50%)</td>" in annotate.as_html({}, a)
    with pytest.raises(HotlineError, match="ran kernel build other, .* build k: give a sampled"):
        annotate.estimates(run, sampled_run(tmp_path / "o", kernel_key="other"), [K])
    with pytest.raises(HotlineError, match="has no sampled_cycles table"):
        annotate.estimates(run, sampled_run(tmp_path / "n", tables=()), [K])


def test_a_sampled_run_given_as_the_run_says_how_to_set_it_beside_an_exact_one(tmp_path):
    from hotline.errors import HotlineError
    from hotline.report.run import read_run
    run = sampled_run(tmp_path / "s")
    with pytest.raises(HotlineError) as e:
        read_run(run)
    assert str(e.value) == (f"{run} is a sampled run (SMARTS windows): it has estimates of each "
                            "instruction's time, no miss tables; set it beside an exact run: "
                            f"./hotline annotate EXACT_RUN FUNCTION --sampled {run}")


def test_a_seeds_name_names_the_chain_work_where_the_kernel_does_it(tmp_path):
    """`annotate RUN page_remove_rmap` on a pte_chain kernel, which has 6.1's
    page_remove_rmap too: the seed's listing is of the chain work, so it is
    pte_chain_remove that is listed."""
    from types import SimpleNamespace

    from hotline.report import annotate as a

    class Listed(Exception):
        pass

    def function(name):
        raise Listed(name)
    symbols = {"page_remove_rmap": SimpleNamespace(start=K, size=16),
               "pte_chain_remove": SimpleNamespace(start=K + 16, size=16)}
    run = SimpleNamespace(symbolizer=SimpleNamespace(function_named=symbols.get),
                          disassembly=SimpleNamespace(function=function))
    with pytest.raises(Listed, match="^pte_chain_remove$"):
        a.annotate(run, "page_remove_rmap")
    del symbols["pte_chain_remove"]         # a kernel without the chain: 6.1's own
    with pytest.raises(Listed, match="^page_remove_rmap$"):
        a.annotate(run, "page_remove_rmap")


def test_a_seeds_name_the_kernel_lacks_is_named_as_asked(tmp_path):
    """`annotate RUN page_add_rmap` on a baseline kernel: the error names
    page_add_rmap, what the user typed, and says why pte_chain_add was
    looked for (before, it named only pte_chain_add)."""
    from types import SimpleNamespace

    from hotline.errors import HotlineError
    from hotline.report import annotate as a
    from hotline.report import tables as rt
    misses = pd.DataFrame([{"cpu": 0, "pc": K, "space": "kernel", "kind": "read",
                            "symbol": "unmap_page_range", "offset": 0x696, "source_line": "",
                            "object": "struct page", "field": "flags", "level": "L1D",
                            "cause": "coherence", "count": 9, "cycles": 90}])
    run = SimpleNamespace(symbolizer=SimpleNamespace(function_named=lambda name: None),
                          tables=rt.RunTables(misses, *(pd.DataFrame() for _ in range(5))),
                          kernel=tmp_path, variant="baseline")
    with pytest.raises(HotlineError) as e:
        a.annotate(run, "page_add_rmap")
    message = str(e.value)
    assert message.startswith("no function 'page_add_rmap' in the run's kernel")
    assert "pte_chain_add" in message and "baseline" in message
    assert "unmap_page_range" in message
    with pytest.raises(HotlineError, match="^no function 'nonesuch' in the run's kernel "
                                           r"\([^)]*\); its functions"):
        a.annotate(run, "nonesuch")
