"""The layout is the architecture: the dependencies point one way (SPEC: Package and layout)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nonatomic"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


@cache
def imported_modules(path: Path) -> frozenset[str]:
    """Every module `path` imports, anywhere in the file (a deferred import is still a
    dependency), relative imports made absolute."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module
            submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
            # `from package import submodule` depends on the submodule; a submodule's package
            # is loaded first by every import of it, which is no dependency of the importer
            found |= submodules or {base}
    return frozenset(found)


def test_imports_are_resolved_relative_ones_included():
    # the graph the circle test walks must see every edge, or it proves nothing
    assert "nonatomic.replay.report.model" in imported_modules(MODULES["nonatomic.replay.report.html"])
    assert "nonatomic.replay.ingest.ledger" in imported_modules(MODULES["nonatomic.replay.ingest"])
    assert "nonatomic.replay.ingest.ledger" in imported_modules(MODULES["nonatomic.replay.spark.ingest"])


def _own_dependencies(name: str) -> set[str]:
    """The modules of the package that `name` imports (a package counts as its __init__)."""
    out = set()
    for module in imported_modules(MODULES[name]):
        while module and module not in MODULES:
            module = module.rpartition(".")[0]
        if module and module != name:
            out.add(module)
    return out


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle_anywhere():
    assert import_circles({name: _own_dependencies(name) for name in MODULES}) == []


def test_circle_finder_finds_circles_through_any_length():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert sorted(import_circles(graph)) == [["a", "b", "c"], ["d", "e"]]


REPLAY_ABOVE_INGEST = ("nonatomic.replay.api", "nonatomic.replay.detect", "nonatomic.replay.settings",
                       "nonatomic.replay.timeline", "nonatomic.replay.report", "nonatomic.replay.spark")


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("rules", ("nonatomic.lint", "nonatomic.replay", "nonatomic.cli")),  # the catalogue imports no engine
        ("lint", ("nonatomic.replay", "nonatomic.cli", "duckdb", "pandas")),
        ("replay", ("nonatomic.lint", "nonatomic.cli")),
        # reading knows nothing of what is done with what it read
        ("replay/ingest", REPLAY_ABOVE_INGEST),
        # renderers draw built timelines and findings: no database, no ingest, no detection
        ("replay/report", ("nonatomic.replay.ingest", "nonatomic.replay.api", "nonatomic.replay.detect",
                           "nonatomic.replay.settings", "nonatomic.replay.timeline", "nonatomic.replay.spark",
                           "duckdb", "pandas")),
        # triggers decide, before libcst is loaded, whether a rule runs at all
        ("rules/lint/triggers", ("libcst", "nonatomic.rules.lint.tree")),
        ("rules/severity.py", ("nonatomic",)),
        # what the commands share is loaded by `nonatomic lint` too
        ("cli/common.py", ("nonatomic.lint", "nonatomic.replay", "duckdb", "pandas", "libcst")),
    ],
)
def test_dependencies_point_one_way(package, forbidden):
    target = PACKAGE / package
    paths = [target] if target.suffix == ".py" else target.rglob("*.py")
    offenders = {
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in paths
        for module in imported_modules(path)
        if any(module == name or module.startswith(name + ".") for name in forbidden)
    }
    assert not offenders


@pytest.mark.parametrize("path", sorted((PACKAGE / "replay" / "report").rglob("*.py")), ids=lambda p: p.name)
def test_renderers_never_get_a_connection(path):
    tree = ast.parse(path.read_text("utf-8"))
    parameters = {a.arg for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.Lambda))
                  for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    queries = [node.lineno for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr in ("execute", "sql", "fetchall", "fetchone")]
    assert not parameters & {"con", "connection", "session", "spark"}
    assert not queries


def test_guard_emitter_is_standard_library_only():
    third_party = {"duckdb", "pandas", "libcst", "click", "yaml"}
    roots = {module.split(".")[0] for module in imported_modules(PACKAGE / "guard.py")}
    assert not roots & third_party
