"""Measuring builds against counting builds (analysis/counter_free.py): the
claims' functions of a `-nocounters` kernel are its counting twin's with
the counting code taken out, instruction for instruction."""

import pytest

from hotline.analysis.counter_free import Listing, differences, normalise, shape

K = 0xffffffff81143bd0


def test_what_a_build_places_is_left_out_of_an_instruction():
    assert normalise("jne ffffffff81143c12 <pte_chain_remove+0x42>") == "jne <pte_chain_remove>"
    assert normalise("mov 0x983618(%rip),%rdi # ffffffff81ac71f0 <pte_chain_cache>") == \
        "mov (%rip),%rdi # <pte_chain_cache>"
    assert normalise("mov $0xffffffff8180ccf8,%rsi") == "mov ADDRESS,%rsi"
    assert normalise("mov -0x7e53b3a0(,%rax,8),%rdx") == "mov ADDRESS(,%rax,8),%rdx"
    assert normalise("* lock btsq $0x18,(%rdi)") == "lock btsq $0x18,(%rdi)"
    # A field's offset is the design's, and stays.
    assert normalise("mov 0x38(%rbx),%rsi") == "mov 0x38(%rbx),%rsi"


def test_a_shape_names_no_register_and_no_zero_displacement():
    assert shape("lock btrq $0x18,0x0(%rbp)") == shape("lock btrq $0x18,(%r12)") == \
        "lock btrq $0x18,(%reg)"
    assert shape("movq $0x0,(%rax)") == "movq $0x0,(%reg)"
    assert shape("mov 0x8(%r13),%rsi") == "mov 0x8(%reg),%reg"


def listing(texts: list[str], counting: set[int] = frozenset(),
            maybe: set[int] = frozenset()) -> Listing:
    return Listing("pte_chain_remove", [(K + i, t) for i, t in enumerate(texts)],
                   {K + i for i in counting}, {K + i for i in maybe})


# pte_chain_remove in miniature, counting build: the chain_lock count (1)
# and the walk's step count (7, 9) are counting code; the main path ends at
# the tail call (12); after it, the contended path.
COUNTING = ["push %rbp", "incq %gs:0x7eedb22b(%rip) # 1ee20 <hotline_counter_state+0x80>",
            "lock btsq $0x18,(%rdi)", "jb ffffffff81143c8e <pte_chain_remove+0xbe>",
            "mov 0x38(%rbx),%rsi", "lea 0x38(%rbx),%rdi", "mov 0x8(%rsi),%rcx",
            "xor %eax,%eax", "mov %rsi,%rdx", "add $0x1,%rax", "mov %rsi,(%rdi)",
            "lock btrq $0x18,(%rbx)", "jmp ffffffff8116e8a0 <kmem_cache_free>",
            "pause", "mov (%rbx),%rax", "lock btsq $0x18,(%rbx)", "pop %rbx",
            "jmp ffffffff81143c01 <pte_chain_remove+0x31>"]
COUNTED = {1, 7, 9}
# The measuring build as gcc lays it out: other registers on the walk
# (rcx, rdx, rax for rdi, rcx, rdx), the contended path without its pop.
MEASURING = ["push %rbp", "lock btsq $0x18,(%rdi)", "jb ffffffff811430b5 <pte_chain_remove+0x75>",
             "mov 0x38(%rbx),%rsi", "lea 0x38(%rbx),%rcx", "mov 0x8(%rsi),%rdx",
             "mov %rsi,%rax", "mov %rsi,(%rcx)", "lock btrq $0x18,(%rbx)",
             "jmp ffffffff8116dc80 <kmem_cache_free>", "pause", "mov (%rbx),%rax",
             "lock btsq $0x18,(%rbx)", "jmp ffffffff81143065 <pte_chain_remove+0x25>"]


def test_the_main_path_ends_at_the_first_exit():
    main, rest = listing(COUNTING, COUNTED).main_path()
    assert main[-1] == "jmp <kmem_cache_free>" and len(main) == 10
    assert rest[0] == "pause"


def test_registers_and_block_links_are_the_compilers_not_a_difference():
    assert differences(listing(COUNTING, COUNTED), listing(MEASURING)) == []
    # One callee-saved register more, pushed and popped.
    saving = ["push %r13"] + COUNTING
    assert differences(listing(saving, {c + 1 for c in COUNTED}), listing(MEASURING)) == []


def test_an_instruction_the_main_path_lacks_or_adds_is_a_difference():
    lacking = [t for t in MEASURING if not t.startswith("mov 0x8(")]
    [found] = differences(listing(COUNTING, COUNTED), listing(lacking))
    assert "main path" in found and "mov 0x8(%rsi),%rcx" in found
    added = MEASURING[:6] + ["mov 0x30(%rbx),%eax"] + MEASURING[6:]
    [found] = differences(listing(COUNTING, COUNTED), listing(added))
    assert "main path" in found and "mov 0x30(%rbx),%eax" in found


def test_an_out_of_line_instruction_the_other_lacks_is_a_difference():
    more = MEASURING[:-1] + ["mov 0x30(%rbx),%eax", MEASURING[-1]]
    [found] = differences(listing(COUNTING, COUNTED), listing(more))
    assert "out of line" in found and "mov 0x30(%reg),%reg" in found


def test_counting_code_left_in_the_measuring_build_is_a_difference():
    found = differences(listing(COUNTING, COUNTED), listing(COUNTING, COUNTED))
    assert len(found) == len(COUNTED)
    assert all("counting code in the measuring build" in f for f in found)


def jump(to: int) -> str:
    """objdump's text of a jump within the function to its instruction `to`."""
    return f"jmp {K + to:016x} <pte_chain_remove+{to:#x}>"


# The main path of MEASURING with its load of the chain's head moved out of line:
# jumped to after the lock's branch, and back.
MOVED = ["push %rbp", "lock btsq $0x18,(%rdi)", "jb ffffffff811430b5 <pte_chain_remove+0x75>",
         jump(10), "lea 0x38(%rbx),%rcx", "mov 0x8(%rsi),%rdx", "mov %rsi,%rax",
         "mov %rsi,(%rcx)", "lock btrq $0x18,(%rbx)", "jmp ffffffff8116dc80 <kmem_cache_free>",
         "mov 0x38(%rbx),%rsi", jump(4), "pause", "mov (%rbx),%rax",
         "lock btsq $0x18,(%rbx)", "jmp ffffffff81143065 <pte_chain_remove+0x25>"]


def test_the_main_path_takes_the_jumps_within_the_function():
    main, rest = listing(MOVED).main_path()
    assert main == listing(MEASURING).main_path()[0]
    assert rest == ["pause", "mov (%rbx),%rax", "lock btsq $0x18,(%rbx)",
                    "jmp <pte_chain_remove>"]
    assert differences(listing(COUNTING, COUNTED), listing(MOVED)) == []


def test_what_may_be_counting_code_is_compared_where_the_other_build_has_it():
    """The walk's step count (7, 9) and its load of the next entry (6) on
    source lines that work `steps`: the measuring build keeps the load and
    drops the count, which is no difference; its own instructions on such
    lines are its code."""
    assert differences(listing(COUNTING, {1}, {6, 7, 9}), listing(MEASURING)) == []
    assert differences(listing(COUNTING, {1}, {6, 7, 9}), listing(MEASURING, maybe={5})) == []
    [found] = differences(listing(COUNTING, {1}, {7, 9}),
                          listing([t for t in MEASURING if t != "mov %rsi,%rax"]))
    assert "main path" in found and "mov %rsi,%rdx" in found


# MEASURING with the lock's branch inverted: the contended path falls
# through, the main path is the branch taken.
INVERTED = ["push %rbp", "lock btsq $0x18,(%rdi)",
            f"jae {K + 7:016x} <pte_chain_remove+0x7>", "pause", "mov (%rbx),%rax",
            "lock btsq $0x18,(%rbx)", f"jmp {K + 2:016x} <pte_chain_remove+0x2>",
            "mov 0x38(%rbx),%rsi", "lea 0x38(%rbx),%rcx", "mov 0x8(%rsi),%rdx",
            "mov %rsi,%rax", "mov %rsi,(%rcx)", "lock btrq $0x18,(%rbx)",
            "jmp ffffffff8116dc80 <kmem_cache_free>"]


def test_the_main_path_goes_where_the_other_build_goes_at_an_inverted_branch():
    main, rest = listing(INVERTED).main_path(listing(COUNTING, COUNTED))
    assert main[3:] == listing(MEASURING).main_path()[0][3:]
    assert rest[0] == "pause"
    assert differences(listing(COUNTING, COUNTED), listing(INVERTED)) == []
    # Unguided, it falls through into the contended path.
    assert listing(INVERTED).main_path()[0][3] == "pause"
    # A store more on the branch taken is still a difference.
    stored = INVERTED[:8] + ["mov %rax,0x30(%rbx)"] + INVERTED[8:]
    [found] = differences(listing(COUNTING, COUNTED), listing(stored))
    assert "main path" in found and "mov %rax,0x30(%rbx)" in found


def test_a_block_laid_out_twice_is_no_difference_and_one_instruction_more_is():
    """The counting build's contended path ends in a second copy of the
    lock's three instructions (gcc's tail duplication): no difference; one
    more `lock btsq` alone is one."""
    tail = ["mov (%rbx),%rax", "lock btsq $0x18,(%rbx)", "pop %rbx"]
    copied = COUNTING[:-1] + tail + COUNTING[-1:]
    assert differences(listing(copied, COUNTED), listing(MEASURING)) == []
    one_more = COUNTING[:-1] + ["lock btsq $0x18,(%rbx)"] + COUNTING[-1:]
    [found] = differences(listing(one_more, COUNTED), listing(MEASURING))
    assert "out of line" in found and "lock btsq $0x18,(%reg)" in found


# The claims' functions, by the pair of builds that has them.
PAIRS = [("pte-chain-inpage", "pte_chain_add"), ("pte-chain-inpage", "pte_chain_remove"),
         ("pte-chain-inpage-locked", "pte_chain_add"),
         ("pte-chain-inpage-locked", "pte_chain_remove"),
         ("pte-chain", "pte_chain_add"), ("pte-chain", "pte_chain_remove"),
         ("pte-chain-direct", "pte_chain_add"), ("pte-chain-direct", "pte_chain_remove"),
         ("baseline-nomemcg", "folio_unlock")]


@pytest.mark.allvariants
@pytest.mark.parametrize("design, function", PAIRS)
def test_a_measuring_build_is_its_counting_build_without_the_counters(design, function):
    from hotline.kernel.build import build_kernel
    from hotline.analysis.counter_free import listing as compiled
    counting = compiled(build_kernel(design).directory, function)
    measuring = compiled(build_kernel(f"{design}-nocounters").directory, function)
    assert counting is not None and measuring is not None
    assert counting.counting, f"{design}'s {function} counts nothing: nothing was compared"
    assert differences(counting, measuring) == []
