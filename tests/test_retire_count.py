"""A sampled gem5 run's retire counts read into micro-ops per instruction
(simulate/gem5/retire_count.py), on tables written by hand in the
extension's format, and the format against the extension's source; with
GEM5 set, tests/test_gem5_run.py reads a real run's."""

import pytest

from hotline import paths
from hotline.errors import HotlineError
from hotline.simulate.gem5 import retire_count

SOURCE = paths.CONFIGS / "gem5" / "extras" / "retire_count.cc"


def table(tmp_path, name, rows, header="# hotline retire count 1: core=board.processor.x"):
    path = tmp_path / name
    path.write_text("\n".join([header, "pc,instructions,micro_ops",
                               *(f"{pc},{i},{u}" for pc, i, u in rows)]) + "\n")
    return path


def test_the_cores_and_regions_add_up_per_instruction(tmp_path):
    # Region 0, cpu 0: the atomic core ran 0x10 for 7 micro-ops, the O3 core
    # 3 more and 0x20 for 2; region 1, cpu 1: 0x20 for 5.  0x10: 10, 0x20: 7.
    files = {(0, 0, "atomic"): table(tmp_path, "a", [(0x10, 7, 7)]),
             (0, 0, "o3"): table(tmp_path, "b", [(0x10, 3, 3), (0x20, 1, 2)]),
             (1, 1, "atomic"): table(tmp_path, "c", [(0x20, 1, 5)]),
             (1, 1, "o3"): table(tmp_path, "d", [])}
    counted = retire_count.counted(files, {(0, 0): 12, (1, 1): 6})
    assert counted.to_dict() == {0x10: 10, 0x20: 7}


def test_a_count_above_gem5s_statistic_is_refused(tmp_path):
    # Faulting micro-ops make the count fall short of the statistic, never
    # exceed it.
    files = {(0, 0, "atomic"): table(tmp_path, "a", [(0x10, 7, 7)]),
             (0, 0, "o3"): table(tmp_path, "b", [(0x10, 3, 3)])}
    assert retire_count.counted(files, {(0, 0): 11}).to_dict() == {0x10: 10}
    with pytest.raises(HotlineError, match="10 micro-ops counted, more than gem5's 9"):
        retire_count.counted(files, {(0, 0): 9})
    with pytest.raises(HotlineError, match="no micro-op statistic"):
        retire_count.counted(files, {})


@pytest.mark.parametrize("header, columns, complaint", [
    ("# hotline cycle profile 1:", "pc,instructions,micro_ops", "not a hotline retire count"),
    ("# hotline retire count 1:", "pc,micro_ops,instructions", "rebuild gem5"),
    ("# hotline retire count 1:", "pc,instructions,micro_ops\n1,x,2", "damaged retire count"),
])
def test_a_damaged_or_foreign_table_is_refused(tmp_path, header, columns, complaint):
    path = tmp_path / "t.csv"
    path.write_text(f"{header}\n{columns}\n")
    with pytest.raises(HotlineError, match=complaint):
        retire_count.read(path)


def test_the_reader_expects_what_the_extension_writes():
    source = SOURCE.read_text()
    assert retire_count.MAGIC in source
    assert ",".join(retire_count.COLUMNS) + "\\n" in source
