"""hotline's gem5 miss profile (configs/gem5/extras/miss_profile.hh) as the
host reads it, on tables written by hand: the raw frame and the coherence
misses by thief that attribution takes, with data addresses reduced as the
QEMU plugin reduces them and ticks turned into the core's cycles.  The
extension's counting inside gem5 is tests/test_gem5_run.py's."""

import pytest

from hotline.errors import HotlineError
from hotline.simulate.gem5 import miss_profile

VMEMMAP = 0xFFFFEA0000000000
LAYOUT = miss_profile.KernelLayout(vmemmap_base=VMEMMAP, struct_page_size=64)
K1, K2 = 0xFFFFFFFF81100000, 0xFFFFFFFF81100040     # kernel instructions
HEADER = ("# hotline miss profile 2: region_ticks=5000000 tick_frequency=1000000000000 "
          "line_bytes=64 mshr_hits={mshr} without_pc=7 uncacheable=0 "
          "unexplained_invalidations=1 own_l2_upgrades=2 deferred_writes=5 unfilled=0\n"
          "cpu,level,pc,kind,vaddr,cause,thief_cpu,thief_pc,count,ticks\n")


def table(tmp_path, name: str, rows: str, mshr: int = 3):
    path = tmp_path / name
    path.write_text(HEADER.format(mshr=mshr) + rows)
    return path


def test_rows_become_the_raw_frame_and_the_thieves(tmp_path):
    # pfn 3's and pfn 9's page->flags (byte 0 of their struct pages) are one
    # data key, pfn 0's; a direct-map address keeps its line, a kernel image
    # address itself; a user instruction's access has no address (0).
    flags3, flags9 = VMEMMAP + 3 * 64, VMEMMAP + 9 * 64
    rows = (f"0,L1D,{K1},rmw,{flags3},coherence,1,{K2},2,1000\n"
            f"0,L1D,{K1},rmw,{flags9},coherence,1,{K2},1,500\n"
            f"0,L1D,{K1},rmw,{flags9},coherence,2,{K2},1,500\n"
            f"1,L1D,{K2},write,{0xFFFF888000001234},capacity,-1,0,4,4000\n"
            f"1,L2,{K2},read,{0xFFFFFFFF82000008},compulsory,-1,0,1,60000\n"
            f"2,L1D,{0x401000},read,0,upgrade,-1,0,5,0\n"
            # An L2's coherence miss is in the raw frame, not in the thieves.
            f"3,L2,{K1},rmw,{flags3},coherence,1,{K2},7,700\n")
    # A second region adds to the first's rows.
    raw, stolen, summary = miss_profile.aggregate(
        [table(tmp_path, "r0.csv", rows), table(tmp_path, "r1.csv", rows.splitlines()[0] + "\n",
                                                mshr=4)],
        LAYOUT, clock_hz=2e9)
    by_key = {(r.cpu, r.level, r.pc, r.kind, r.data, r.cause): (r.count, r.cycles)
              for r in raw.itertuples()}
    # 2 + 1 + 1 misses in region 0 and 2 in region 1 on page->flags; 1,000 +
    # 500 + 500 + 1,000 ticks of 1 ps at 2 GHz: 6 cycles.
    assert by_key[(0, "L1D", K1, "rmw", VMEMMAP, "coherence")] == (6, 6)
    assert by_key[(1, "L1D", K2, "write", 0xFFFF888000001200, "capacity")] == (4, 8)
    assert by_key[(1, "L2", K2, "read", 0xFFFFFFFF82000008, "compulsory")] == (1, 120)
    assert by_key[(2, "L1D", 0x401000, "read", 0, "upgrade")] == (5, 0)
    assert by_key[(3, "L2", K1, "rmw", VMEMMAP, "coherence")] == (7, 1)
    assert len(by_key) == 5
    assert list(raw.columns) == ["cpu", "pc", "kind", "data", "level", "cause", "count",
                                 "cycles"]
    thieves = {(r.cpu, r.pc, r.data, r.thief_cpu, r.thief_pc): r.count
               for r in stolen.itertuples()}
    assert thieves == {(0, K1, VMEMMAP, 1, K2): 5, (0, K1, VMEMMAP, 2, K2): 1}
    assert summary == {"misses": 21 + 2, "mshr_hits": 7, "without_pc": 14, "uncacheable": 0,
                       "unexplained_invalidations": 2, "own_l2_upgrades": 4,
                       "deferred_writes": 10, "unfilled": 0}


def test_no_regions_give_empty_frames():
    raw, stolen, summary = miss_profile.aggregate([], LAYOUT, clock_hz=2e9)
    assert raw.empty and stolen.empty and summary["misses"] == 0


@pytest.mark.parametrize("text, says", [
    ("pc,instructions\n1,2\n", "not a hotline miss profile"),
    ("# hotline miss profile 2: region_ticks=1\ncpu\n", "damaged miss profile ('tick_frequency')"),
    (HEADER.format(mshr=0).replace(" own_l2_upgrades=2", ""),
     "damaged miss profile ('own_l2_upgrades')"),
    (HEADER.format(mshr=0) + "0,L1D,1,read,0,coherence,1,2,x,3\n", "damaged miss profile"),
    (HEADER.format(mshr=0).replace("thief_pc,", "") + "0,L1D,1,read,0,capacity,-1,1,3\n",
     "rebuild gem5"),
    (HEADER.format(mshr=0) + "0,L1D,1,read,0,stolen,1,2,1,3\n", "unknown cause 'stolen'"),
])
def test_damaged_tables_are_refused_in_one_line(tmp_path, text, says):
    path = tmp_path / "r0.csv"
    path.write_text(text)
    with pytest.raises(HotlineError, match=says.replace("(", r"\(").replace(")", r"\)")):
        miss_profile.aggregate([path], LAYOUT, clock_hz=2e9)


def test_a_table_of_the_extensions_first_version_asks_for_a_rebuild(tmp_path):
    # Its counts and causes follow other rules than this reader's tables.
    path = tmp_path / "r0.csv"
    path.write_text("# hotline miss profile 1: region_ticks=5000000 "
                    "tick_frequency=1000000000000 line_bytes=64 mshr_hits=0 without_pc=0 "
                    "uncacheable=0 unexplained_invalidations=0 unfilled=0\n"
                    "cpu,level,pc,kind,vaddr,cause,thief_cpu,thief_pc,count,ticks\n"
                    f"0,L1D,{K1},read,0,capacity,-1,0,1,10\n")
    with pytest.raises(HotlineError, match="another version.*rebuild gem5"):
        miss_profile.aggregate([path], LAYOUT, clock_hz=2e9)


def test_frames_have_the_declared_types(tmp_path):
    raw, stolen, _ = miss_profile.aggregate(
        [table(tmp_path, "r0.csv", f"0,L1D,{K1},rmw,{VMEMMAP},coherence,1,{K2},2,1000\n")],
        LAYOUT, clock_hz=2e9)
    assert dict(raw.dtypes.astype(str)) == {k: ("string" if v == "string" else v)
                                            for k, v in miss_profile.RAW.items()}
    assert dict(stolen.dtypes.astype(str)) == miss_profile.STOLEN


def test_the_kernel_layout_comes_from_layout_json(tmp_path):
    (tmp_path / "layout.json").write_text(
        '{"symbols": {"vmemmap_base": "0xffffea0000000000"}, "sizeof": 64}')
    assert miss_profile.kernel_layout(tmp_path) == LAYOUT
    (tmp_path / "layout.json").write_text('{"symbols": {}}')
    with pytest.raises(HotlineError, match="layout.json: no vmemmap_base or sizeof .*"
                                           "rebuild the kernel"):
        miss_profile.kernel_layout(tmp_path)
