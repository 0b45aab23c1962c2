"""Naming the member of struct page's unions that an access touched
(results/members.py): by hand-written source lines, and on the accesses of
known functions of the built baseline kernel, whose C source says which
member each one reads or writes."""

import json
import re

import pandas as pd
import pytest

from hotline.kernel.build import build_kernel
from hotline.results.members import Members, member_from_source
from hotline.results.objects import ObjectMap
from hotline.results.symbols import Symbolizer

# Offset 8 of struct page in miniature: lru (16 bytes) over compound_head
# and a padding member; mlock_count at 16 under lru's second half.
FIELDS = [{"name": "flags", "offset": 0, "size": 8},
          {"name": "lru", "offset": 8, "size": 16},
          {"name": "__filler", "offset": 8, "size": 8},
          {"name": "mlock_count", "offset": 16, "size": 4},
          {"name": "compound_head", "offset": 8, "size": 8}]


@pytest.mark.parametrize("offset, name", [
    (0, "flags"),
    (8, "lru | compound_head"),         # padding is never what code names
    (16, "lru | mlock_count"),
    (23, "lru"),
    (40, "+40"),
])
def test_the_members_overlapping_a_byte(offset, name):
    assert Members(FIELDS).name(offset) == name


def test_a_union_name_starts_where_its_first_member_does():
    members = Members(FIELDS)
    assert members.offset_of("lru | compound_head") == 8
    assert members.offset_of("mlock_count") == 16
    assert members.offset_of("+40") == 40
    assert members.offset_of("nothing") is None


@pytest.mark.parametrize("texts, member", [
    # _compound_head(), inlined: its own line names the member.
    (["\tunsigned long head = READ_ONCE(page->compound_head);", "\tfolio = page_folio(page);"],
     "compound_head"),
    # list_add(&folio->lru, ...): the list code names none, its caller does.
    (["\tnew->next = next;", "\t__list_add(new, head, head->next);",
      "\t\tlist_add(&folio->lru, &lruvec->lists[lru]);"], "lru"),
    (["\tfolio.lru = x;"], "lru"),
    # `lru` as a variable, not a member, names nothing.
    (["\tenum lru_list lru = folio_lru_list(folio);"], "lru | compound_head"),
    # A line naming both cannot tell; nor can no text at all.
    (["\tp->compound_head = (unsigned long)&q->lru;", "\tlist_add(&folio->lru, h);"],
     "lru | compound_head"),
    ([None, None], "lru | compound_head"),
    ([], "lru | compound_head"),
])
def test_the_member_is_the_one_the_source_names(texts, member):
    assert member_from_source("lru | compound_head", texts) == member


def test_a_lone_member_needs_no_source():
    assert member_from_source("flags", ["\tp->compound_head = 1;"]) == "flags"


# ---- on the built kernel ----------------------------------------------------------------

@pytest.fixture(scope="module")
def kernel():
    return build_kernel("baseline")


def accesses(kernel, function: str, pattern: str) -> list[int]:
    """The pcs of `function`'s instructions whose text matches `pattern`."""
    symbols = Symbolizer(kernel.directory / "vmlinux")
    f = symbols.function_named(function)
    return [pc for pc, (_, text) in sorted(symbols.disassemble(f.start, f.start + f.size).items())
            if re.search(pattern, text)]


def named(kernel, pcs: list[int], offset: int) -> list[str]:
    """The field each pc's access at this byte of a struct page is given."""
    layout = json.loads((kernel.directory / "layout.json").read_text())
    objects = ObjectMap(layout, Symbolizer(kernel.directory / "vmlinux"), [], kernel.directory)
    frame = pd.DataFrame({"pc": pcs, "object": "struct page",
                          "field": objects.page_field(offset)})
    return objects.name_members(frame)["field"].tolist()


@pytest.mark.boot
def test_free_swap_cache_reads_compound_head_first(kernel):
    # mm/swap_state.c: free_swap_cache(page) begins with page_folio(page),
    # that is _compound_head(): a read of the word at offset 8.
    first = accesses(kernel, "free_swap_cache", r"^mov\s+0x8\(%rdi\),")[0]
    assert named(kernel, [first], 8) == ["compound_head"]


@pytest.mark.boot
def test_lru_add_fn_writes_mlock_count_and_lru(kernel):
    # mm/swap.c: lru_add_fn() zeroes folio->mlock_count (a 4-byte store at
    # offset 16) and adds the folio to its LRU list with list_add(&folio->lru),
    # whose stores write the 8-byte words at 8 and 16.
    (zero,) = accesses(kernel, "lru_add_fn", r"^movl\s+\$0x0,0x10\(%r")
    assert named(kernel, [zero], 16) == ["mlock_count"]
    for offset in (8, 16):
        links = accesses(kernel, "lru_add_fn", rf"^mov\s+%r\w+,{offset:#x}\(%r")
        assert links and set(named(kernel, links, offset)) == {"lru"}, offset
