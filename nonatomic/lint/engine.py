"""Linting many files: discovery, cache, and a process pool whose results are
identical to a single-process run (files are handled in sorted order)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from nonatomic.config import usable_cpus
from nonatomic.lint.cache import LintCache, content_hash
from nonatomic.lint.config import LintSettings
from nonatomic.lint.discovery import iter_python_files, root_relative
from nonatomic.lint.findings import Finding, RuleCrash
from nonatomic.lint.runner import FileResult, RulePlan, lint_source

# Below this many files to lint, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 8


@dataclass
class LintReport:
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    crashes: list[RuleCrash] = field(default_factory=list)
    fixed: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)  # path -> (before, after)
    fixes_applied: int = 0
    notes: list[tuple[str, str]] = field(default_factory=list)  # (path, why not every check ran on it)


@dataclass(frozen=True)
class _Job:
    path: str  # as shown to the user
    relpath: str  # from the settings root: for per-file-ignores, fingerprints and the cache
    known_digest: str | None  # from the cache: skip linting if the bytes still hash to it


_PLAN: RulePlan | None = None
_MODE: tuple[bool, bool] = (False, False)


def _init_worker(settings: LintSettings, fix: bool, unsafe_fixes: bool) -> None:
    global _PLAN, _MODE  # noqa: NA301 - one plan per worker process, set before any job
    _PLAN, _MODE = RulePlan(settings), (fix, unsafe_fixes)


def _run_job(job: _Job) -> tuple[_Job, str | None, FileResult | None, bytes | None, os.stat_result | None]:
    """Lint one file: (job, digest of its bytes, result or None when the digest is the
    cached one, the bytes when fixing, the stat to cache its findings under or None)."""
    try:
        with open(job.path, "rb") as fh:
            # The stat before the bytes: a file edited while it is linted must not be
            # cached under its new stat with its old findings.
            before = os.fstat(fh.fileno())
            data = fh.read()
    except OSError as exc:
        return job, None, FileResult(job.path, crashes=[RuleCrash(job.path, "IO", f"cannot read: {exc.strerror}")]), None, None
    digest = content_hash(data)
    result = None
    if digest != job.known_digest:
        assert _PLAN is not None
        fix, unsafe = _MODE
        result = lint_source(job.relpath, data, _PLAN, fix=fix, unsafe_fixes=unsafe)
    return job, digest, result, data if result is not None and _MODE[0] else None, _unchanged(job.path, before)


def _unchanged(path: str, before: os.stat_result) -> os.stat_result | None:
    """`before` if the file still has that stat (else it changed while it was linted)."""
    try:
        after = os.stat(path)
    except OSError:
        return None
    same = (after.st_mtime_ns, after.st_size, after.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)
    return before if same else None


def printable(path: str) -> str:
    """A path as every output can write it: a file name that is not UTF-8 (decoded
    with surrogates, to open it) shows U+FFFD for its undecodable bytes, as git does."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def display_path(path: str) -> str:
    """The path as the user would type it: relative paths as walked, others relative to
    the working directory when possible."""
    if not os.path.isabs(path):
        return os.path.normpath(path)
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path


def lint_paths(
    paths: list[Path],
    settings: LintSettings,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    fix: bool = False,
    unsafe_fixes: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> LintReport:
    """Lint files and directories; with `fix`, return fixed sources (the caller writes them)."""
    report = LintReport()
    cache = LintCache(settings.root, settings.cache_key()) if use_cache and not fix else None
    todo: list[_Job] = []
    unreachable: list[tuple[str, str]] = []
    for path, relpath in iter_python_files(paths, settings.root, settings.exclude, unreachable):
        report.files += 1
        job = _Job(display_path(path), relpath, None)
        if cache is not None:
            try:
                cached = cache.by_stat(job.relpath, os.stat(path))
            except OSError:
                cached = None
            if cached is not None:
                report.findings += _shown(cached, job.path)
                continue
            job = replace(job, known_digest=cache.digest(job.relpath))
        todo.append(job)

    report.notes += [(printable(display_path(path)), why) for path, why in unreachable]
    jobs = min(jobs or usable_cpus(), usable_cpus())  # more processes than CPUs only add start-up
    if jobs > 1 and len(todo) >= MIN_FILES_FOR_POOL:
        import multiprocessing  # only here: one file (the pre-commit case) never pays for it

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with multiprocessing.get_context(method).Pool(
            min(jobs, len(todo)), _init_worker, (settings, fix, unsafe_fixes)
        ) as pool:
            results = pool.imap(_run_job, todo, chunksize=4)
            _collect(results, report, cache, progress, len(todo))
    else:
        _init_worker(settings, fix, unsafe_fixes)
        _collect(map(_run_job, todo), report, cache, progress, len(todo))
    if cache is not None:
        cache.save()
    report.findings.sort(key=lambda f: f.sort_key)
    return report


def lint_stdin(data: bytes, filename: str | None, settings: LintSettings, *, fix: bool = False,
               unsafe_fixes: bool = False) -> LintReport:
    """Lint bytes read from standard input, as the file `filename` would be (its
    per-file-ignores apply; findings show that name, or `-`)."""
    shown = display_path(filename) if filename else "-"
    relpath = root_relative(Path(filename), settings.root) if filename else "-"
    _init_worker(settings, fix, unsafe_fixes)
    assert _PLAN is not None
    result = lint_source(relpath, data, _PLAN, fix=fix, unsafe_fixes=unsafe_fixes)
    report = LintReport()
    _collect([(_Job(shown, relpath, None), None, result, data if fix else None, None)], report, None, None, 1)
    report.files = 1
    return report


def _shown(findings: list[Finding], path: str) -> list[Finding]:
    shown = printable(path)
    return [replace(f, path=shown) for f in findings]


def _collect(results, report: LintReport, cache: LintCache | None, progress, total: int) -> None:
    for done, (job, digest, result, before, stat) in enumerate(results, 1):
        if result is None:  # unchanged bytes: the cached findings stand
            assert cache is not None and digest is not None
            findings = cache.findings(job.relpath)
        else:
            findings = result.findings
            report.crashes += [replace(c, path=printable(job.path)) for c in result.crashes]
            report.notes += [(printable(job.path), note) for note in result.notes]
            if result.fixed is not None and before is not None:
                report.fixed[job.path] = (before, result.fixed)
                report.fixes_applied += result.fixes_applied
        report.findings += _shown(findings, job.path)
        # A file with crashes or notes is not cached: its next run must say so again.
        if cache is not None and digest is not None and stat is not None and not (result and (result.crashes or result.notes)):
            cache.store(job.relpath, stat, digest, findings)
        if progress:
            progress(done, total)
