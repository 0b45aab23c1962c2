"""hotline's gem5 cycle profile read into tables (simulate/gem5/
cycle_profile.py), on tables written by hand in the extension's format,
with their drain tables; the cause and wait names, the versions and the
drain table's name against the extension's source; and, with GEM5 set to a
gem5 built with the extension, the profile of a real O3 run (tests/
test_gem5_backend.py runs it)."""

import re
from types import SimpleNamespace

import pandas as pd
import pytest

from hotline import paths
from hotline.errors import HotlineError
from hotline.results import schema
from hotline.simulate.gem5 import cycle_profile

SOURCE = paths.CONFIGS / "gem5" / "extras" / "cycle_profile.cc"
COLUMNS = "pc,instructions,micro_ops,samples,skid_samples," + ",".join(schema.CYCLE_CAUSES)


def profile(tmp_path, rows, region=100, halted=10, name="p.csv", header=None, version=3,
            drains=()):
    # rows: (pc, instructions, micro_ops, {cause: units}); drains (version
    # 3): (barrier_pc, waited_for, store_pc, vaddr, units), the drain table
    # written beside the profile.
    columns = COLUMNS if version >= 2 else COLUMNS.replace("skid_samples,", "")
    lines = [header or f"# hotline cycle profile {version}: units_per_cycle=840 "
             f"region_cycles={region} halted_cycles={halted} sample_period=30 "
             "core=board.processor.cores0.core", columns]
    for pc, insts, uops, units in rows:
        # Samples (one every 30 unhalted cycles): 90 cycles, 3 samples;
        # next-committing: 0x10's stall's 2 and 0x20's 1; skid: the
        # instruction after 0x10's stall is 0x20, so 0x20 has all 3.
        samples = {0x10: 2, 0x20: 1}.get(pc, 0)
        skid = [str({0x20: 3}.get(pc, 0))] if version >= 2 else []
        lines.append(",".join([str(pc), str(insts), str(uops), str(samples), *skid,
                               *(str(units.get(c, 0)) for c in schema.CYCLE_CAUSES)]))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    if version >= 3:
        drain_lines = ["# hotline drain profile 1: units_per_cycle=840 "
                       "core=board.processor.cores0.core", ",".join(cycle_profile.DRAIN_COLUMNS),
                       *(",".join(str(v) for v in row) for row in drains)]
        cycle_profile.drain_path(path).write_text("\n".join(drain_lines) + "\n")
    return path


# 90 charged cycles: 0x10 committed alone in 30 cycles and with 0x20 in one
# more (half a cycle, 420 units, each), and waited 50 cycles on memory:
# 80.5; 0x20 its half and 7 cycles after a mispredict: 7.5; the region ended
# 2 cycles after the last commit with the reorder buffer empty: 2 at pc 0.
# 80.5 + 7.5 + 2 = 90, and 10 halted: the region's 100.
ROWS = [(0x10, 31, 40, {"commit": 30 * 840 + 420, "load_memory": 50 * 840}),
        (0x20, 1, 1, {"commit": 420, "mispredict": 7 * 840}),
        (0x0, 0, 0, {"front_end": 2 * 840})]


def test_a_profile_that_adds_up_becomes_cycles_per_instruction(tmp_path):
    meta, rows = cycle_profile.read(profile(tmp_path, ROWS))
    assert meta == {"units_per_cycle": 840, "region_cycles": 100, "halted_cycles": 10,
                    "sample_period": 30}
    assert rows["pc"].tolist() == [0x10, 0x20, 0x0]


def test_tables_split_cycles_by_cause_and_keep_the_regions(tmp_path, monkeypatch):
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    made = cycle_profile.tables({(0, 1): profile(tmp_path, ROWS)}, objects=None, run_id="r")
    cycles = made["cycles"].set_index("pc")
    assert cycles.loc[0x10, "cycles"] == pytest.approx(80.5)
    assert cycles.loc[0x10, "cycles_load_memory"] == 50
    assert cycles.loc[0x20, "cycles"] == pytest.approx(7.5)
    assert cycles["cycles"].sum() == pytest.approx(90)
    assert cycles["samples"].sum() == 3
    assert cycles["skid_samples"].tolist() == [0, 3, 0]
    assert made["region_cycles"].loc[0].tolist() == ["r", 0, 1, 100, 10, 30]


def test_a_profile_made_before_the_skid_view_has_none(tmp_path, monkeypatch):
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    made = cycle_profile.tables({(0, 1): profile(tmp_path, ROWS, version=1)}, objects=None,
                                run_id="r")
    assert made["cycles"]["samples"].sum() == 3
    assert made["cycles"]["skid_samples"].isna().all()


@pytest.mark.parametrize("change, complaint", [
    (dict(region=101), "does not add up"),
    (dict(halted=9), "does not add up"),
    (dict(header="# something else"), "not a hotline cycle profile"),
    (dict(header="# hotline cycle profile 1: units_per_cycle=840"), "damaged cycle profile"),
])
def test_a_profile_that_does_not_add_up_or_is_damaged_is_refused(tmp_path, change, complaint):
    with pytest.raises(HotlineError, match=complaint):
        cycle_profile.read(profile(tmp_path, ROWS, **change))


def test_a_profile_from_another_version_of_the_extension_is_refused(tmp_path):
    path = profile(tmp_path, ROWS)
    path.write_text(path.read_text().replace(",squash\n", ",flush\n"))
    with pytest.raises(HotlineError, match="rebuild gem5"):
        cycle_profile.read(path)


def test_the_schema_names_the_causes_as_the_extension_does():
    names = re.search(r"causeNames\[NumCauses\] = \{(.*?)\};", SOURCE.read_text(), re.S)
    assert tuple(re.findall(r'"(\w+)"', names.group(1))) == schema.CYCLE_CAUSES


def test_the_drain_tables_names_versions_and_place_are_the_extensions():
    source = SOURCE.read_text()
    names = re.search(r"waitNames\[NumWaits\] = \{(.*?)\};", source, re.S)
    assert tuple(re.findall(r'"(\w+)"', names.group(1))) == schema.DRAIN_WAITS
    assert f'drainPrefix = "{cycle_profile.DRAIN_PREFIX}"' in source
    for magic in (cycle_profile.MAGIC, cycle_profile.DRAIN_MAGIC):
        assert f'"{magic} ' in source
    # Beside the region's table, and not among the names of region tables.
    assert cycle_profile.drain_path(paths.REPO / "cycles" / "region0.sample3.cpu1.csv") == \
        paths.REPO / "cycles" / "drains.region0.sample3.cpu1.csv"


# A locked instruction after a store that missed to memory, in one core's
# region of 200 cycles, none halted.  0x10 stores to a struct page's flags
# (vaddr PAGE_FLAGS) and commits in 1 cycle.  0x20 is `lock incl` of a
# static `counter`: mfence; locked load; add; locked store; mfence.  Its
# first fence waits at the head while 0x10's write goes to memory, 150
# cycles, then 3 cycles to issue and execute with nothing older left in the
# store queue; its locked load executes 3 cycles (execute); its second
# fence waits 4 cycles for its own locked store (0x20, an L1D hit: the
# locked load brought the line in writable), then 3 to issue and execute.
# Its barrier cycles: 150 + 3 + 4 + 3 = 160; its five micro-ops commit in 5
# cycles.  0x30 commits the other 200 - 1 - 160 - 3 - 5 = 31 cycles.
VMEMMAP = 0xffffea0000000000
PAGE_FLAGS = VMEMMAP + 7 * 64
COUNTER = 0xffffffff82000040
LOCKED = [(0x10, 1, 1, {"commit": 840}),
          (0x20, 1, 5, {"commit": 5 * 840, "barrier": 160 * 840, "execute": 3 * 840}),
          (0x30, 31, 31, {"commit": 31 * 840})]
DRAINED = [(0x20, "store_l1d_hit", 0x20, COUNTER, 4 * 840),
           (0x20, "store_memory", 0x10, PAGE_FLAGS, 150 * 840),
           (0x20, "no_store", 0, 0, 6 * 840)]
OBJECTS = SimpleNamespace(
    locate=lambda vaddr: {PAGE_FLAGS: ("struct page", "flags"),
                          COUNTER: ("counter", "+0x0")}.get(vaddr, ("kernel-other", "")),
    name_members=lambda frame, pc_column="pc": frame)


def with_both_codes(frame, column, prefix, objects):
    return frame.assign(**{f"{prefix}symbol": "f", f"{prefix}offset": frame[column] - 0x10,
                           f"{prefix}source_line": ""})


def test_a_fences_cycles_go_to_the_stores_it_waited_for(tmp_path, monkeypatch):
    monkeypatch.setattr(cycle_profile, "with_code", with_both_codes)
    path = profile(tmp_path, LOCKED, region=200, halted=0, drains=DRAINED)
    made = cycle_profile.tables({(0, 2): path}, objects=OBJECTS, run_id="r")
    drains = made["drains"]
    assert list(drains.columns) == list(schema.DRAINS)
    by_wait = drains.set_index("waited_for")
    assert by_wait.loc["store_memory", ["pc", "store_pc", "object", "field", "cycles"]] \
        .tolist() == [0x20, 0x10, "struct page", "flags", 150.0]
    assert by_wait.loc["store_l1d_hit", ["store_pc", "object", "cycles"]].tolist() == \
        [0x20, "counter", 4.0]
    assert by_wait.loc["no_store", ["store_pc", "object", "field", "cycles"]].tolist() == \
        [0, "", "", 6.0]
    assert by_wait.loc["store_memory", ["store_symbol", "store_offset"]].tolist() == ["f", 0]
    assert (drains["region"].tolist(), drains["cpu"].tolist()) == ([0] * 3, [2] * 3)
    # The breakdown adds up to the instruction's barrier cycles.
    assert drains["cycles"].sum() == made["cycles"].set_index("pc").loc[0x20, "cycles_barrier"]


def test_a_drain_table_that_does_not_add_up_is_refused(tmp_path):
    # The store held the drain 149 cycles by the drain table, the fences
    # waited 160 by the profile: one cycle went nowhere.
    short = [row if row[1] != "store_memory" else (*row[:4], 149 * 840) for row in DRAINED]
    path = profile(tmp_path, LOCKED, region=200, halted=0, drains=short)
    meta, rows = cycle_profile.read(path)
    with pytest.raises(HotlineError) as e:
        cycle_profile.read_drains(path, meta, rows)
    assert str(e.value) == (f"{cycle_profile.drain_path(path)}: the fences at 0x20 waited 159 "
                            "cycles by it and 160 by p.csv: the drain table does not add up")
    # Nor a drain for an instruction with no barrier cycles, nor none for one
    # with them.
    for drains in ([*DRAINED, (0x30, "no_store", 0, 0, 840)], DRAINED[:0]):
        path = profile(tmp_path, LOCKED, region=200, halted=0, drains=drains)
        with pytest.raises(HotlineError, match="the drain table does not add up"):
            cycle_profile.read_drains(path, *cycle_profile.read(path))


def test_a_drain_table_missing_or_of_another_version_is_refused(tmp_path):
    path = profile(tmp_path, LOCKED, region=200, halted=0, drains=DRAINED)
    cycle_profile.drain_path(path).write_text(
        cycle_profile.drain_path(path).read_text().replace("store_memory", "store_dram"))
    with pytest.raises(HotlineError, match="unknown wait 'store_dram'; .*rebuild gem5"):
        cycle_profile.read_drains(path, *cycle_profile.read(path))
    cycle_profile.drain_path(path).unlink()
    with pytest.raises(HotlineError, match=r"/drains\.p\.csv: missing beside p\.csv: run the"):
        cycle_profile.tables({(0, 0): path}, objects=OBJECTS, run_id="r")


def test_a_profile_made_before_the_drain_table_has_none(tmp_path, monkeypatch):
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    path = profile(tmp_path, LOCKED, region=200, halted=0, version=2)
    assert not cycle_profile.drain_path(path).exists()
    assert cycle_profile.read_drains(path, *cycle_profile.read(path)) is None
    made = cycle_profile.tables({(0, 0): path}, objects=None, run_id="r")
    assert made["drains"].empty and list(made["drains"].columns) == list(schema.DRAINS)
    assert made["cycles"].set_index("pc").loc[0x20, "cycles_barrier"] == 160


def test_a_sampled_runs_windows_give_each_share_with_its_interval(tmp_path, monkeypatch):
    # Three windows of 100 cycles on each of two cores, none halted.  pc
    # 0x10's cycles (both cores) in them: 20 + 30, 40 + 0, 25 + 5: shares of
    # the 200 unhalted cycles 0.25, 0.20, 0.15; mean 0.20, sample sd 0.05,
    # so the 95% half-width is t(0.975, 2) = 4.3027 x 0.05 / sqrt(3) =
    # 0.1242.  pc 0x20 takes the rest of each window: 0.75, 0.80, 0.85.
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    at_0x10 = {(0, 0): 20, (0, 1): 30, (1, 0): 40, (1, 1): 0, (2, 0): 25, (2, 1): 5}
    files = {}
    for (window, cpu), cycles in at_0x10.items():
        rows = [(0x10, 1, 1, {"execute": cycles * 840}),
                (0x20, 1, 1, {"commit": (100 - cycles) * 840})]
        files[(0, window, cpu)] = profile(tmp_path, rows, region=100, halted=0,
                                          name=f"w{window}c{cpu}.csv")
    table = cycle_profile.sampled(files, objects=None, run_id="r").set_index("pc")
    assert table.loc[0x10, "windows"] == 3
    assert table.loc[0x10, "cycles"] == pytest.approx(120)
    assert table.loc[0x10, "share"] == pytest.approx(0.20)
    assert table.loc[0x10, "share_low"] == pytest.approx(0.20 - 0.1242, abs=1e-4)
    assert table.loc[0x10, "share_high"] == pytest.approx(0.20 + 0.1242, abs=1e-4)
    assert table.loc[0x20, "share"] == pytest.approx(0.80)
    assert table["share"].sum() == pytest.approx(1.0)


def test_an_instruction_a_window_missed_counts_zero_there(tmp_path, monkeypatch):
    # Two windows of 100 cycles on one core: 0x30 takes 50 in the first and
    # is not in the second's table; its share is 0.25, not 0.5.
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    files = {(0, 0, 0): profile(tmp_path, [(0x30, 1, 1, {"execute": 50 * 840}),
                                           (0x40, 1, 1, {"commit": 50 * 840})],
                                halted=0, name="a.csv"),
             (0, 1, 0): profile(tmp_path, [(0x40, 1, 1, {"commit": 100 * 840})],
                                halted=0, name="b.csv")}
    table = cycle_profile.sampled(files, objects=None, run_id="r").set_index("pc")
    assert table.loc[0x30, "share"] == pytest.approx(0.25)
    assert table.loc[0x40, "share"] == pytest.approx(0.75)


def test_windows_weigh_by_their_unhalted_cycles(tmp_path, monkeypatch):
    # Three windows of 100 cycles on two cores.  Window 0: core 0 gives 0x10
    # 60 cycles and 0x20 40, core 1 is halted throughout; window 1: each core
    # gives 0x10 20 and 0x20 80; window 2: both halted.  0x10's cycles y =
    # 60, 40, 0 of unhalted x = 100, 200, 0: its share is 100 / 300 = 1/3
    # (the mean of the windows' own shares, 0.6, 0.2 and 0, would be 0.267).
    # Residuals y - x/3: 26.667, -26.667, 0; their sd 26.667, over the mean
    # x of 100: 0.26667; half-width t(0.975, 2) x 0.26667 / sqrt(3) = 0.6624.
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    busy = {(0, 0): (60, 40), (1, 0): (20, 80), (1, 1): (20, 80)}
    files = {}
    for window in range(3):
        for cpu in range(2):
            at = busy.get((window, cpu))
            rows = [(0x10, 1, 1, {"execute": at[0] * 840}),
                    (0x20, 1, 1, {"commit": at[1] * 840})] if at else []
            files[(0, window, cpu)] = profile(tmp_path, rows, region=100,
                                              halted=0 if at else 100,
                                              name=f"w{window}c{cpu}.csv")
    table = cycle_profile.sampled(files, objects=None, run_id="r").set_index("pc")
    assert table.loc[0x10, "windows"] == 3
    assert table.loc[0x10, "share"] == pytest.approx(1 / 3)
    assert table.loc[0x10, "share_high"] - table.loc[0x10, "share"] == \
        pytest.approx(0.6624, abs=1e-4)
    assert table.loc[0x20, "share"] == pytest.approx(2 / 3)


def test_a_window_in_slow_code_measures_as_many_micro_ops_as_one_in_fast(tmp_path,
                                                                         monkeypatch):
    # One core runs phase A (pc 0xA0, 4 cycles a micro-op on O3) and phase
    # B (0xB0, 1 cycle a micro-op), 2,000 micro-ops each: A takes 8,000
    # cycles of the 10,000, a share of 0.8.  The atomic cores place the
    # windows by micro-ops, two in each phase, and each window measures 100
    # micro-ops: 400 cycles in A, 100 in B.  Pooled, A's share is 800 /
    # 1,000 = 0.8.  Residuals y - 0.8 x: 80, 80, -80, -80 over x = 400,
    # 400, 100, 100; sd 92.376 over the mean x 250: 0.36950; half-width
    # t(0.975, 3) = 3.1824 x 0.36950 / sqrt(4) = 0.5880.  A is one `rep
    # stos` instruction per window, as gem5 counts it (B's micro-ops are
    # instructions): windows of instructions would measure a page of A for
    # each of B's 100.
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    phases = {0: (0xA0, 1, 400), 1: (0xA0, 1, 400), 2: (0xB0, 100, 100), 3: (0xB0, 100, 100)}
    files = {(0, window, 0): profile(tmp_path, [(pc, insts, 100, {"commit": cycles * 840})],
                                     region=cycles, halted=0, name=f"w{window}.csv")
             for window, (pc, insts, cycles) in phases.items()}
    table = cycle_profile.sampled(files, objects=None, run_id="r").set_index("pc")
    assert table.loc[0xA0, "share"] == pytest.approx(0.8)
    assert table.loc[0xB0, "share"] == pytest.approx(0.2)
    assert table.loc[0xA0, "share_high"] - table.loc[0xA0, "share"] == \
        pytest.approx(0.5880, abs=1e-4)
    assert table.loc[0xA0, "cycles"] == pytest.approx(800)    # what the windows measured
    # The estimate's two halves.  Micro-ops: A's 100 a window of 100, B's
    # 0: A's share 200 / 400 = 0.5; residuals 50, 50, -50, -50 of x = 100
    # each, sd 57.735 over the mean x 100: half-width 3.1824 x 0.57735 / 2
    # = 0.9187.  Cycles per micro-op: A's 400 cycles for 100 in each of its
    # windows, 4 with no spread; B's 1.
    assert table.loc[0xA0, "micro_ops"] == 200
    assert table.loc[0xA0, "micro_op_share"] == pytest.approx(0.5)
    assert table.loc[0xA0, "micro_op_share_high"] - table.loc[0xA0, "micro_op_share"] == \
        pytest.approx(0.9187, abs=1e-4)
    assert table.loc[0xA0, "cycles_per_micro_op"] == pytest.approx(4)
    assert table.loc[0xA0, "cycles_per_micro_op_low"] == pytest.approx(4)
    assert table.loc[0xB0, "cycles_per_micro_op"] == pytest.approx(1)
    assert table["counted_micro_ops"].isna().all()     # this run counted none


def test_cycles_per_micro_op_has_the_windows_spread_and_the_run_its_own_count(tmp_path,
                                                                              monkeypatch):
    # One core, two windows of 100 cycles, each period what its window ran
    # (weights 1).  0x10 takes 40 cycles for 10 micro-ops, then 60 for 10:
    # 100 / 20 = 5 cycles a micro-op; residuals y - 5 x = -10, 10, sd
    # 14.142 over the mean x 10: half-width t(0.975, 1) = 12.706 x 1.4142 /
    # sqrt(2) = 12.706.  The run counted 0x10 at 70 micro-ops, 0x20 not at
    # all (0), and 0x30, which no window saw, has no row.
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    files = {(0, w, 0): profile(tmp_path, [(0x10, 10, 10, {"execute": c * 840}),
                                           (0x20, 5, 5, {"commit": (100 - c) * 840})],
                                halted=0, name=f"w{w}.csv")
             for w, c in ((0, 40), (1, 60))}
    counted = pd.Series({0x10: 70, 0x30: 9})
    table = cycle_profile.sampled(files, objects=None, run_id="r",
                                  counted=counted).set_index("pc")
    assert table.loc[0x10, "cycles_per_micro_op"] == pytest.approx(5)
    assert table.loc[0x10, "cycles_per_micro_op_high"] == pytest.approx(5 + 12.706, abs=1e-3)
    assert table.loc[0x10, "micro_op_share"] == pytest.approx(20 / 30)
    assert table["counted_micro_ops"].to_dict() == {0x10: 70.0, 0x20: 0.0}


def test_a_core_asleep_through_a_window_adds_nothing_to_it(tmp_path, monkeypatch):
    # Two cores, two windows.  Core 0 slept through window 0 (nothing
    # committed) and ran 100 micro-ops of 0x10 in 200 cycles in window 1;
    # core 1 ran 100 of 0x20 in 100 cycles in each.  The windows sampled
    # 300 micro-ops, 100 of them 0x10's: a third; and 400 cycles, 200 of
    # them 0x10's: a half.  (Until 2026-11-28 window 1 stood for core 0's
    # micro-ops since window 0 as well, and gave 0x10 a half and two
    # thirds.)
    monkeypatch.setattr(cycle_profile, "with_code",
                        lambda frame, *_: frame.assign(symbol="f", offset=0, source_line=""))
    files = {(0, 0, 0): profile(tmp_path, [], region=100, halted=100, name="w0c0.csv"),
             (0, 1, 0): profile(tmp_path, [(0x10, 100, 100, {"execute": 200 * 840})],
                                region=200, halted=0, name="w1c0.csv")}
    for w in range(2):
        files[(0, w, 1)] = profile(tmp_path, [(0x20, 100, 100, {"commit": 100 * 840})],
                                   region=100, halted=0, name=f"w{w}c1.csv")
    table = cycle_profile.sampled(files, objects=None, run_id="r").set_index("pc")
    assert table.loc[0x10, "share"] == pytest.approx(1 / 2)
    assert table.loc[0x10, "micro_op_share"] == pytest.approx(1 / 3)
