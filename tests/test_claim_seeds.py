"""Every seed figure the claims use is checked against the seed line it was read from:
a typo in seeds.py, or a line number that drifted, fails here rather than in a verdict."""

import math
import re

import pytest

from hotline import paths
from hotline.analysis.claims.seeds import FIGURES, SEED_FILES

SEEDS = paths.REPO / "analysis" / "seeds"

# The few numbers the seeds write as words.
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
         "eight": 8, "nine": 9, "ten": 10, "sixteen": 16}

# A number as the seeds write it: csh's elapsed m:ss.ss, digits with optional thousands
# separators and decimals, or a word.  The look-arounds keep a number inside another
# token ("-d31", "c013abdd", "2.5.27") from being read as one; a unit may follow ("95.04s").
NUMBER = re.compile(
    r"(?<![\w.:])(?:(?P<minutes>\d+):(?P<seconds>\d\d(?:\.\d+)?)"
    r"|(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?))(?![.:,]?\d)"
    r"|\b(?P<word>" + "|".join(WORDS) + r")\b",
    re.IGNORECASE)


def first_number(quote: str) -> float:
    """The figure's number in a quote: the first one it holds (seeds.py's rule)."""
    found = NUMBER.search(quote)
    assert found, f"no number in {quote!r}"
    if found["minutes"]:
        return int(found["minutes"]) * 60 + float(found["seconds"])
    if found["digits"]:
        return float(found["digits"].replace(",", ""))
    return float(WORDS[found["word"].lower()])


def seed_lines(seed: str) -> list[str]:
    # Split on "\n" only, so line numbers agree with grep -n and sed -n.
    text = (SEEDS / SEED_FILES[seed]).read_text(encoding="utf-8", errors="replace")
    return text.split("\n")


def test_the_seed_directory_holds_exactly_the_seed_files():
    assert sorted(p.name for p in SEEDS.glob("*.txt")) == sorted(SEED_FILES.values())
    for key, name in SEED_FILES.items():
        assert name.startswith(f"{key}_"), (key, name)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_quoted_from_its_line(name):
    figure = FIGURES[name]
    assert figure.seed in SEED_FILES, f"{name}: unknown seed {figure.seed!r}"
    assert (SEEDS / SEED_FILES[figure.seed]).is_file()
    lines = seed_lines(figure.seed)
    assert 1 <= figure.line <= len(lines), f"{name}: no line {figure.line}"
    line = lines[figure.line - 1]
    assert figure.quote in line, (
        f"{name}: {figure.quote!r} is not on {SEED_FILES[figure.seed]}:{figure.line}: {line!r}")


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_value_is_the_number_quoted(name):
    figure = FIGURES[name]
    written = first_number(figure.quote)
    assert math.isclose(written, figure.value, rel_tol=1e-12), (
        f"{name}: the quote {figure.quote!r} says {written}, the value is {figure.value}")


@pytest.mark.parametrize("quote, number", [
    ("95.04s system", 95.04), ("mmap -d31         13454", 13454.0), ("0:04.54", 4.54),
    ("3-4% of CPU time", 3.0), ("c013abdd 1468", 1468.0), ("of 4,106,673 calls", 4106673.0),
    ("a cache miss on three different things", 3.0), ("mem=512m", 512.0),
    ("in 2.5.27 on 4 CPUs", 4.0),
])
def test_numbers_are_read_as_written(quote, number):
    assert first_number(quote) == number
