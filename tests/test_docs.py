"""The documentation points at what is there: every link and every
repository path it names resolves, every page of docs/ is in docs/README.md's
index, every command line it gives is one hotline takes, and README.md stays
a newcomer's length (150-250 lines)."""

import re
import shlex

from hotline import paths
from hotline.cli import command_line
from tests.conftest import command_lines

PAGES = [paths.REPO / "README.md", *sorted((paths.REPO / "docs").glob("*.md")),
         paths.REPO / "bench" / "README.md", paths.REPO / "analysis" / "README.md"]
# Where a path in backticks is a repository path: it starts with one of the
# repository's top-level folders.  Placeholders (NAME, KEY, RUN-ID, *) and
# the results and cache trees (made by runs) are not checked.
TOP = ("src/", "configs/", "docs/", "plugins/", "tests/", "bench/", "analysis/", "scripts/",
       "workflow/", "kernel-patches/", "disk-images/", "profiles/")
PLACEHOLDER = re.compile(r"[A-Z]{2,}|\*|\{|<|\.\.\.|\$")
# Made by hand, as the page that names it says (bench/README.md).
BUILT = {"bench/replay"}
LINK = re.compile(r"\]\(([^)#]+)(?:#[^)]*)?\)")
CODE_PATH = re.compile(r"`([^`\s]+)`")


def named_paths(text: str) -> set[str]:
    found = {m.group(1) for m in LINK.finditer(text) if "://" not in m.group(1)}
    for m in CODE_PATH.finditer(text):
        path = m.group(1).rstrip(".,:;)")
        if path.startswith(TOP) and not PLACEHOLDER.search(path) and path not in BUILT:
            found.add(path.split(":")[0])    # file:line
    return found


def test_every_named_path_exists():
    missing = []
    for page in PAGES:
        for path in named_paths(page.read_text(encoding="utf-8")):
            # Links are relative to their page; repository paths to the root.
            candidates = [page.parent / path, paths.REPO / path]
            if not any(c.exists() for c in candidates):
                missing.append(f"{page.relative_to(paths.REPO)}: {path}")
    assert missing == []


# Where command lines are given: the pages above, the committed results'
# provenance and the experiment specs' comments.
COMMAND_PAGES = [*PAGES, *sorted((paths.REPO / "analysis").glob("*/PROVENANCE.md")),
                 *sorted((paths.REPO / "configs" / "experiments").glob("*.toml"))]



def refused(arguments: str) -> str:
    """Why hotline's command line refuses these arguments, or ""."""
    try:
        args, extra = command_line().parse_known_args(shlex.split(arguments))
    except SystemExit:
        return "refused"
    return f"unknown {extra}" if extra and args.command not in ("test", "lab") else ""


def test_every_command_line_given_is_one_hotline_takes():
    wrong = [f"{page.relative_to(paths.REPO)}: ./hotline {command} ({why})"
             for page in COMMAND_PAGES for command in command_lines(page.read_text())
             if (why := refused(command))]
    assert wrong == []
    assert len([c for page in COMMAND_PAGES for c in command_lines(page.read_text())]) > 30


def test_the_check_finds_a_wrong_command_line():
    text = ("    ./hotline run configs/experiments/demo.toml --jobs 2   # 5 minutes\n"
            "#   ./hotline analyse results/claims-smoke \\\n"
            "#       --also \"QEMU, 32-byte lines=results/claims-32b\"\n"
            "# ./hotline demo: the demo\n"
            "Run `./hotline report` on it.\n")
    commands = command_lines(text)
    assert commands == ["run configs/experiments/demo.toml --jobs 2",
                        "analyse results/claims-smoke  --also \"QEMU, 32-byte "
                        "lines=results/claims-32b\"", "demo"]
    assert [bool(refused(c)) for c in commands] == [False, True, False]


def test_the_check_finds_a_missing_path():
    """The negative control: a page naming what is not there."""
    text = "See `src/hotline/no_such_module.py` and [this](docs/nowhere.md)."
    assert named_paths(text) == {"src/hotline/no_such_module.py", "docs/nowhere.md"}
    assert not (paths.REPO / "src/hotline/no_such_module.py").exists()


# A relative path in backticks or a link that climbs out of its folder.
CLIMBING = re.compile(r"(?:`|\]\()(\.\./[^`)\s]*)")


def paths_outside(page, text: str) -> list[str]:
    """The paths `text`, on `page`, names outside the repository."""
    return [m.group(1) for m in CLIMBING.finditer(text)
            if not any((base / m.group(1)).resolve().is_relative_to(paths.REPO)
                       for base in (page.parent, paths.REPO))]


def test_no_page_points_outside_the_repository():
    # A reader has a clone, not the workspace it was made in.
    outside = [f"{page.relative_to(paths.REPO)}: {path}" for page in PAGES
               for path in paths_outside(page, page.read_text(encoding="utf-8"))]
    assert outside == []
    # The negative control.
    assert paths_outside(paths.REPO / "README.md", "see `../shared/DESIGN.md`") == \
        ["../shared/DESIGN.md"]
    assert paths_outside(paths.REPO / "docs" / "x.md", "[up](../README.md)") == []


def test_every_page_is_in_the_index():
    index = (paths.REPO / "docs" / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in (paths.REPO / "docs").glob("*.md")} - {"README.md"}
    assert {p for p in pages if f"docs/{p}" not in index} == set()


def test_readme_fits_a_screen_or_two():
    readme = (paths.REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert 150 <= len(readme) <= 250
    # It opens with the two commands a fresh Debian 12 machine needs.
    commands = [line.split("#")[0].strip() for line in readme[1:6] if line.startswith("    ")]
    assert commands == ["./hotline demo", "./hotline test"]


# A session or an issue number resolves nowhere in the repository: history
# is git log's, and a record says what produced it by date and revision.
UNRESOLVED = re.compile(r"\b[Ss]ession \d+|\b[Ii]ssue #?\d+")


def test_no_text_cites_a_session_or_an_issue_number():
    texts = [*PAGES, *sorted((paths.REPO / "analysis").rglob("*.md")),
             *sorted((paths.REPO / "configs").rglob("*.toml")),
             *sorted((paths.REPO / "src" / "hotline" / "analysis" / "claims").glob("*.py"))]
    cited = [f"{p.relative_to(paths.REPO)}:{n}" for p in texts
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if UNRESOLVED.search(line)]
    assert cited == []
