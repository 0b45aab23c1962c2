"""Layout facts from DWARF, checked on a small program whose struct mirrors
struct page's nesting of anonymous unions; offsets worked out by hand."""

import subprocess

import pytest

from hotline.errors import HotlineError
from hotline.kernel.layout import read_layout

SOURCE = r"""
struct list_head { struct list_head *next, *prev; };
typedef struct { int counter; } atomic_t;
struct address_space;
struct page {
    unsigned long flags;
    union {
        struct {
            union {
                struct list_head lru;
                struct { void *__filler; unsigned int mlock_count; };
            };
            struct address_space *mapping;
            unsigned long index;
            unsigned long private;
        };
        struct { unsigned long compound_head; unsigned char order; };
    };
    union { atomic_t _mapcount; unsigned int page_type; };
    atomic_t _refcount;
    unsigned long memcg_data;
};
enum pageflags { PG_locked, PG_referenced, PG_uptodate, PG_waiters = 7, NR_PAGEFLAGS,
                 PG_checked = PG_referenced };
unsigned long vmemmap_base = 0xffffea0000000000UL;
unsigned long page_offset_base = 0xffff888000000000UL;
struct page pages[2];
enum pageflags some_flag;
int main(void) { return 0; }
"""

# (name, offset, size, primary): offsets by hand from the declaration, all
# members 8-byte aligned except the 4-byte atomics and the 1-byte order.
EXPECTED = [
    ("flags", 0, 8, True),
    ("lru", 8, 16, True),
    ("__filler", 8, 8, False),
    ("mlock_count", 16, 4, False),
    ("mapping", 24, 8, True),
    ("index", 32, 8, True),
    ("private", 40, 8, True),
    ("compound_head", 8, 8, False),
    ("order", 16, 1, False),
    ("_mapcount", 48, 4, True),
    ("page_type", 48, 4, False),
    ("_refcount", 52, 4, True),
    ("memcg_data", 56, 8, True),
]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("layout")
    (d / "page.c").write_text(SOURCE)
    subprocess.run(["gcc", "-g", "-gdwarf-5", "-O0", "-o", str(d / "page"), str(d / "page.c")],
                   check=True)
    return d / "page"


def test_struct_page_fields(program):
    facts = read_layout(program)
    assert facts["sizeof"] == 64
    got = [(f["name"], f["offset"], f["size"], f["primary"]) for f in facts["fields"]]
    assert got == EXPECTED


def test_flag_bits_and_symbols(program):
    facts = read_layout(program)
    assert facts["flag_bits"] == {"PG_locked": 0, "PG_referenced": 1, "PG_uptodate": 2,
                                  "PG_waiters": 7, "NR_PAGEFLAGS": 8, "PG_checked": 1}
    assert facts["symbols"] == {"vmemmap_base": "0xffffea0000000000",
                                "page_offset_base": "0xffff888000000000"}


def test_missing_struct_is_a_clear_error(program):
    with pytest.raises(HotlineError, match="no DWARF definition of struct folio"):
        read_layout(program, struct_name="folio")
