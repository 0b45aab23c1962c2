"""One picture, drawn with matplotlib and kept as PNG (embedded in HTML
pages) and SVG (written beside them, for papers), both reproducible byte for
byte: no dates or software versions in the files, a fixed hash salt for SVG
ids.  Below both the report (report/pictures.py draws its figures) and the
claims page (analysis/claims_page.py), which share it."""

import base64
import html
import io
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from hotline import outputs

# svg.fonttype none: the SVG keeps its text as text (searchable, editable).
STYLE = {"svg.hashsalt": "hotline", "svg.fonttype": "none", "font.size": 9,
         "axes.titlesize": 10, "figure.dpi": 100, "savefig.bbox": "tight"}


@dataclass(frozen=True)
class Picture:
    name: str        # file stem: NAME.png, NAME.svg
    title: str       # what it shows, one line
    png: bytes
    svg: bytes

    def write(self, directory: Path) -> Path:
        """Write NAME.png and NAME.svg into directory; the PNG's path."""
        outputs.make_dir(directory)
        outputs.write_bytes(directory / f"{self.name}.svg", self.svg, sync=False)
        return outputs.write_bytes(directory / f"{self.name}.png", self.png, sync=False)

    def html(self, link_dir: str) -> str:
        """A <figure> with the PNG embedded (the page stays one file) and a
        link to the SVG written under link_dir (relative to the page)."""
        data = base64.b64encode(self.png).decode()
        title = html.escape(self.title)
        return (f'<figure id="{self.name}"><img src="data:image/png;base64,{data}" '
                f'alt="{title}"><figcaption>{title} '
                f'(<a href="{link_dir}/{self.name}.svg">SVG</a>, '
                f'<a href="{link_dir}/{self.name}.png">PNG</a>)</figcaption></figure>')


def picture(figure: Figure, name: str, title: str) -> Picture:
    with matplotlib.rc_context(STYLE):
        png, svg = io.BytesIO(), io.BytesIO()
        figure.savefig(png, format="png", metadata={"Software": None})
        figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    return Picture(name, title, png.getvalue(), svg.getvalue())
