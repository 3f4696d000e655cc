"""The layout is the architecture: the dependencies point one way (SPEC: Package and layout)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nonatomic"


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("rules", ("nonatomic.lint", "nonatomic.replay", "nonatomic.cli")),  # the catalogue imports no engine
        ("lint", ("nonatomic.replay", "nonatomic.cli", "duckdb", "pandas")),
        ("replay", ("nonatomic.lint", "nonatomic.cli")),
    ],
)
def test_dependencies_point_one_way(package, forbidden):
    offenders = {
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in (PACKAGE / package).rglob("*.py")
        for module in imported_modules(path)
        if any(module == name or module.startswith(name + ".") for name in forbidden)
    }
    assert not offenders


def test_guard_emitter_is_standard_library_only():
    third_party = {"duckdb", "pandas", "libcst", "click", "yaml"}
    roots = {module.split(".")[0] for module in imported_modules(PACKAGE / "guard.py")}
    assert not roots & third_party
