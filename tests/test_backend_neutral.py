"""Nothing outside simulate/ knows a backend by name: what differs between
backends is asked of simulate.get_backend(spec.backend) (simulate/
backend.py), so a third backend is one more package.  An AST walk of every
module outside simulate/: no import of a backend's package, and no
comparison with a backend's name."""

import ast

from hotline import paths

PACKAGE = paths.REPO / "src" / "hotline"
BACKENDS = sorted(p.name for p in (PACKAGE / "simulate").iterdir()
                  if (p / "__init__.py").is_file())


def imports_a_backend(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    else:
        return None
    for name in names:
        parts = name.split(".")
        if parts[:2] == ["hotline", "simulate"] and len(parts) > 2 and parts[2] in BACKENDS:
            return name
    return None


def constants(node: ast.AST) -> list[str]:
    """The string constants a comparison's operand is or holds."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [c for e in node.elts for c in constants(e)]
    return []


def compares_a_backend_name(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Compare):
        return None
    for operand in [node.left, *node.comparators]:
        for value in constants(operand):
            if value in BACKENDS:
                return value
    return None


def findings() -> list[str]:
    found = []
    for file in sorted(PACKAGE.rglob("*.py")):
        if file.is_relative_to(PACKAGE / "simulate"):
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if what := imports_a_backend(node):
                found.append(f"{file.relative_to(PACKAGE)}:{node.lineno}: imports {what}")
            if what := compares_a_backend_name(node):
                found.append(f"{file.relative_to(PACKAGE)}:{node.lineno}: compares with "
                             f"'{what}'")
    return found


def test_the_backends_are_the_packages_of_simulate():
    assert BACKENDS == ["gem5", "qemu"]


def test_no_module_outside_simulate_knows_a_backend_by_name():
    assert findings() == []


def test_the_check_finds_what_it_looks_for():
    for source, found in (("from hotline.simulate.qemu.plugins import build_plugin", True),
                          ("from hotline.simulate import qemu", True),
                          ("import hotline.simulate.gem5.params", True),
                          ("from hotline.simulate import get_backend", False)):
        assert bool(imports_a_backend(ast.parse(source).body[0])) == found, source
    for source, found in (('spec.backend == "qemu"', True), ('"gem5" in backends', True),
                          ('backends != ["gem5"]', True), ('name == "QEMU"', False)):
        node = ast.parse(source).body[0].value
        assert bool(compares_a_backend_name(node)) == found, source
