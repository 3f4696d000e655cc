"""Which files to lint: Python files under the given paths, minus what is ignored."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from nonatomic.lint.globs import PatternSet

# Directories nobody wants linted (the same spirit as ruff's default excludes).
DEFAULT_EXCLUDES = [
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pytype",
    ".ruff_cache", ".nonatomic_cache", ".svn", ".tox", ".venv", "venv", "__pypackages__",
    "__pycache__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
]
PYTHON_SUFFIXES = (".py", ".pyi")


def root_relative(path: Path, root: Path) -> str:
    """What per-file-ignores match and fingerprints hold: the path from the root, or
    the absolute path of a file outside it."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return resolved.as_posix()


def _relative(path: Path, root: Path) -> str:
    """The path gitignore patterns see (one outside the root as if it were under it)."""
    return root_relative(path, root).lstrip("/")


class _Ignorer:
    def __init__(self, root: Path, exclude: list[str]) -> None:
        self.root = root
        self.sets = [PatternSet(DEFAULT_EXCLUDES), PatternSet(exclude)]
        self._loaded: set[str] = set()

    def load_gitignores_down_to(self, directory: Path) -> None:
        """Read every .gitignore from the root down to `directory` (each once)."""
        rel = _relative(directory, self.root)
        parts = [] if rel in ("", ".") else rel.split("/")
        for depth in range(len(parts) + 1):
            base = "/".join(parts[:depth])
            if base in self._loaded:
                continue
            self._loaded.add(base)
            gitignore = self.root / base / ".gitignore"
            if gitignore.is_file():
                try:
                    lines = gitignore.read_text("utf-8", errors="replace").splitlines()
                except OSError:
                    continue
                self.sets.append(PatternSet(lines, base))

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        verdict = False
        for patterns in self.sets:
            said = patterns.match(relpath, is_dir)
            if said is not None:
                verdict = said
        return verdict


def iter_python_files(
    paths: list[Path], root: Path, exclude: list[str], skipped: list[tuple[str, str]] | None = None
) -> Iterator[tuple[str, str]]:
    """Files to lint, as (path to open, root-relative path), sorted and without repeats.
    An explicit file is always linted.  Only the given paths are resolved, not every
    file under them: on a warm cache that resolving was most of the run.  A Python
    file name whose target cannot be reached (a symlink loop) goes to `skipped` as
    (path, reason)."""
    ignorer = _Ignorer(root, exclude)
    skipped = [] if skipped is None else skipped
    found: dict[str, str] = {}
    for path in paths:
        shown = root_relative(path, root)
        if path.is_file():
            found.setdefault(shown, str(path))
            continue
        ignorer.load_gitignores_down_to(path)
        rel = shown.lstrip("/")
        for child, relpath in _walk(str(path), "" if rel == "." else rel, ignorer, skipped):
            found.setdefault(relpath if rel == shown else "/" + relpath, child)
    for relpath in sorted(found):
        yield found[relpath], relpath


def _walk(directory: str, rel: str, ignorer: _Ignorer, skipped: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    if any(entry.name == ".gitignore" for entry in entries):
        ignorer.load_gitignores_down_to(Path(directory))
    for entry in entries:
        child = f"{rel}/{entry.name}" if rel else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if ignorer.ignored(child, is_dir):
            continue
        if is_dir:
            yield from _walk(entry.path, child, ignorer, skipped)
        elif entry.name.endswith(PYTHON_SUFFIXES) and _is_file(entry, skipped):
            yield entry.path, child


def _is_file(entry: os.DirEntry, skipped: list[tuple[str, str]]) -> bool:
    """A dangling symlink is no file (as for git); a loop is reported."""
    try:
        return entry.is_file()
    except OSError as exc:
        skipped.append((entry.path, f"skipped: {exc.strerror}"))
        return False
