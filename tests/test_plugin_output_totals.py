"""Whether a plugin output's counts add up (plugin_output.disagreements), on
outputs written by hand: the check a parallel-mode run, whose counts differ
from run to run, is held to."""

from hotline.simulate.qemu import plugin_output

HEADER = ("# hotline-cache 4 cpus=2 line=64\n"
          "# kinds read write rmw fetch\n"
          "# outcomes not-reached hit compulsory capacity conflict coherence upgrade\n")


def counts(*levels):
    """An insn record's 21 outcome counts, from {outcome index: count} per level."""
    return "\t".join(str(level.get(i, 0)) for level in levels for i in range(7))


# 0x10 read: 10 accesses, 7 L1 hits, 3 capacity misses in L1 and L2 served by
# the L3.  0x401000 write: 5 accesses, 3 hits, 2 upgrades (of the L1D and
# of the L2, which holds the line Shared too: docs/causes.md; the L3 is not
# reached).
INSN_READ = f"insn\t0x10\tread\t8b07\t10\t97\t{counts({1: 7, 3: 3}, {0: 7, 3: 3}, {0: 7, 1: 3})}\n"
INSN_WRITE = f"insn\t0x401000\twrite\t8907\t5\t123\t{counts({1: 3, 6: 2}, {0: 3, 6: 2}, {0: 5})}\n"
MISS_READ = "miss\t1\t0x10\tread\t0x0\tcapacity\tcapacity\thit\t3\t90\n"
MISS_WRITE = "miss\t0\t0x401000\twrite\t0x0\tupgrade\tupgrade\tnot-reached\t2\t120\n"


def disagreements(tmp_path, insns, misses):
    path = tmp_path / "hotline-cache.out"
    path.write_text(HEADER + "roi\t0\t100\nroi\t1\t100\n" + "".join(insns) + "".join(misses)
                    + f"# end roi=2 insn={len(insns)} miss={len(misses)} stolen=0 rapw=0 turns=0\n")
    return plugin_output.disagreements(plugin_output.read(path))


def test_counts_that_add_up_have_no_disagreement(tmp_path):
    assert disagreements(tmp_path, [INSN_READ, INSN_WRITE], [MISS_READ, MISS_WRITE]) == []


def test_outcomes_that_do_not_add_up_to_the_accesses_are_named(tmp_path):
    wrong = INSN_READ.replace(counts({1: 7, 3: 3}, {0: 7, 3: 3}, {0: 7, 1: 3}),
                              counts({1: 7, 3: 3}, {0: 7, 3: 2}, {0: 7, 1: 3}))
    said = disagreements(tmp_path, [wrong, INSN_WRITE], [MISS_READ, MISS_WRITE])
    assert "insn 0x10 read: 10 accesses, but its l2 outcomes add up to 9" in said


def test_miss_records_that_disagree_with_the_insn_record_are_named(tmp_path):
    said = disagreements(tmp_path, [INSN_READ, INSN_WRITE],
                         [MISS_READ, MISS_WRITE.replace("\t2\t120\n", "\t1\t60\n")])
    assert any(s.startswith("insn 0x401000 write: its l1 outcomes") for s in said), said


def test_miss_records_of_an_instruction_without_a_record_are_named(tmp_path):
    said = disagreements(tmp_path, [INSN_READ], [MISS_READ, MISS_WRITE])
    assert "miss records of 0x401000 write, which has no insn record" in said
