"""Reads after partial writes from the O3 LSQUnit debug trace, on lines
written in the shape of gem5 v24.0's DPRINTFs (src/cpu/o3/lsq_unit.cc)."""

import builtins
import stat
import threading
import time

from hotline.simulate.gem5 import lsq_trace
from hotline.simulate.gem5.lsq_trace import PipeReader, count_partial_overlaps

U0 = "board.processor.cores0.core.iew.lsq.thread0"
U1 = "board.processor.cores1.core.iew.lsq.thread0"
STORE, LOAD, OTHER = 0xFFFFFFFF81200000, 0xFFFFFFFF81200004, 0xFFFFFFFF81300000


def pc(value):
    return f"(0x{value:x}=>0x{value + 4:x}).(0=>1)"


TRACE = f"""\
 100000: {U0}: Inserting store PC {pc(STORE)}, idx:4 [sn:100]
 100000: {U0}: Inserting load PC {pc(LOAD)}, idx:9 [sn:101]
 100000: {U1}: Inserting store PC {pc(OTHER)}, idx:9 [sn:7]
 100000: {U1}: Inserting load PC {pc(OTHER + 8)}, idx:4 [sn:8]
 100500: {U0}: Executing load PC {pc(LOAD)}, [sn:101]
 100500: {U0}: Read called, load idx: 9, store idx: 5, storeHead: 3 addr: 0x1234
 100500: {U1}: Read called, load idx: 4, store idx: 10, storeHead: 9 addr: 0x2000
 100500: {U0}: Load-store forwarding mis-match. Store idx 5 to load addr 0xffff888000001000
 100500: {U1}: Forwarding from store idx 10 to load to addr 0x2000
 101000: {U0}: Read called, load idx: 9, store idx: 5, storeHead: 3 addr: 0x1234
 101000: {U0}: Load-store forwarding mis-match. Store idx 5 to load addr 0xffff888000001000
 101500: {U1}: Load-store forwarding mis-match. Store idx 10 to load addr 0x2000
 102000: {U0}: Load-store forwarding mis-match. Store idx 77 to load addr 0x3000
some line that is not a debug line
"""


def test_pairs_by_hand():
    frame = count_partial_overlaps(TRACE.splitlines())
    rows = [tuple(r) for r in frame.itertuples(index=False)]
    assert rows == [
        (0, 0, LOAD, 1),            # store index 77 was never inserted in the trace
        (0, STORE, LOAD, 2),        # the same load replayed twice
        (1, OTHER, OTHER + 8, 1),
    ]


def test_the_pipe_counts_what_gem5_writes_into_it(tmp_path):
    """gem5's side: open the debug file by its name and write, as
    --debug-file does; the counts are those of the lines themselves."""
    reader = PipeReader(tmp_path / "gem5" / "lsq.trace")
    assert stat.S_ISFIFO((tmp_path / "gem5" / "lsq.trace").stat().st_mode)
    with open(tmp_path / "gem5" / "lsq.trace", "w") as gem5:
        for _ in range(1000):       # more than a pipe's buffer: the reader keeps up
            gem5.write(TRACE)
    frame = reader.finish()
    assert frame["count"].sum() == 4000
    assert frame.drop(columns="count").equals(
        count_partial_overlaps(TRACE.splitlines()).drop(columns="count"))
    assert not (tmp_path / "gem5" / "lsq.trace").exists()


def test_a_pipe_gem5_never_opened_ends_empty(tmp_path):
    reader = PipeReader(tmp_path / "lsq.trace")
    frame = reader.finish()         # gem5 failed before opening its debug file
    assert frame.empty and not (tmp_path / "lsq.trace").exists()


def test_finish_before_the_reading_thread_opened_the_pipe(tmp_path, monkeypatch):
    """gem5 failed at once, and finish() came before the reading thread had
    opened its end (a loaded machine starts threads late): finish() must not
    wait for a writer that will never come."""
    def late_open(*args, **kwargs):
        time.sleep(0.5)
        return builtins.open(*args, **kwargs)

    monkeypatch.setattr(lsq_trace, "open", late_open, raising=False)
    reader = PipeReader(tmp_path / "lsq.trace")
    finished = []
    finishing = threading.Thread(target=lambda: finished.append(reader.finish()), daemon=True)
    finishing.start()
    finishing.join(timeout=30)
    assert finished, "finish() still waiting after 30 s"
    assert finished[0].empty and not (tmp_path / "lsq.trace").exists()


def test_empty_trace():
    frame = count_partial_overlaps([])
    assert frame.empty and list(frame.columns) == ["cpu", "store_pc", "load_pc", "count"]


def test_an_entry_is_known_until_horizon_more_are_inserted_behind_it():
    """gem5 v24's queue indices only grow (base/circular_queue.hh), so the
    reader forgets an entry once HORIZON more have been inserted after it:
    a mis-match on the entry inserted HORIZON - 1 stores ago still finds
    its PC, one on the entry HORIZON ago no longer does (and the tables
    stay small over a run's hundreds of millions of loads and stores)."""
    def stores(first, count):
        return [f" 1: {U0}: Inserting store PC {pc(STORE + 8 * (first + k))}, "
                f"idx:{first + k} [sn:{first + k}]" for k in range(count)]

    def replay(store_idx):
        return [f" 2: {U0}: Read called, load idx: 0, store idx: {store_idx}, storeHead: 0 "
                "addr: 0x1000",
                f" 2: {U0}: Load-store forwarding mis-match. Store idx {store_idx} to load "
                "addr 0x1000"]

    load = [f" 1: {U0}: Inserting load PC {pc(LOAD)}, idx:0 [sn:1]"]
    h = lsq_trace.HORIZON
    # Entry i + 1 holds the store inserted with idx i (the tail before it grew).
    kept = load + stores(1000, h) + replay(1001)
    forgotten = load + stores(1000, h + 1) + replay(1001)
    assert [tuple(r) for r in count_partial_overlaps(kept).itertuples(index=False)] == \
        [(0, STORE + 8 * 1000, LOAD, 1)]
    assert [tuple(r) for r in count_partial_overlaps(forgotten).itertuples(index=False)] == \
        [(0, 0, LOAD, 1)]
