"""From the plugin's output to the results tables, on inputs written by hand:
the output parser, the expansion of a miss into one row per level that
missed, and data attribution (struct page fields, announced and static
objects) with expectations derived from the layout given."""

import pandas as pd
import pytest

from hotline.results.objects import ObjectMap, announced_objects
from hotline.results.symbols import Symbol
from hotline.simulate.qemu import plugin_output
from hotline.simulate.qemu.cache_tables import raw_misses, turns_table

HEADER = ("# hotline-cache 4 cpus=2 line=64\n"
          "# kinds read write rmw fetch\n"
          "# outcomes not-reached hit compulsory capacity conflict coherence upgrade\n")
ZEROS = "\t".join(["0"] * 21)
RECORDS = (
    "roi\t0\t1000\n"
    "roi\t1\t2000\n"
    f"insn\t0xffffffff81000010\tread\t488b07\t10\t120\t{ZEROS}\n"
    "miss\t1\t0xffffffff81000010\tread\t0xffffea0000000000\tcapacity\tcapacity\thit\t3\t126\n"
    "miss\t0\t0xffffffff81000020\tfetch\t0x0\tcompulsory\thit\tnot-reached\t1\t12\n"
    "miss\t0\t0x401000\twrite\t0x0\tupgrade\tupgrade\tnot-reached\t2\t120\n"
    "stolen\t1\t0xffffffff81000010\t0xffffea0000000000\t0\t0xffffffff81000030\t4\n"
    "rapw\t0\t0xffffffff81000040\t0xffffffff81000044\t7\n"
    "turns\t1\t9\t3\t1600\n")
END = "# end roi=2 insn=1 miss=3 stolen=1 rapw=1 turns=1\n"
OUTPUT = HEADER + RECORDS + END


def test_output_records_become_typed_frames(tmp_path):
    path = tmp_path / "hotline-cache.out"
    path.write_text(OUTPUT)
    frames = plugin_output.read(path)
    assert frames["options"] == ["cpus=2", "line=64"]
    assert frames["roi"]["instructions"].tolist() == [1000, 2000]
    assert frames["insn"].loc[0, "pc"] == 0xffffffff81000010
    assert frames["insn"].loc[0, "bytes"] == "488b07"
    assert frames["miss"]["data"].tolist() == [0xffffea0000000000, 0, 0]
    assert frames["stolen"].loc[0, ["cpu", "thief_cpu", "count"]].tolist() == [1, 0, 4]
    assert frames["rapw"].loc[0, "load_pc"] == 0xffffffff81000044
    assert frames["turns"].loc[0].tolist() == [1, 9, 3, 1600]
    # The types the tables are built from: names as plain objects (not
    # pandas' string type), addresses unsigned, counts signed 64-bit.
    miss = frames["miss"]
    assert {c: str(miss[c].dtype) for c in ("cpu", "pc", "kind", "data", "l1", "count")} == \
        {"cpu": "int64", "pc": "uint64", "kind": "object", "data": "uint64", "l1": "object",
         "count": "int64"}
    assert str(frames["insn"]["bytes"].dtype) == "object"


def test_turns_buckets_become_instruction_ranges(tmp_path):
    # LOG2 9: turns of 2^9 = 512 to 2^10 - 1 = 1023 instructions.
    path = tmp_path / "hotline-cache.out"
    path.write_text(OUTPUT)
    table = turns_table(plugin_output.read(path)["turns"])
    assert table.loc[0].tolist() == [1, 512, 1023, 3, 1600]


def test_the_insn_records_outcome_columns_are_named_by_the_header(tmp_path):
    # 7 outcomes at each of 3 levels, in the header's order.
    path = tmp_path / "hotline-cache.out"
    path.write_text(OUTPUT)
    columns = list(plugin_output.read(path)["insn"].columns)
    assert columns[5:8] == ["l1_not-reached", "l1_hit", "l1_compulsory"]
    assert columns[-1] == "l3_upgrade" and len(columns) == 5 + 21


@pytest.mark.parametrize("text, complaint", [
    ("insn\t0x1\n", "not a hotline-cache version 4 output"),
    (OUTPUT.replace("# hotline-cache 4", "# hotline-cache 3"),
     "not a hotline-cache version 4 output"),
    (HEADER + "miss\t0\t0x10\n" + END, "4: malformed record"),
    (HEADER + "bogus\t1\n" + END, "4: malformed record"),
    (OUTPUT.replace("\tcapacity\tcapacity\thit", "\tcapacity\tbogus\thit"),
     "l2 'bogus' is none of the header's not-reached hit compulsory"),
    (OUTPUT.replace("\tfetch\t", "\tifetch\t"), "kind 'ifetch' is none of the header's"),
    (OUTPUT.replace("# kinds read write rmw fetch\n", ""), "header does not name the kinds"),
    (OUTPUT + "roi\t2\t0\n", "14: a line after the end marker"),
    (OUTPUT.replace(END, "# end roi=2 insn=1 miss=3\n"), "13: malformed end marker"),
])
def test_bad_output_is_refused_with_the_line(tmp_path, text, complaint):
    path = tmp_path / "hotline-cache.out"
    path.write_text(text)
    with pytest.raises(plugin_output.FormatError, match=complaint):
        plugin_output.read(path)


@pytest.mark.parametrize("lines_kept", range(1, OUTPUT.count("\n")))
def test_an_output_cut_at_a_line_boundary_is_refused(tmp_path, lines_kept):
    # What a full disk or a killed QEMU leaves: every line whole, the end
    # marker missing.  Before the end marker existed, such a file was read
    # as a run with fewer records (0 misses instead of 127,204, measured).
    path = tmp_path / "hotline-cache.out"
    path.write_text("".join(OUTPUT.splitlines(keepends=True)[:lines_kept]))
    with pytest.raises(plugin_output.FormatError) as refused:
        plugin_output.read(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: no end marker") and message.endswith("--rerun)")
    assert "\n" not in message


def test_an_output_cut_inside_a_line_is_refused(tmp_path):
    path = tmp_path / "hotline-cache.out"
    path.write_text(OUTPUT[:OUTPUT.index("\tcapacity\tcapacity")])
    with pytest.raises(plugin_output.FormatError,
                       match=r"hotline-cache.out:7: cut short in the middle of a line.*--rerun"):
        plugin_output.read(path)


def test_counts_that_disagree_with_the_end_marker_are_refused(tmp_path):
    # A miss record lost from the middle, the end marker intact.
    path = tmp_path / "hotline-cache.out"
    path.write_text(OUTPUT.replace("miss\t0\t0x401000\twrite\t0x0\tupgrade\tupgrade"
                                   "\tnot-reached\t2\t120\n", ""))
    with pytest.raises(plugin_output.FormatError,
                       match=r"hotline-cache.out: record counts disagree with the end marker "
                             r"\(miss 3 announced, 2 read\).*--rerun"):
        plugin_output.read(path)


def test_a_miss_is_one_row_per_level_that_missed(tmp_path):
    path = tmp_path / "hotline-cache.out"
    path.write_text(OUTPUT)
    rows = raw_misses(plugin_output.read(path)["miss"])
    got = sorted(zip(rows["pc"], rows["level"], rows["cause"], rows["count"]))
    assert got == sorted([
        # capacity at L1 and L2, served by the L3: two rows
        (0xffffffff81000010, "L1D", "capacity", 3), (0xffffffff81000010, "L2", "capacity", 3),
        # an instruction fetch that missed the L1I only
        (0xffffffff81000020, "L1I", "compulsory", 1),
        # an L1D upgrade of a line the core's L2 holds Shared too is an
        # upgrade of both (docs/causes.md), settled below the L3
        (0x401000, "L1D", "upgrade", 2), (0x401000, "L2", "upgrade", 2)])


LAYOUT = {
    "sizeof": 64,
    "symbols": {"vmemmap_base": "0xffffea0000000000"},
    "fields": [
        {"name": "flags", "offset": 0, "size": 8, "primary": True},
        {"name": "lru", "offset": 8, "size": 16, "primary": True},
        {"name": "compound_head", "offset": 8, "size": 8, "primary": False},
        {"name": "_mapcount", "offset": 48, "size": 4, "primary": True},
        {"name": "_refcount", "offset": 52, "size": 4, "primary": True},
    ],
}


class FakeSymbols:
    """One static object, jiffies, 8 bytes at 0xffffffff82000000."""
    def data_object(self, address):
        jiffies = Symbol("jiffies", 0xffffffff82000000, 8)
        return jiffies if jiffies.start <= address < jiffies.start + jiffies.size else None


LOG = ("[    0.100000] hotline-object: name=page_wait_table start=0xffff888004000000 "
       "size=0x1000\n[    0.2] unrelated line\n")


@pytest.mark.parametrize("address, expected", [
    (0x7ffd0000, ("user", "")),
    # pfn 5's struct page starts at base + 5 * 64; flags at +0, _refcount at +52
    (0xffffea0000000000 + 5 * 64, ("struct page", "flags")),
    (0xffffea0000000000 + 5 * 64 + 52, ("struct page", "_refcount")),
    (0xffffea0000000000 + 9 * 64 + 16, ("struct page", "lru")),   # lru alone holds byte 16
    (0xffffea0000000000 + 44, ("struct page", "+44")),            # bytes no field names
    (0xffff888004000000 + 0x40, ("page_wait_table", "+0x40")),
    (0xffff888004000000 + 0x1000, ("kernel-other", "")),          # one past its end
    (0xffffffff82000004, ("jiffies", "+0x4")),
    (0xffffffff82000008, ("kernel-other", "")),
])
def test_data_addresses_are_located(address, expected):
    objects = ObjectMap(LAYOUT, FakeSymbols(), announced_objects(LOG))
    assert objects.locate(address) == expected


def test_announcements_are_read_from_the_kernel_log():
    (o,) = announced_objects(LOG)
    assert (o.name, o.start, o.size) == ("page_wait_table", 0xffff888004000000, 0x1000)


def test_raw_frame_with_missing_columns_is_a_programming_error(tmp_path):
    from hotline.results.attribute import attribute
    with pytest.raises(ValueError, match="lack column"):
        attribute(pd.DataFrame({"cpu": [0]}), tmp_path, "run", "")
