"""The report's pictures, drawn with matplotlib from frames the report's
tables already computed (report/tables.py): this module only draws.

Each is a figures.Picture (PNG and SVG, reproducible byte for byte).
Figures are made with matplotlib's object API (Figure, not pyplot), so
nothing here touches a global backend or a display.
"""

import itertools

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, PowerNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, MaxNLocator
from matplotlib.transforms import Bbox

from hotline.figures import STYLE, Picture, picture
from hotline.results.members import SEPARATOR
from hotline.results.schema import CAUSES, UNKNOWN_CAUSE

# One colour per miss cause, used by every picture (and the legend says it).
CAUSE_COLOURS = {"compulsory": "#9e9e9e", "capacity": "#4c72b0", "conflict": "#8172b2",
                 "coherence": "#c44e52", "upgrade": "#dd8452", UNKNOWN_CAUSE: "#d9d9d9"}
LABEL_CHARS = 60   # longest bar label before it is cut
UNION_CHARS = 36   # the same beside struct page, a third of its picture


def _figure(width: float, height: float) -> Figure:
    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width, height), layout="constrained")


def _short(label: str, chars: int = LABEL_CHARS) -> str:
    return label if len(label) <= chars else label[:chars - 1] + "…"


def _stacked_bars(ax, labels: list[str], split: pd.DataFrame, chars: int = LABEL_CHARS) -> None:
    """Horizontal bars, one per label (first at the top, cut at `chars`),
    split by cause."""
    y = np.arange(len(labels))
    left = np.zeros(len(labels))
    for cause in (*CAUSES, UNKNOWN_CAUSE):
        values = split[cause].to_numpy(dtype=float) if cause in split else np.zeros(len(labels))
        if values.any():
            ax.barh(y, values, left=left, color=CAUSE_COLOURS[cause], label=cause, height=0.75)
        left += values
    ax.set_yticks(y, [_short(label, chars) for label in labels])
    ax.invert_yaxis()
    _counts_axis(ax.xaxis)
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)


def _counts_axis(axis, ticks: int = 6) -> None:
    """At most `ticks` ticks, written with thousands separators."""
    axis.set_major_locator(MaxNLocator(ticks, integer=True))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def cause_bars(name: str, title: str, labels: list[str], split: pd.DataFrame,
               xlabel: str) -> Picture:
    """Bars split by cause: split has one column per cause, one row per label."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(9, 1.2 + 0.28 * max(len(labels), 1))
        ax = fig.add_subplot()
        _stacked_bars(ax, labels, split)
        ax.set_xlabel(xlabel)
        ax.set_title(title, loc="left")
        if len(labels):
            ax.legend(loc="lower right", fontsize=8)
        return picture(fig, name, title)


STRUCT_PAGE_TITLE = "struct page: misses by field and level"


def struct_page(name: str, misses: pd.DataFrame, fields: list[tuple[str, int, int]],
                size: int, line_bytes: int, boxes: dict[str, str] | None = None) -> Picture:
    """struct_page_figure() as a picture."""
    return picture(struct_page_figure(misses, fields, size, line_bytes, boxes), name,
                   STRUCT_PAGE_TITLE)


def struct_page_figure(misses: pd.DataFrame, fields: list[tuple[str, int, int]], size: int,
                       line_bytes: int, boxes: dict[str, str] | None = None) -> Figure:
    """struct page drawn as the cache line(s) it is: each field a box at its
    offset and size, one row per level, shaded by that level's misses on it
    (square-root scale, each level its own), with the misses written in by
    the name they were attributed to (a union's box holds several: lru's
    bytes are compound_head to most code, and say so, as the tables do);
    beside it the L1D misses of each field and union member split by cause.

    misses: field, level, cause, count (misses on struct page).
    fields: (name, offset, size) of the fields, in offset order.
    boxes: the field whose box holds each other name in misses (a union's
    members: the union's first field); a name not in it is a box's own."""
    boxes = boxes or {}
    box = misses["field"].map(lambda f: boxes.get(f, f))
    levels = [lv for lv in ("L1D", "L2", "L3") if lv in set(misses["level"])] or ["L1D"]
    per_field = misses.assign(field=box).groupby(["level", "field"])["count"].sum()
    # A union no source line told apart ("lru | buddy_list | ...") is
    # written in its box short, as "lru | …".
    member = misses["field"].map(
        lambda f: f.split(SEPARATOR)[0] + SEPARATOR + "…" if SEPARATOR in f else f)
    per_name = misses.assign(box=box, field=member).groupby(["level", "box", "field"])[
        "count"].sum()
    title = STRUCT_PAGE_TITLE
    with matplotlib.rc_context(STYLE):
        fig = _figure(11, 1.6 + 0.55 * (len(levels) + len(fields) * 0.45))
        line_ax, cause_ax = fig.subplots(1, 2, width_ratios=[3, 2])
        cmap = matplotlib.colormaps["Reds"]
        labels = []
        for row, level in enumerate(levels):
            counts = per_field.get(level, pd.Series(dtype="int64"))
            names = per_name.get(level, pd.Series(dtype="int64"))
            top = max(int(counts.max()) if len(counts) else 0, 1)
            norm = PowerNorm(0.5, vmin=0, vmax=top)
            for field, offset, width in fields:
                n = int(counts.get(field, 0))
                colour = cmap(0.05 + 0.95 * norm(n)) if n else "#ffffff"
                line_ax.add_patch(Rectangle((offset, row), width, 0.9, facecolor=colour,
                                            edgecolor="#333333", linewidth=0.6))
                dark = n and norm(n) > 0.6
                in_box = names.get(field, pd.Series(dtype="int64"))
                text = line_ax.text(offset + width / 2, row + 0.45, "", ha="center",
                                    va="center", color="white" if dark else "black")
                labels.append((text, _box_labels(field, in_box), (offset, row, width, 0.9)))
        for boundary in range(0, size + 1, line_bytes):
            line_ax.axvline(boundary, color="#1f1f1f", linewidth=1.5)
        line_ax.set_xlim(0, size)
        line_ax.set_ylim(len(levels), 0)
        line_ax.set_yticks([r + 0.45 for r in range(len(levels))], levels)
        line_ax.set_xticks(range(0, size + 1, 8))
        line_ax.set_xlabel(f"byte offset in struct page ({size} bytes; "
                           f"{line_bytes}-byte lines drawn thick)")
        line_ax.set_title(title + " (darker: more; square-root scale per level)", loc="left")
        l1d = misses[misses["level"] == "L1D"].pivot_table(
            index="field", columns="cause", values="count", aggfunc="sum", fill_value=0
        ).rename(columns={"": UNKNOWN_CAUSE})
        # Each box's field, then the other members drawn in it that missed.
        names = [n for f, _, _ in fields
                 for n in [f, *sorted(set(misses.loc[box == f, "field"]) - {f})]]
        l1d = l1d.reindex(index=names, fill_value=0)
        # A union's name lists every member; its first ones tell it apart.
        _stacked_bars(cause_ax, names, l1d, chars=UNION_CHARS)
        _counts_axis(cause_ax.xaxis, ticks=4)
        cause_ax.set_xlabel("L1D misses")
        cause_ax.set_title("L1D misses by cause", loc="left")
        if l1d.to_numpy().any():
            cause_ax.legend(loc="best", fontsize=8)
        _fit_in_boxes(fig, line_ax, labels)
        return fig


# The sizes a struct page box's label may take, largest first: every
# variant of the label is tried at the first group's before the next.
BOX_FONT_SIZES = ((7, 6), (5,))


def _fit_in_boxes(fig: Figure, ax, labels: list[tuple[Text, list[str], tuple]]) -> None:
    """Each box's label as it fits inside its box (x, y, width, height in
    `ax`'s data), as measured once the figure is laid out: the fullest of
    its variants that fits, across if it can, else upwards, at the largest
    size (a fuller label before a larger size, down to the readable ones);
    left out if none fits (the bars beside give every name's misses)."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for text, variants, (x, y, width, height) in labels:
        # Sorted: the levels run downwards, so y grows up the page as it falls.
        corners = np.sort(ax.transData.transform([(x, y), (x + width, y + height)]), axis=0)
        # A margin: the SVG is drawn by the browser's fonts, not matplotlib's.
        room = Bbox(corners).padded(-2)
        tries = [(variant, rotation, size) for sizes in BOX_FONT_SIZES
                 for variant, rotation, size in itertools.product(variants, (0, 90), sizes)]
        for variant, rotation, size in tries:
            text.set(text=variant, rotation=rotation, fontsize=size)
            extent = text.get_window_extent(renderer)
            if extent.width <= room.width and extent.height <= room.height:
                break
        else:
            text.set_visible(False)


def _box_labels(field: str, names: pd.Series) -> list[str]:
    """What a struct page box may say, fullest first: two names, one, the
    first name's with its misses, the name alone."""
    full, one = _box_label(field, names, room=2), _box_label(field, names, room=1)
    first = one.split("\n")[:2]
    return list(dict.fromkeys([full, one, "\n".join(first), first[0]]))


def _box_label(field: str, names: pd.Series, room: int = 2) -> str:
    """What a struct page box says: the names the misses in it were
    attributed to, with their own misses, most first ("compound_head
    162,232" and "lru 3,141", not "lru 165,373"), as many as there is room
    for, then how many more and their misses; the field's own name and 0
    if none missed."""
    names = names[names > 0]
    if not len(names):
        return f"{field}\n0"
    names = names.sort_values(ascending=False, kind="stable")
    lines = [f"{names.index[0]}\n{int(names.iloc[0]):,}"]
    lines += [f"{name} {int(n):,}" for name, n in names.iloc[1:room].items()]
    if len(names) > room:
        lines.append(f"+{len(names) - room} more {int(names.iloc[room:].sum()):,}")
    return "\n".join(lines)


def cpu_matrix(name: str, field: str, matrix: pd.DataFrame, pair_labels: list[str],
               pair_counts: list[int]) -> Picture:
    """Who stole a field from whom: the CPU x CPU matrix of coherence misses
    (row: the CPU that missed; column: the CPU whose write took the line)
    and the top (missing instruction, stealing instruction) pairs."""
    title = f"page->{field}: who stole it from whom"
    with matplotlib.rc_context(STYLE):
        fig = _figure(12, max(3.5, 1.2 + 0.28 * len(pair_labels)))
        grid_ax, pairs_ax = fig.subplots(1, 2, width_ratios=[2, 3])
        values = matrix.to_numpy(dtype=float)
        shown = np.where(values > 0, values, np.nan)
        image = grid_ax.imshow(shown, cmap="Reds", norm=LogNorm(vmin=1, vmax=max(
            values.max() if values.size else 1, 2)))
        for (r, c), v in np.ndenumerate(values):
            grid_ax.text(c, r, f"{int(v):,}", ha="center", va="center", fontsize=8,
                         color="white" if v and v > values.max() / 3 else "black")
        grid_ax.set_xticks(range(len(matrix.columns)), [str(c) for c in matrix.columns])
        grid_ax.set_yticks(range(len(matrix.index)), [str(c) for c in matrix.index])
        grid_ax.set_xlabel("CPU whose write took the line")
        grid_ax.set_ylabel("CPU that missed")
        grid_ax.set_title("coherence misses, CPU x CPU", loc="left")
        fig.colorbar(image, ax=grid_ax, shrink=0.8)
        y = np.arange(len(pair_labels))
        pairs_ax.barh(y, pair_counts, color=CAUSE_COLOURS["coherence"], height=0.75)
        pairs_ax.set_yticks(y, [_short(label) for label in pair_labels], fontsize=7)
        pairs_ax.invert_yaxis()
        pairs_ax.set_xlabel("coherence misses")
        _counts_axis(pairs_ax.xaxis)
        pairs_ax.set_title("missed at <- stolen by the write at [the field it writes]", loc="left")
        pairs_ax.grid(axis="x", color="#dddddd", linewidth=0.5)
        return picture(fig, name, title)


def along_function(name: str, function: str, size: int, l1d: pd.DataFrame,
                   l2: pd.Series, marks: dict[int, str]) -> Picture:
    """Where in a function its misses fall: L1D misses at each instruction's
    offset, stacked by cause, the L2 data misses as dots, and the busiest
    instructions named.

    l1d: index offset, one column per cause.  l2: misses by offset.
    marks: {offset: label} to write above the bars."""
    title = f"{function}: L1D misses along the function's addresses"
    with matplotlib.rc_context(STYLE):
        fig = _figure(11, 3.2)
        ax = fig.add_subplot()
        x = l1d.index.to_numpy()
        bottom = np.zeros(len(x))
        width = max(size / 250, 1.5)
        for cause in (*CAUSES, UNKNOWN_CAUSE):
            values = l1d[cause].to_numpy(dtype=float) if cause in l1d else np.zeros(len(x))
            if values.any():
                ax.bar(x, values, bottom=bottom, width=width, color=CAUSE_COLOURS[cause],
                       label=cause, align="edge")
            bottom += values
        if len(l2):
            ax.plot(l2.index.to_numpy() + width / 2, l2.to_numpy(), "k.", markersize=4,
                    label="L2 data misses")
        totals = dict(zip(x, bottom))
        for offset, label in marks.items():
            ax.annotate(_short(label), (offset + width / 2, totals.get(offset, 0)),
                        xytext=(3, 2), textcoords="offset points", ha="left", va="bottom",
                        fontsize=7)
        highest = max([*bottom, *l2.to_numpy(), 1])
        ax.set_ylim(0, highest * 1.3)
        ax.set_xlim(0, max(size, 1))
        ax.set_xlabel(f"offset in {function} (bytes; the function is {size:#x} long)")
        ax.set_ylabel("misses")
        _counts_axis(ax.yaxis)
        ax.set_title(title, loc="left")
        if len(x):
            ax.legend(loc="upper right", fontsize=8, ncols=3)
        return picture(fig, name, title)


def difference_bars(name: str, title: str, labels: list[str], a: list[float],
                    b: list[float], names: tuple[str, str], xlabel: str) -> Picture:
    """Two runs side by side: for each label, A's and B's value as paired
    bars and B - A beside them (red: B costs more, blue: less)."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(12, 1.4 + 0.3 * max(len(labels), 1))
        both_ax, delta_ax = fig.subplots(1, 2, width_ratios=[3, 2], sharey=True)
        y = np.arange(len(labels))
        both_ax.barh(y - 0.2, a, height=0.4, color="#8da0cb", label=names[0])
        both_ax.barh(y + 0.2, b, height=0.4, color="#fc8d62", label=names[1])
        both_ax.set_yticks(y, [_short(label) for label in labels])
        both_ax.invert_yaxis()
        both_ax.set_xlabel(xlabel)
        both_ax.set_title(title, loc="left")
        both_ax.legend(loc="lower right", fontsize=8)
        delta = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
        delta_ax.barh(y, delta, color=np.where(delta > 0, "#c44e52", "#4c72b0"), height=0.6)
        delta_ax.axvline(0, color="black", linewidth=0.6)
        delta_ax.set_xlabel(f"{names[1]} - {names[0]}")
        _counts_axis(both_ax.xaxis)
        _counts_axis(delta_ax.xaxis)
        delta_ax.set_title("difference", loc="left")
        for ax in (both_ax, delta_ax):
            ax.grid(axis="x", color="#dddddd", linewidth=0.5)
            ax.set_axisbelow(True)
        return picture(fig, name, title)
