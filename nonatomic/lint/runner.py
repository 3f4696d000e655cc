"""Linting one file: triggers and CPython's syntax check first; then, only if some
rule can fire, libcst (see analysis.py); suppressions and fixes.

A file no enabled rule's trigger passes costs a regex scan and CPython's parse, and
a run made only of such files never imports libcst or a rule module.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from nonatomic.lint.config import LintSettings
from nonatomic.lint.findings import Finding, RuleCrash, Unparsable, fingerprint
from nonatomic.lint.globs import matches_any
from nonatomic.rules.lint.catalogue import CATALOGUE, entry_for
from nonatomic.rules.lint.triggers.gates import Gate, SyntaxIndex
from nonatomic.rules.lint.triggers.prefilters import Prefilter

if TYPE_CHECKING:
    from nonatomic.lint.analysis import Analysis

_IGNORE_FILE = re.compile(rb"#\s*nonatomic:\s*ignore-file\b")
MAX_FIX_PASSES = 10


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    crashes: list[RuleCrash] = field(default_factory=list)
    fixed: bytes | None = None  # the new source when fixes were applied
    fixes_applied: int = 0
    too_large: bool = False  # over max-file-bytes: only syntax-checked


class RulePlan:
    """The enabled rules' triggers: built once per process; the rules themselves and
    libcst are loaded on the first file that needs them."""

    def __init__(self, settings: LintSettings) -> None:
        self.settings = settings
        self.report_syntax_errors = "NA000" in settings.enabled
        entries = [e for e in CATALOGUE if e.code in settings.enabled and e.code != "NA000"]
        self.prefilters = {e.code: e.prefilter(settings.options_for(e.code), settings.tools) for e in entries}
        self.gates = {e.code: e.gate(settings.options_for(e.code), settings.tools) for e in entries}

    def codes_for(self, relpath: str, data: bytes, tree: ast.Module | None) -> list[str]:
        """The rules that may fire on this file: not ignored for its path, and passing
        their prefilter and (when CPython parsed the file) their gate."""
        ignored = {
            code
            for glob, codes in self.settings.per_file_ignores.items()
            if matches_any([glob], relpath)
            for code in codes
        }
        verdicts: dict[int, bool] = {}  # rules share prefilters and gates: each runs once per file
        index: SyntaxIndex | None = None  # built for the first gate, shared by the rest

        def indexed() -> SyntaxIndex:
            nonlocal index
            if index is None:
                index = SyntaxIndex(tree)
            return index

        def once(check: Prefilter | Gate, run) -> bool:
            if id(check) not in verdicts:
                verdicts[id(check)] = bool(run())
            return verdicts[id(check)]

        def may_fire(code: str) -> bool:
            prefilter, gate = self.prefilters[code], self.gates[code]
            if prefilter is not None and not once(prefilter, lambda: prefilter.search(data)):
                return False
            if gate is None or tree is None:
                return True
            return once(gate, lambda: gate(indexed()))

        return [
            code
            for code in self.prefilters
            if not any(code.startswith(ignore) for ignore in ignored) and may_fire(code)
        ]

    def syntax_errors_wanted(self, relpath: str) -> bool:
        return self.report_syntax_errors and not any(
            "NA000".startswith(code)
            for glob, codes in self.settings.per_file_ignores.items()
            if matches_any([glob], relpath)
            for code in codes
        )

    @cached_property
    def analysis(self) -> Analysis:
        from nonatomic.lint.analysis import Analysis

        return Analysis(self.settings)


def lint_source(relpath: str, data: bytes, plan: RulePlan, *, fix: bool = False, unsafe_fixes: bool = False) -> FileResult:
    """Findings for one file's bytes; with `fix`, apply fixes until none is left."""
    return _in_deep_thread(_lint_source, relpath, data, plan, fix, unsafe_fixes)


# libcst's visitors recurse once per tree level: deeply nested (often generated)
# code needs more stack and a higher recursion limit than a default thread has.
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 50_000
_deep_thread: tuple[int, ThreadPoolExecutor] | None = None


def _in_deep_thread(function, *args):
    global _deep_thread  # noqa: NA301 - one thread per process, created by the only caller thread
    if _deep_thread is None or _deep_thread[0] != os.getpid():  # a forked worker has no thread yet
        previous = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            executor = ThreadPoolExecutor(max_workers=1)
            executor.submit(sys.setrecursionlimit, _DEEP_RECURSION_LIMIT).result()  # noqa: NA201 - a fresh idle thread
        finally:
            threading.stack_size(previous)
        _deep_thread = (os.getpid(), executor)
    return _deep_thread[1].submit(function, *args).result()


def _lint_source(relpath: str, data: bytes, plan: RulePlan, fix: bool, unsafe_fixes: bool) -> FileResult:
    result = FileResult(relpath, too_large=_oversized(data, plan.settings.max_file_bytes))
    if _IGNORE_FILE.search(b"\n".join(data.split(b"\n", 10)[:10])):
        return result
    original = data
    for _ in range(MAX_FIX_PASSES):
        findings, crashes, module, violations = _lint_once(relpath, data, plan)
        result.findings, result.crashes = findings, crashes
        if not fix or module is None:
            break
        fixable = [v for v in violations if v.replacement is not None and (unsafe_fixes or not v.unsafe_fix)]
        if not fixable:
            break
        from nonatomic.lint.analysis import fixed

        new_data = fixed(module, fixable)
        if new_data == data:
            break
        result.fixes_applied += len(fixable)
        data = new_data
    if data != original:
        result.fixed = data
    return result


def _lint_once(relpath: str, data: bytes, plan: RulePlan):
    verdict, python_error, tree = _cpython_check(data, relpath)
    wanted = plan.syntax_errors_wanted(relpath)
    if verdict == _TOO_COMPLEX:  # never hand it to libcst: its native parser can overflow the stack
        return (_syntax_error(relpath, python_error) if wanted else []), [], None, []
    codes = plan.codes_for(relpath, data, tree)
    if not codes or _oversized(data, plan.settings.max_file_bytes):
        if verdict == _SYNTAX and wanted:
            from nonatomic.lint.analysis import parses

            if not parses(data):
                return _syntax_error(relpath, python_error), [], None, []
        return [], [], None, []
    try:
        return plan.analysis.lint(relpath, data, codes, tree)
    except Unparsable as exc:  # any parse failure is a finding, never a crash
        return (_syntax_error(relpath, python_error or exc) if wanted else []), [], None, []


# A line this long is generated (minified tables, long operator chains), and
# libcst's parse time grows steeply with such expressions.
MAX_LINE_BYTES = 20_000


def _oversized(data: bytes, max_file_bytes: int) -> bool:
    return len(data) > max_file_bytes or (
        len(data) > MAX_LINE_BYTES and max(map(len, data.split(b"\n"))) > MAX_LINE_BYTES
    )


_OK, _SYNTAX, _TOO_COMPLEX = "ok", "syntax", "too complex"
# CPython's own limits; past them libcst's recursive parser may crash the process.
_NESTING_LIMITS = ("too many nested parentheses", "too many levels of indentation", "too many statically nested blocks")


def _cpython_check(data: bytes, relpath: str) -> tuple[str, Exception | None, ast.Module | None]:
    """CPython's parser first: fast, the best messages ("Did you mean print(...)?"),
    and a guard against input so deep that libcst should not see it."""
    try:
        tree = compile(data, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if any(limit in str(exc.msg) for limit in _NESTING_LIMITS):
            return _TOO_COMPLEX, exc, None
        return _SYNTAX, exc, None  # libcst may still know newer syntax than this interpreter
    except (RecursionError, MemoryError) as exc:
        return _TOO_COMPLEX, exc, None
    except ValueError as exc:  # e.g. null bytes
        return _SYNTAX, exc, None
    return _OK, None, tree


def _syntax_error(relpath: str, error: Exception | None) -> list[Finding]:
    """The NA000 finding, from CPython's error when there is one, else libcst's."""
    line, col = 1, 1
    if isinstance(error, SyntaxError) and error.lineno:
        line, col = error.lineno, max(error.offset or 1, 1)
        message = f"cannot parse: {error.msg}"
    elif isinstance(error, Unparsable) and hasattr(error.error, "raw_line"):  # libcst's ParserSyntaxError
        line, col = error.error.raw_line, error.error.raw_column + 1
        message = f"cannot parse: {error.error.message}"
    elif isinstance(error, (RecursionError, MemoryError)):
        message = "cannot parse: too deeply nested for CPython to compile"
    elif isinstance(error, Unparsable):
        message = f"cannot parse: {type(error.error).__name__}: {error.error}"
    else:
        message = f"cannot parse: {type(error).__name__}: {error}" if error else "cannot parse"
    rule = entry_for("NA000")
    assert rule is not None
    return [
        Finding("NA000", rule.name, rule.severity, relpath, line, col, line, col, message,
                fingerprint=fingerprint("NA000", relpath))
    ]


