"""pyproject.toml declares what hotline uses; requirements.lock pins it.
Each fact is written once in each, and these tests fail when they drift:
a module src/hotline imports that no declared distribution provides, or a
declared distribution the lock does not pin."""

import ast
import importlib.metadata
import re
import sys
import tomllib

from hotline import paths


def declared() -> dict[str, list[str]]:
    project = tomllib.loads((paths.REPO / "pyproject.toml").read_text())["project"]
    return {"": project["dependencies"], **project["optional-dependencies"]}


def name(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group()).lower()


def pinned() -> set[str]:
    lines = (paths.REPO / "requirements.lock").read_text().splitlines()
    return {name(line) for line in lines if line.strip() and not line.startswith("#")}


def test_every_declared_dependency_is_pinned():
    missing = {name(r) for reqs in declared().values() for r in reqs} - pinned()
    assert not missing, f"declared in pyproject.toml, not pinned in requirements.lock: {missing}"


def imported_modules() -> set[str]:
    """The top-level modules src/hotline's code imports, other than its own."""
    modules = set()
    for path in (paths.REPO / "src" / "hotline").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split(".")[0])
    return modules - {"hotline"} - set(sys.stdlib_module_names)


def test_every_imported_module_is_declared():
    providers = importlib.metadata.packages_distributions()
    runtime = {name(r) for r in declared()[""]}
    undeclared = {module for module in imported_modules()
                  if not {name(d) for d in providers.get(module, [])} & runtime}
    assert not undeclared, f"imported by src/hotline, not declared in pyproject.toml: {undeclared}"
