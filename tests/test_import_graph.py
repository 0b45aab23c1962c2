"""No loops between hotline's parts: the top-level units of src/hotline (its
subpackages and modules) import one another in one direction only, counting
every import, at module level, inside functions and under TYPE_CHECKING
(a loop hidden there is a loop all the same).  An AST walk, so that
nothing is imported to find out."""

import ast
from pathlib import Path

from hotline import paths

PACKAGE = paths.REPO / "src" / "hotline"


def unit_edges(package: Path) -> dict[str, set[str]]:
    """{unit: the units it imports}, for the units of `package`."""
    name = package.name

    def unit(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[0] == name else None

    edges: dict[str, set[str]] = {}
    for file in package.rglob("*.py"):
        parts = file.relative_to(package.parent).with_suffix("").parts
        module_parts = parts[:-1] if parts[-1] == "__init__" else parts
        source = unit(".".join(module_parts))
        if source is None:
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = list(parts[:-1])[:len(parts) - node.level]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from hotline import specs` names the unit in the imported name.
                targets = [module] + ([f"{module}.{a.name}" for a in node.names]
                                      if module == name else [])
            else:
                continue
            for target in targets:
                if (other := unit(target)) and other != source:
                    edges.setdefault(source, set()).add(other)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_hotline_has_no_loop_between_its_parts():
    edges = unit_edges(PACKAGE)
    assert len(edges) > 10          # the walk found the package's imports
    assert cycles(edges) == []


def test_a_loop_hidden_in_a_function_is_found(tmp_path):
    """The negative control: a package whose only loop is a function-local
    import under TYPE_CHECKING's cover, and a relative one."""
    package = tmp_path / "pkg"
    (package / "a").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a" / "__init__.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from .c import x\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from pkg.a import y\n")
    (package / "d.py").write_text("import pkg.c\n")
    assert unit_edges(package) == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"c"}}
    assert cycles(unit_edges(package)) == [["a", "b", "c"]]
