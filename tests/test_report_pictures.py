"""The report's pictures, drawn from small hand-written frames: they are
real PNG and SVG files, reproducible byte for byte, and what they write
(field names, miss counts, labels) is what the frames say."""

import io
import xml.etree.ElementTree as ET

import matplotlib
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image

from hotline.figures import STYLE, Picture
from hotline.report import pictures as pic
from hotline.report import tables as rt
from hotline.results.schema import CAUSES, UNKNOWN_CAUSE

FIELDS = [("flags", 0, 8), ("lru", 8, 16), ("mapping", 24, 8), ("_mapcount", 48, 4),
          ("_refcount", 52, 4)]
PAGE_MISSES = pd.DataFrame([
    ("flags", "L1D", "coherence", 700), ("flags", "L1D", "capacity", 534),
    ("flags", "L2", "coherence", 700), ("_refcount", "L1D", "upgrade", 321),
    ("lru", "L1D", "capacity", 90), ("lru", "L2", "capacity", 12)],
    columns=["field", "level", "cause", "count"])


def svg_text(p: Picture) -> str:
    root = ET.fromstring(p.svg)
    return " ".join(t for t in root.itertext())


def check_files(p: Picture) -> None:
    image = Image.open(io.BytesIO(p.png))
    assert image.format == "PNG" and image.size[0] > 300 and image.size[1] > 100
    ET.fromstring(p.svg)   # well-formed
    assert b"<dc:date>" not in p.svg and b"Matplotlib version" not in p.png


def test_every_cause_has_one_colour():
    """The backend's causes and the report's name for none (gem5's)."""
    assert set(pic.CAUSE_COLOURS) == {*CAUSES, UNKNOWN_CAUSE}
    assert len(set(pic.CAUSE_COLOURS.values())) == len(CAUSES) + 1


def test_struct_page_writes_each_fields_misses_per_level():
    p = pic.struct_page("struct-page", PAGE_MISSES, FIELDS, 64, 64)
    check_files(p)
    words = svg_text(p).split()
    for field, _, _ in FIELDS:
        assert field in words
    # flags: 700 + 534 L1D misses, 700 at L2; _refcount 321; lru 90 and 12
    for count in ("1,234", "700", "321", "90", "12"):
        assert count in words
    assert "L1D" in words and "L2" in words and "L3" not in words


def test_a_unions_members_are_drawn_in_its_box_and_barred_apart():
    # compound_head shares lru's bytes: its 400 L1D misses shade lru's box
    # with lru's 90, and the box says each name's own misses, as the table
    # does (not "lru 490": the misses were attributed to compound_head).
    misses = pd.concat([PAGE_MISSES, pd.DataFrame(
        [("compound_head", "L1D", "capacity", 400)], columns=PAGE_MISSES.columns)])
    p = pic.struct_page("struct-page", misses, FIELDS, 64, 64,
                        {"compound_head": "lru", "lru": "lru"})
    text = " ".join(svg_text(p).split())
    assert "compound_head 400 lru 90" in text and "490" not in text.split()
    # At L2 only lru missed: its box says lru and its 12.
    assert "lru 12" in text


def test_a_box_whose_misses_are_all_another_members_is_named_by_it():
    misses = pd.DataFrame([("flags", "L1D", "capacity", 5),
                           ("compound_head", "L1D", "coherence", 162232)],
                          columns=PAGE_MISSES.columns)
    p = pic.struct_page("struct-page", misses, FIELDS, 64, 64,
                        {"compound_head": "lru", "flags": "flags"})
    lines = [t.strip() for t in ET.fromstring(p.svg).itertext() if t.strip()]
    assert "compound_head" in lines and "162,232" in lines
    assert pic._box_label("lru", pd.Series({"compound_head": 162232, "lru": 3141,
                                            "buddy_list": 7, "pcp_list": 1})) == \
        "compound_head\n162,232\nlru 3,141\n+2 more 8"
    # An 8-byte box has room for one name.
    assert pic._box_label("mapping", pd.Series({"mapping": 98, "mapping | …": 46}), room=1) == \
        "mapping\n98\n+1 more 46"


# The demo's struct page, as its run attributes it: unions no source line
# told apart, six-figure counts, three names in a 4-byte box.
DEMO_FIELDS = [("flags", 0, 8), ("lru", 8, 16), ("mapping", 24, 8), ("index", 32, 8),
               ("private", 40, 8), ("_mapcount", 48, 4), ("_refcount", 52, 4),
               ("memcg_data", 56, 8)]
DEMO_UNIONS = {"lru | mlock_count | buddy_list | pcp_list | pp | compound_dtor": "lru",
               "index | dma_addr | _private_1 | deferred_list | pt_mm": "index",
               "private | dma_addr_upper | pp_frag_count | ptl": "private",
               "mapping | compound_pincount | deferred_list": "mapping",
               "_mapcount | page_type": "_mapcount", "compound_head": "lru",
               "pcp_list": "lru", "buddy_list": "lru"}
DEMO_PAGE = pd.DataFrame(
    [(field, level, cause, int(n * scale))
     for level, scale in (("L1D", 1.0), ("L2", 0.7), ("L3", 0.01))
     for field, cause, n in (
         ("flags", "capacity", 81_802), ("compound_head", "capacity", 161_127),
         ("pcp_list", "capacity", 7_916), ("buddy_list", "capacity", 1_077),
         ("lru", "capacity", 3_141), ("mapping", "capacity", 112),
         ("mapping | compound_pincount | deferred_list", "capacity", 54),
         ("index | dma_addr | _private_1 | deferred_list | pt_mm", "capacity", 558),
         ("private | dma_addr_upper | pp_frag_count | ptl", "capacity", 3_311),
         ("_mapcount", "upgrade", 59_928), ("_mapcount | page_type", "upgrade", 627),
         ("_refcount", "upgrade", 106_092), ("memcg_data", "capacity", 285),
         ("lru | mlock_count | buddy_list | pcp_list | pp | compound_dtor", "capacity", 444))
     if int(n * scale)],
    columns=["field", "level", "cause", "count"])


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """The pairs of texts on a figure whose boxes overlap once it is drawn
    as its PNG is: tick labels, axis labels, titles, a box's label."""
    with matplotlib.rc_context(STYLE):
        FigureCanvasAgg(fig).draw()
        renderer = fig.canvas.get_renderer()
        texts = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.findobj(Text)
                 if t.get_visible() and t.get_text().strip()]
    return [(a, b) for i, (a, one) in enumerate(texts) for b, other in texts[i + 1:]
            if one.overlaps(other)]


def test_no_label_of_the_struct_page_picture_overlaps_another():
    fig = pic.struct_page_figure(DEMO_PAGE, DEMO_FIELDS, 64, 64,
                                 {**DEMO_UNIONS, **{f: f for f, _, _ in DEMO_FIELDS}})
    assert overlapping_texts(fig) == []
    # Every box still says what missed in it most, somewhere on the picture.
    shown = " ".join(t.get_text() for t in fig.axes[0].texts if t.get_visible())
    for name in ("flags", "compound_head", "_mapcount", "_refcount", "memcg_data"):
        assert name in shown
    # The negative control: two labels drawn on top of each other.
    other = Figure()
    other.text(0.5, 0.5, "on top")
    other.text(0.5, 0.5, "of each other")
    assert overlapping_texts(other) == [("on top", "of each other")]


def test_the_box_of_each_name_is_the_field_holding_its_first_byte():
    layout = {"fields": [
        {"name": "flags", "offset": 0, "size": 8, "primary": True},
        {"name": "lru", "offset": 8, "size": 16, "primary": True},
        {"name": "compound_head", "offset": 8, "size": 8, "primary": False},
        {"name": "mlock_count", "offset": 16, "size": 4, "primary": False}]}
    assert rt.page_boxes(layout, ["compound_head", "lru | mlock_count", "mlock_count", "+40",
                                  "flags"]) == {
        "compound_head": "lru", "lru | mlock_count": "lru", "mlock_count": "lru",
        "+40": "+40", "flags": "flags"}


def test_pictures_are_reproducible():
    one = pic.struct_page("struct-page", PAGE_MISSES, FIELDS, 64, 64)
    two = pic.struct_page("struct-page", PAGE_MISSES, FIELDS, 64, 64)
    assert one.png == two.png and one.svg == two.svg


def test_cause_bars_label_every_instruction():
    split = pd.DataFrame({"compulsory": [1, 0], "capacity": [50, 3], "conflict": [0, 0],
                          "coherence": [20, 7], "upgrade": [0, 2]})
    p = pic.cause_bars("top-l1d", "Top instructions", ["f+0x10  mov (%rdi),%rax",
                                                       "g+0x4  lock andb $0xfe,(%rdi)"],
                       split, "L1D misses")
    check_files(p)
    text = svg_text(p)
    assert "f+0x10" in text and "lock andb" in text and "coherence" in text
    assert UNKNOWN_CAUSE not in text


def test_misses_of_no_known_cause_are_drawn_as_such():
    """A gem5 run: upgrades, and every other miss of no known cause."""
    split = pd.DataFrame({"upgrade": [0, 2], UNKNOWN_CAUSE: [40, 9]})
    p = pic.cause_bars("top-l1d", "Top instructions", ["f+0x10", "g+0x4"], split, "L1D misses")
    text = svg_text(p)
    assert "upgrade" in text and UNKNOWN_CAUSE in text and "coherence" not in text


def test_cpu_matrix_writes_the_counts():
    matrix = pd.DataFrame([[0, 5], [17, 0]], index=[0, 1], columns=[0, 1])
    p = pic.cpu_matrix("thieves", "flags", matrix, ["a+0x1  <-  b+0x2"], [17])
    check_files(p)
    text = svg_text(p)
    assert "17" in text and "5" in text and "a+0x1" in text


def test_along_function_and_difference_bars_draw():
    l1d = pd.DataFrame({c: [0, 0] for c in CAUSES}, index=[0x10, 0x40])
    l1d["capacity"] = [30, 4]
    p = pic.along_function("function-f", "f", 0x80, l1d, pd.Series({0x10: 3}),
                           {0x10: "+0x10 mov (%rdi),%rax"})
    check_files(p)
    assert "mov (%rdi),%rax" in svg_text(p)
    d = pic.difference_bars("diff", "Stall cycles", ["f", "g (only in B)"], [100, 0], [80, 50],
                            ("A", "B"), "cycles")
    check_files(d)
    assert "g (only in B)" in svg_text(d)


def test_html_embeds_the_png_and_links_the_files(tmp_path):
    p = pic.struct_page("struct-page", PAGE_MISSES, FIELDS, 64, 64)
    page = p.html("pictures")
    assert 'src="data:image/png;base64,' in page and 'href="pictures/struct-page.svg"' in page
    written = p.write(tmp_path / "pictures")
    assert written.read_bytes() == p.png
    assert (tmp_path / "pictures" / "struct-page.svg").read_bytes() == p.svg
