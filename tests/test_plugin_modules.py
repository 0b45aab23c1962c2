"""The hotline-cache plugin is built of modules (plugins/hotline-cache/*.c),
as QEMU's contrib plugins keep their state: each file's state static,
reached through the functions its header declares, and the files calling
one another in one direction only.  Checked from what the compiler makes of
the sources, not from reading them: each file compiled alone, and nm says
what its object defines and what it needs from the others.

  - No header declares a variable `extern`, and no object exports data but
    the version symbol QEMU reads.
  - Every function a file exports is declared in its own header (NAME.c's
    NAME.h).
  - The file-level call graph (an edge from A.c to B.c when A's object needs
    a symbol B's defines: a function, or before the files kept their state,
    a variable) has no circle.
"""

import re
import subprocess
from pathlib import Path

import pytest

from hotline.simulate.qemu.plugins import MODEL, PLUGINS
from tests.conftest import require_tools

PLUGIN = PLUGINS / "hotline-cache"
# What QEMU looks up in the plugin: the only data a file may export.
EXPORTED_DATA = {"qemu_plugin_version"}


def objects(directory: Path, out: Path) -> dict[str, Path]:
    """{file: its object}, each .c of directory compiled alone, with the
    recorder built in (-DHOTLINE_CACHE_TRACE) so that its calls count too."""
    built = {}
    for source in sorted(directory.glob("*.c")):
        target = out / f"{source.stem}.o"
        subprocess.run(["gcc", "-c", "-O0", "-DHOTLINE_CACHE_TRACE", f"-I{directory}",
                        f"-I{MODEL}", f"-I{PLUGINS}", "-o", str(target), str(source)],
                       check=True)
        built[source.name] = target
    return built


def symbols(obj: Path) -> list[tuple[str, str]]:
    """(type, name) of each global symbol of the object, undefined ones
    included (nm's letters: T text, D/B/R/C data, U undefined)."""
    listed = subprocess.run(["nm", "-g", str(obj)], check=True, capture_output=True,
                            text=True).stdout
    return [(fields[-2], fields[-1]) for fields in map(str.split, listed.splitlines())
            if len(fields) >= 2]


def call_graph(built: dict[str, Path]) -> dict[str, set[str]]:
    """{file: the files whose functions it calls}."""
    defined = {name: file for file, obj in built.items()
               for kind, name in symbols(obj) if kind != "U"}
    return {file: {defined[name] for kind, name in symbols(obj)
                   if kind == "U" and name in defined and defined[name] != file}
            for file, obj in built.items()}


def circle(edges: dict[str, set[str]]) -> list[str]:
    """One circle of the graph, as the files along it, or []."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str]:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return []
        for other in sorted(edges.get(node, ())):
            if found := visit(other, path + [node]):
                return found
        done.add(node)
        return []

    for node in sorted(edges):
        if found := visit(node, []):
            return found
    return []


def extern_variables(header: Path) -> list[str]:
    """The `extern` declarations of the header that declare a variable
    (no parameter list; a function pointer counts as a variable)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", header.read_text(), flags=re.DOTALL)
    found = []
    for declaration in re.findall(r"\bextern\b[^;{]*;", text):
        if "(" not in declaration or re.search(r"\(\s*\*", declaration):
            found.append(" ".join(declaration.split()))
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    require_tools("gcc", "nm")
    return objects(PLUGIN, tmp_path_factory.mktemp("objects"))


def test_no_header_declares_a_variable_extern():
    headers = sorted(PLUGIN.glob("*.h"))
    assert headers
    assert {h.name: extern_variables(h) for h in headers if extern_variables(h)} == {}


def test_no_file_exports_state(built):
    exported = {file: sorted(name for kind, name in symbols(obj)
                             if kind in "BDRCGSV" and name not in EXPORTED_DATA)
                for file, obj in built.items()}
    assert {file: names for file, names in exported.items() if names} == {}


def test_each_file_exports_only_what_its_header_declares(built):
    undeclared = {}
    for file, obj in built.items():
        header = PLUGIN / file.replace(".c", ".h")
        text = header.read_text() if header.is_file() else ""
        functions = [name for kind, name in symbols(obj) if kind == "T"
                     and not name.startswith("qemu_plugin_")]     # QEMU's entry points
        missing = [name for name in functions if not re.search(rf"\b{name}\s*\(", text)]
        if missing:
            undeclared[file] = missing
    assert undeclared == {}


def test_the_files_call_one_another_in_one_direction(built):
    edges = call_graph(built)
    assert sum(map(len, edges.values())) > 10     # nm found the calls
    assert circle(edges) == [], " -> ".join(circle(edges))


def test_a_circle_through_three_files_is_found(tmp_path):
    """The negative control: a.c calls b.c, b.c calls c.c, c.c calls a.c."""
    require_tools("gcc", "nm")
    source = tmp_path / "src"
    source.mkdir()
    for name, callee in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]:
        (source / f"{name}.c").write_text(f"void {callee}(void);\n"
                                          f"void {name}(void) {{ {callee}(); }}\n")
    edges = call_graph(objects(source, tmp_path))
    assert edges == {"a.c": {"b.c"}, "b.c": {"c.c"}, "c.c": {"a.c"}, "d.c": {"a.c"}}
    assert circle(edges) == ["a.c", "b.c", "c.c", "a.c"]


def test_an_extern_variable_is_found(tmp_path):
    header = tmp_path / "x.h"
    header.write_text("/* extern int in_a_comment; */\nextern int count;\n"
                      "extern void f(int x);\nextern void (*hook)(void);\n"
                      "extern const char *const names[4];\n")
    assert extern_variables(header) == ["extern int count;", "extern void (*hook)(void);",
                                        "extern const char *const names[4];"]
