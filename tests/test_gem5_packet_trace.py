"""gem5 packet traces: hotline's .proto against gem5's field numbers and wire
format, reading and writing trace files, and the aggregation of traced
misses per instruction, on traces written here with hand-worked results."""

import gzip

import pytest

from hotline.errors import HotlineError
from hotline.simulate.gem5 import packet_trace as pt
from hotline.simulate.gem5.physical_map import PhysicalMap, Segment
from hotline.simulate.gem5.trace_misses import Monitor, aggregate

# gem5 v24.0 src/proto/packet.proto, field by field.
GEM5_FIELDS = {
    "PacketHeader": {"obj_id": 1, "ver": 2, "tick_freq": 3, "id_strings": 4},
    "IdStringEntry": {"key": 1, "value": 2},
    "Packet": {"tick": 1, "cmd": 2, "addr": 3, "size": 4, "flags": 5, "pkt_id": 6, "pc": 7},
}


def test_proto_field_numbers_are_gem5s():
    header, packet = pt.message_classes()
    entry = header.DESCRIPTOR.nested_types_by_name["IdStringEntry"]
    for descriptor in (header.DESCRIPTOR, packet.DESCRIPTOR, entry):
        numbers = {f.name: f.number for f in descriptor.fields}
        assert numbers == GEM5_FIELDS[descriptor.name]


def test_wire_bytes_by_hand():
    header, packet = pt.message_classes()
    # field 1 varint 1, field 2 varint 1, field 3 varint 64, field 4 varint 64
    assert packet(tick=1, cmd=1, addr=64, size=64).SerializeToString() == \
        bytes([0x08, 0x01, 0x10, 0x01, 0x18, 0x40, 0x20, 0x40])
    # field 1 string "m", field 3 varint 1000 (e8 07)
    assert header(obj_id="m", tick_freq=1000).SerializeToString() == \
        bytes([0x0A, 0x01, 0x6D, 0x18, 0xE8, 0x07])


def test_mem_cmd_numbers():
    # Spot checks against gem5 v24.0's MemCmd::Command order.
    assert (pt.CMD["ReadReq"], pt.CMD["WriteReq"], pt.CMD["WritebackDirty"]) == (1, 4, 7)
    assert (pt.CMD["UpgradeReq"], pt.CMD["ReadExReq"], pt.CMD["ReadSharedReq"]) == (17, 22, 25)
    assert pt.CMD["LockedRMWReadReq"] == 30


@pytest.mark.parametrize("name", ["t.trc", "t.trc.gz"])
def test_round_trip(tmp_path, name):
    path = tmp_path / name
    header = pt.Header("board.cache_hierarchy.l1d_monitors0.request_trace", 10**12,
                       {0: "board.processor.cores0.core.data", 1: "writebacks"})
    packets = [{"tick": t, "cmd": 25, "addr": 64 * t, "size": 64, "flags": 0, "pkt_id": 0,
                "pc": 0xFFFFFFFF81000000 + t} for t in range(300)]
    pt.write_trace(path, header, packets)
    if name.endswith(".gz"):
        assert gzip.open(path).read(4) == b"gem5"
    else:
        assert path.read_bytes()[:4] == b"gem5"
    got_header, got = pt.read_trace(path)
    assert got_header == header
    got = list(got)
    assert [p.tick for p in got] == list(range(300))
    assert got[7].pc == 0xFFFFFFFF81000007 and got[7].addr == 448


def test_packet_without_pc_has_no_pc(tmp_path):
    path = tmp_path / "t.trc"
    pt.write_trace(path, pt.Header("x", 1, {}),
                   [{"tick": 1, "cmd": 7, "addr": 0, "size": 64}])
    _, packets = pt.read_trace(path)
    assert not next(packets).HasField("pc")


def test_bad_and_cut_files(tmp_path):
    bad = tmp_path / "bad.trc"
    bad.write_bytes(b"gem4....")
    with pytest.raises(HotlineError, match="no 'gem5' magic"):
        pt.read_trace(bad)
    cut = tmp_path / "cut.trc"
    pt.write_trace(cut, pt.Header("x", 1, {}),
                   [{"tick": t, "cmd": 1, "addr": 0, "size": 8} for t in range(1, 4)])
    cut.write_bytes(cut.read_bytes()[:-3])
    _, packets = pt.read_trace(cut)
    with pytest.raises(HotlineError, match="cut short"):
        list(packets)


# --- aggregation ------------------------------------------------------------

K1, K2, K3 = 0xFFFFFFFF81100000, 0xFFFFFFFF81100010, 0xFFFFFFFF81100020
USER = 0x401000
DIRECT = 0xFFFF888000000000
PHYSICAL = PhysicalMap((Segment(paddr=0x1000000, vaddr=0xFFFFFFFF81000000, size=0x200000),),
                       page_offset_base=DIRECT)
C = C_ = pt.CMD


def req(tick, cmd, addr, pc=None, flags=0, pkt_id=5):
    p = {"tick": tick, "cmd": cmd, "addr": addr, "size": 64, "flags": flags, "pkt_id": pkt_id}
    if pc is not None:
        p["pc"] = pc
    return p


def test_aggregate_by_hand(tmp_path):
    header = pt.Header("m", 10**12, {5: "board.processor.cores0.core.data"})
    l1d_req = [
        req(500, C["ReadSharedReq"], 0x2000000, K1),                  # before the region
        req(2000, C["ReadSharedReq"], 0x2000040, K1),                 # read, direct map
        req(3000, C["ReadSharedReq"], 0x2000040, K1),                 # same again
        req(4000, C["ReadExReq"], 0x1000080, K2, flags=pt.FLAG_LOCKED_RMW),  # rmw, kernel image
        req(4500, C["UpgradeReq"], 0x3000000, K3),                    # write, upgrade
        req(5000, C["WritebackDirty"], 0x5000000),                    # not a miss
        req(5500, C["ReadSharedReq"], 0x6000000, flags=pt.FLAG_PT_WALK),  # no PC
        req(6000, C["ReadSharedReq"], 0x4000000, USER),               # user: data 0
        req(200000, C["ReadSharedReq"], 0x2000000, K1),               # after the region
    ]
    l1d_resp = [
        req(600, C["ReadResp"], 0x2000000),       # answers the request before the region
        req(5000, C["ReadResp"], 0x2000040),      # 3000 ticks after tick 2000
        req(6500, C["UpgradeResp"], 0x3000000),   # 2000 ticks
        req(9000, C["ReadResp"], 0x2000040),      # 6000 ticks after tick 3000
    ]
    l2_req = [
        req(2100, C["ReadSharedReq"], 0x1100000, K1, flags=pt.FLAG_INST_FETCH),
        req(2200, C["HardPFReq"], 0x7000000, flags=pt.FLAG_PREFETCH),
        req(2300, C["ReadReq"], 0xFEE00000, K1, flags=pt.FLAG_UNCACHEABLE),
    ]
    l2_resp = [req(42100, C["ReadResp"], 0x1100000)]   # 40000 ticks
    files = {}
    for name, packets in (("l1d.req", l1d_req), ("l1d.resp", l1d_resp), ("l2.req", l2_req),
                          ("l2.resp", l2_resp)):
        files[name] = tmp_path / f"{name}.trc.gz"
        pt.write_trace(files[name], header, packets)
    monitors = [Monitor(0, "L1D", files["l1d.req"], files["l1d.resp"]),
                Monitor(0, "L2", files["l2.req"], files["l2.resp"])]

    # 1 GHz: 1000 ticks a cycle.
    frame, _, summary = aggregate(monitors, [(1000, 100000)], PHYSICAL, clock_hz=1e9)

    rows = [tuple(r) for r in frame.itertuples(index=False)]
    assert rows == [
        (0, USER, "read", 0, "L1D", "", 1, 0),
        (0, K1, "read", DIRECT + 0x2000040, "L1D", "", 2, 9),
        (0, K2, "rmw", 0xFFFFFFFF81000080, "L1D", "", 1, 0),
        (0, K3, "write", DIRECT + 0x3000000, "L1D", "upgrade", 1, 2),
        (0, K1, "fetch", 0, "L2", "", 1, 40),
    ]
    assert list(frame.columns) == ["cpu", "pc", "kind", "data", "level", "cause", "count",
                                   "cycles"]
    assert str(frame.pc.dtype) == "uint64" and str(frame.data.dtype) == "uint64"
    assert (summary.misses, summary.matched_responses) == (6, 4)
    assert (summary.without_pc, summary.writebacks, summary.prefetches,
            summary.uncacheable) == (1, 1, 1, 1)


def test_aggregate_two_regions_and_open_end(tmp_path):
    header = pt.Header("m", 10**12, {})
    path = tmp_path / "r.trc"
    pt.write_trace(path, header, [req(t, C["ReadSharedReq"], 0x100000, K1)
                                  for t in (10, 150, 250, 350, 450)])
    frame, _, _ = aggregate([Monitor(1, "L2", path, None)], [(100, 200), (300, 400)], PHYSICAL,
                         clock_hz=1e9)
    assert frame["count"].tolist() == [2] and frame["cpu"].tolist() == [1]
    frame, _, _ = aggregate([Monitor(1, "L2", path, None)], [(300, None)], PHYSICAL, clock_hz=1e9)
    assert frame["count"].tolist() == [2]


def test_physical_map():
    assert PHYSICAL.virtual(0x1000000) == 0xFFFFFFFF81000000
    assert PHYSICAL.virtual(0x11FFFC0) == 0xFFFFFFFF811FFFC0
    assert PHYSICAL.virtual(0x1200000) == DIRECT + 0x1200000   # past the segment
    assert PHYSICAL.virtual(0x40) == DIRECT + 0x40


VMEMMAP = 0xFFFFEA0000000000
WITH_VMEMMAP = PhysicalMap(PHYSICAL.segments, DIRECT,
                           vmemmap=(Segment(paddr=0x8000000, vaddr=VMEMMAP, size=0x200000),),
                           vmemmap_base=VMEMMAP, struct_page_size=64)


def test_misses_take_their_access_address_from_the_core_trace(tmp_path):
    """Each miss's field comes from the latest core request of the same PC
    and line at or before it; struct pages reduce to pfn 0's, the kernel
    image stays exact, other kernel data is named by its line."""
    header = pt.Header("m", 10**12, {})
    page5, page7, page9 = (0x8000000 + 64 * n for n in (5, 7, 9))
    core = [
        req(1900, C["ReadReq"], page5 + 8, K1),        # pfn 5, byte 8: what K1's miss reads
        req(1950, C["ReadReq"], page5 + 16, K2),       # another instruction, same line
        req(2000, C["ReadReq"], page5 + 24, K1),       # same tick as the miss: still before it
        req(2500, C["ReadReq"], page5 + 48, K1),       # after the miss: not it
        req(2990, C["WriteReq"], page7, K3),           # pfn 7's first byte (flags)
        req(4990, C["ReadReq"], 0x2000044, K1),        # direct map
        req(5990, C["ReadReq"], 0x1000088, K2),        # kernel image
    ]
    l1d = [
        req(2000, C["ReadSharedReq"], page5, K1),
        req(3000, C["ReadExReq"], page7, K3),
        req(4000, C["ReadSharedReq"], page9, K2),      # no core request: its line
        req(5000, C["ReadSharedReq"], 0x2000040, K1),
        req(6000, C["ReadSharedReq"], 0x1000080, K2),
    ]
    files = {}
    for name, packets in (("core", core), ("l1d", l1d)):
        files[name] = tmp_path / f"{name}.trc.gz"
        pt.write_trace(files[name], header, packets)
    frame, _, summary = aggregate([Monitor(0, "L1D", files["l1d"], None)], [(1000, 100000)],
                               WITH_VMEMMAP, clock_hz=1e9, core_traces={0: files["core"]})
    got = sorted((r.pc, r.data) for r in frame.itertuples(index=False))
    assert got == sorted([
        (K1, VMEMMAP + 24),                 # pfn 5 byte 24, as pfn 0's byte 24
        (K3, VMEMMAP + 0),
        (K2, VMEMMAP + 0),                  # pfn 9's line, unresolved
        (K1, DIRECT + 0x2000040),
        (K2, 0xFFFFFFFF81000088),
    ])
    assert (summary.resolved, summary.unresolved) == (4, 1)


def test_replay_gives_l1d_misses_their_causes_and_thieves(tmp_path):
    """Two CPUs, a 2-line L1D.  Worked by hand, per CPU 0 access (tick:
    line, what the 2-line fully associative LRU shadow holds before it):
      100 A first                       compulsory
      200 B first                       compulsory
      300 C first                       compulsory   (L1D gives up A at 301)
      400 A shadow [B C]: not there     capacity     (gives up B at 401)
      500 CPU 1 writes C (ReadExReq) while CPU 0's L1D holds it: C stolen
      600 C stolen by CPU 1's P4        coherence    (shadow had C: theft first)
      700 A hit
      740 D first                       compulsory   (gives up A at 741)
      800 A shadow [A D]: there         conflict
      900 CPU 1 writes B, which CPU 0 gave up at 401: no theft
     1000 B shadow [D A]: not there     capacity
     1200 A write to a shared line      upgrade      (takes A from CPU 1)
    CPU 1: C (500), B (900), A (1100) first: compulsory; 1300 A coherence,
    taken by CPU 0's P7.  CPU 0's L2 miss at 402 takes its address from the
    access at 400 and no cause."""
    P1, P2, P3, P4, P5, P6, P7 = (0xFFFFFFFF81100000 + 0x10 * i for i in range(7))
    A, B, C, D = (0x8000000 + 64 * n for n in (1, 2, 3, 4))    # struct pages 1-4
    header = pt.Header("m", 10**12, {})
    core0 = [req(100, C_["ReadReq"], A + 8, P1), req(200, C_["ReadReq"], B, P2),
             req(300, C_["ReadReq"], C, P3), req(400, C_["ReadReq"], A + 16, P1),
             req(600, C_["ReadReq"], C, P3), req(700, C_["ReadReq"], A, P1),
             req(740, C_["ReadReq"], D, P5), req(800, C_["ReadReq"], A + 24, P1),
             req(1000, C_["ReadReq"], B, P2), req(1200, C_["WriteReq"], A, P7)]
    l1d0 = [req(100, C_["ReadSharedReq"], A, P1), req(200, C_["ReadSharedReq"], B, P2),
            req(300, C_["ReadSharedReq"], C, P3), req(301, C_["CleanEvict"], A),
            req(400, C_["ReadSharedReq"], A, P1), req(401, C_["CleanEvict"], B),
            req(600, C_["ReadSharedReq"], C, P3), req(740, C_["ReadSharedReq"], D, P5),
            req(741, C_["CleanEvict"], A), req(800, C_["ReadSharedReq"], A, P1),
            req(801, C_["CleanEvict"], C), req(1000, C_["ReadSharedReq"], B, P2),
            req(1200, C_["UpgradeReq"], A, P7)]
    l2_0 = [req(402, C_["ReadSharedReq"], A, P1)]
    core1 = [req(500, C_["WriteReq"], C, P4), req(900, C_["WriteReq"], B, P4),
             req(1100, C_["ReadReq"], A, P6), req(1300, C_["ReadReq"], A, P6)]
    l1d1 = [req(500, C_["ReadExReq"], C, P4), req(900, C_["ReadExReq"], B, P4),
            req(1100, C_["ReadSharedReq"], A, P6), req(1300, C_["ReadSharedReq"], A, P6)]
    files = {}
    for name, packets in (("core0", core0), ("l1d0", l1d0), ("l2_0", l2_0), ("core1", core1),
                          ("l1d1", l1d1), ("l2_1", [])):
        files[name] = tmp_path / f"{name}.trc.gz"
        pt.write_trace(files[name], header, packets)
    monitors = [Monitor(0, "L1D", files["l1d0"], None), Monitor(0, "L2", files["l2_0"], None),
                Monitor(1, "L1D", files["l1d1"], None), Monitor(1, "L2", files["l2_1"], None)]

    frame, stolen, summary = aggregate(monitors, [(0, 100000)], WITH_VMEMMAP, clock_hz=1e9,
                                       core_traces={0: files["core0"], 1: files["core1"]},
                                       l1d_lines=2)

    V = VMEMMAP
    got = sorted((r.cpu, r.pc, r.kind, r.data - V, r.level, r.cause, r.count)
                 for r in frame.itertuples(index=False))
    assert got == sorted([
        (0, P1, "read", 8, "L1D", "compulsory", 1),
        (0, P2, "read", 0, "L1D", "compulsory", 1),
        (0, P3, "read", 0, "L1D", "compulsory", 1),
        (0, P1, "read", 16, "L1D", "capacity", 1),
        (0, P1, "read", 16, "L2", "", 1),
        (0, P3, "read", 0, "L1D", "coherence", 1),
        (0, P5, "read", 0, "L1D", "compulsory", 1),
        (0, P1, "read", 24, "L1D", "conflict", 1),
        (0, P2, "read", 0, "L1D", "capacity", 1),
        (0, P7, "write", 0, "L1D", "upgrade", 1),
        (1, P4, "write", 0, "L1D", "compulsory", 2),
        (1, P6, "read", 0, "L1D", "compulsory", 1),
        (1, P6, "read", 0, "L1D", "coherence", 1),
    ])
    assert [tuple(r) for r in stolen.itertuples(index=False)] == [
        (0, P3, V, 1, P4, 1), (1, P6, V, 0, P7, 1)]
    assert (summary.resolved, summary.unresolved) == (14, 0)   # 9 + 1 + 4 data misses


def test_a_taken_line_the_shadow_lost_is_capacity(tmp_path):
    # 2-line L1D.  CPU 0 reads A; CPU 1 writes A while CPU 0 holds it; CPU 0
    # reads B and C (its shadow loses A), then A: capacity, not coherence.
    # CPU 0 then reads D; CPU 1 writes C, which CPU 0 holds; CPU 0 reads C:
    # its shadow [D C] still holds C: coherence.
    P1, P2, P3, P4, P5 = (0xFFFFFFFF81100000 + 0x10 * i for i in range(5))
    A, B, C, D = (0x8000000 + 64 * n for n in (1, 2, 3, 4))
    h = pt.Header("m", 10**12, {})
    core0 = [req(100, C_["ReadReq"], A, P1), req(300, C_["ReadReq"], B, P2),
             req(400, C_["ReadReq"], C, P3), req(500, C_["ReadReq"], A, P1),
             req(600, C_["ReadReq"], D, P5), req(800, C_["ReadReq"], D, P5)]
    l1d0 = [req(100, C_["ReadSharedReq"], A, P1), req(300, C_["ReadSharedReq"], B, P2),
            req(400, C_["ReadSharedReq"], C, P3), req(401, C_["CleanEvict"], B),
            req(500, C_["ReadSharedReq"], A, P1), req(600, C_["ReadSharedReq"], D, P5),
            req(601, C_["CleanEvict"], A), req(800, C_["ReadSharedReq"], D, P5)]
    core1 = [req(200, C_["WriteReq"], A, P4), req(700, C_["WriteReq"], D, P4)]
    l1d1 = [req(200, C_["ReadExReq"], A, P4), req(700, C_["ReadExReq"], D, P4)]
    files = {}
    for name, packets in (("core0", core0), ("l1d0", l1d0), ("core1", core1), ("l1d1", l1d1)):
        files[name] = tmp_path / f"{name}.trc.gz"
        pt.write_trace(files[name], h, packets)
    frame, stolen, _ = aggregate([Monitor(0, "L1D", files["l1d0"], None),
                                  Monitor(1, "L1D", files["l1d1"], None)],
                                 [(0, 100000)], WITH_VMEMMAP, clock_hz=1e9,
                                 core_traces={0: files["core0"], 1: files["core1"]},
                                 l1d_lines=2)
    got = sorted((r.cpu, r.pc, r.cause, r.count) for r in frame.itertuples(index=False))
    assert (0, P1, "capacity", 1) in got
    assert (0, P5, "coherence", 1) in got
    assert [tuple(r) for r in stolen.itertuples(index=False)] == [(0, P5, VMEMMAP, 1, P4, 1)]


def test_without_core_traces_misses_have_no_cause_but_upgrade(tmp_path):
    header = pt.Header("m", 10**12, {})
    path = tmp_path / "l1d.trc.gz"
    pt.write_trace(path, header, [req(100, C_["ReadSharedReq"], 0x2000000, K1),
                                  req(200, C_["UpgradeReq"], 0x2000000, K2)])
    frame, stolen, _ = aggregate([Monitor(0, "L1D", path, None)], [(0, 1000)], PHYSICAL,
                                 clock_hz=1e9, l1d_lines=512)
    assert sorted(zip(frame["pc"], frame["cause"])) == [(K1, ""), (K2, "upgrade")]
    assert stolen.empty and list(stolen.columns) == ["cpu", "pc", "data", "thief_cpu",
                                                     "thief_pc", "count"]
