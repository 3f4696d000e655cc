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
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from nonatomic.lint.config import LintSettings
from nonatomic.lint.findings import Finding, OverBudget, RuleCrash, Unparsable, fingerprint
from nonatomic.lint.globs import matches_any
from nonatomic.rules.lint.catalogue import CATALOGUE, entry_for
from nonatomic.rules.lint.triggers.gates import Gate, SyntaxIndex, deeper_than
from nonatomic.rules.lint.triggers.prefilters import Prefilter, with_line_feeds

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
    notes: list[str] = field(default_factory=list)  # why rules were not run on it


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
        text = with_line_feeds(data)
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
            if prefilter is not None and not once(prefilter, lambda: prefilter.search(text)):
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
# The limit is the interpreter's, not the thread's: it is raised only while a file
# is linted (the caller waits meanwhile), then put back, so that a deep parse later
# in the process (the replay API, on a thread with a default stack) meets the usual
# limit and raises RecursionError instead of overflowing its stack.
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 50_000
_deep_thread: tuple[int, ThreadPoolExecutor] | None = None


def _in_deep_thread(function, *args):
    global _deep_thread  # noqa: NA301 - one thread per process, created by the only caller thread
    if _deep_thread is None or _deep_thread[0] != os.getpid():  # a forked worker has no thread yet
        previous = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            executor = ThreadPoolExecutor(max_workers=1)
        finally:
            threading.stack_size(previous)
        _deep_thread = (os.getpid(), executor)
    return _deep_thread[1].submit(_with_deep_recursion, function, *args).result()


def _with_deep_recursion(function, *args):
    kept = sys.getrecursionlimit()
    sys.setrecursionlimit(max(kept, _DEEP_RECURSION_LIMIT))
    try:
        return function(*args)
    finally:
        sys.setrecursionlimit(kept)


def _lint_source(relpath: str, data: bytes, plan: RulePlan, fix: bool, unsafe_fixes: bool) -> FileResult:
    result = FileResult(relpath)
    if _IGNORE_FILE.search(b"\n".join(data.split(b"\n", 10)[:10])):
        return result
    budget = plan.settings.max_file_seconds
    # CPU time of this thread, not the wall clock: on a loaded machine (a CI runner, a
    # parallel pre-commit) the same file would pass its budget on one run and not the
    # next, and its findings would come and go.
    deadline = time.thread_time() + budget
    original = data
    try:
        for _ in range(MAX_FIX_PASSES):
            once = _lint_once(relpath, data, plan, deadline)
            result.findings, result.crashes, result.notes = once.findings, once.crashes, once.notes
            if not fix or once.module is None:
                break
            fixable = [v for v in once.violations if v.replacement is not None and (unsafe_fixes or not v.unsafe_fix)]
            if not fixable:
                break
            from nonatomic.lint.analysis import fixed

            new_data = fixed(once.module, fixable)
            if new_data == data:
                break
            result.fixes_applied += len(fixable)
            data = new_data
    except OverBudget:  # what ran so far is dropped, fixes included: the syntax check stands alone
        verdict, python_error, _ = _cpython_check(original, relpath)
        once = _syntax_only(relpath, original, verdict, python_error, plan.syntax_errors_wanted(relpath))
        return FileResult(relpath, findings=_where_found(relpath, once.findings),
                          notes=[f"took over {budget:g} s (max-file-seconds): {_SYNTAX_ONLY}"])
    if data != original:
        result.fixed = data
    result.findings = _where_found(relpath, result.findings)
    return result


@dataclass
class _Pass:
    """One lint pass over one version of a file."""

    findings: list[Finding] = field(default_factory=list)
    crashes: list[RuleCrash] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    module: object = None  # libcst's module, when it parsed the file
    violations: list = field(default_factory=list)


_SYNTAX_ONLY = "only its syntax was checked"


def _lint_once(relpath: str, data: bytes, plan: RulePlan, deadline: float) -> _Pass:
    verdict, python_error, tree = _cpython_check(data, relpath)
    wanted = plan.syntax_errors_wanted(relpath)
    if verdict == _TOO_COMPLEX:  # never hand it to libcst: its native parser can overflow the stack
        return _Pass(_syntax_error(relpath, python_error) if wanted else [])
    codes = plan.codes_for(relpath, data, tree)
    if not codes:
        return _syntax_only(relpath, data, verdict, python_error, wanted)
    too_much = _too_much(data, tree, plan.settings.max_file_bytes)
    if too_much:
        skipped = _syntax_only(relpath, data, verdict, python_error, wanted)
        skipped.notes.append(f"{too_much}: {_SYNTAX_ONLY}")
        return skipped
    try:
        findings, crashes, module, violations = plan.analysis.lint(relpath, data, codes, tree, deadline)
    except Unparsable as exc:
        if verdict == _OK:  # CPython compiles it: libcst's limit, not the file's error
            return _Pass(notes=[f"{_where_libcst_fails(exc)} though CPython compiles it: not checked by {', '.join(codes)}"])
        return _Pass(_syntax_error(relpath, python_error or exc) if wanted else [])
    return _Pass(findings, crashes, [], module, violations)


def _syntax_only(relpath: str, data: bytes, verdict: str, python_error: Exception | None, wanted: bool) -> _Pass:
    """The syntax check alone: CPython's verdict, confirmed by libcst when CPython
    refuses the file (libcst may know newer syntax than this interpreter)."""
    if verdict == _SYNTAX and wanted:
        from nonatomic.lint.analysis import parses

        if not parses(data):
            return _Pass(_syntax_error(relpath, python_error))
    return _Pass()


# A line this long is generated (minified tables, long operator chains), and
# libcst's parse time grows steeply with such expressions.
MAX_LINE_BYTES = 20_000


# A tree this deep is generated (chains of thousands of calls, sums of thousands of
# terms): libcst's parse time grows with the square of the depth (a chain of 5,000
# calls: 38 s), while the deepest of 13,000 hand-written library files is under 600.
MAX_TREE_DEPTH = 1_000


def _too_much(data: bytes, tree: ast.Module | None, max_file_bytes: int) -> str | None:
    """Why a file is only syntax-checked: too large, a line too long, or too deep."""
    if len(data) > max_file_bytes:
        return f"larger than max-file-bytes ({max_file_bytes})"
    if len(data) > MAX_LINE_BYTES and max(map(len, data.split(b"\n"))) > MAX_LINE_BYTES:
        return f"a line over {MAX_LINE_BYTES} bytes"
    if tree is not None and deeper_than(tree, MAX_TREE_DEPTH):
        return f"nested more than {MAX_TREE_DEPTH} levels deep"
    return None


def _where_libcst_fails(error: Unparsable) -> str:
    at = _ERROR_AT.search(str(getattr(error.error, "message", "")))  # libcst's ParserSyntaxError
    return f"libcst cannot parse line {at.group(1)}" if at else f"libcst cannot parse it ({type(error.error).__name__})"


_ERROR_AT = re.compile(r"error at (\d+):")


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


# Where a file is can say that what is found in it fails nothing that ships, so every
# finding there is said at info, with the reason.
# - A test tree: a hang or a retried write there stops one test run against a test
#   service, as in a module of tests (`confidence.test_module`); and its unparsable file is
#   almost always a fixture broken on purpose, for a parser's or loader's error path.
# - A vendored copy of another project (`pip/_vendor/`, `third_party/`): replaced by a newer
#   copy, never edited in place, so what is found there is upstream's to fix.
# - A project template (cookiecutter's `{{cookiecutter.name}}/`, a copier or Jinja
#   `{{ package_name }}.py`): its placeholders are filled in before it is Python, so it does
#   not parse as shipped, and what is found in it belongs to the project it becomes.
_TEST_DIRS = frozenset({"test", "tests", "testing", "test_files", "testdata", "test_data", "fixtures"})
_VENDOR_DIRS = frozenset({"_vendor", "vendor", "vendored", "_vendored", "third_party", "_third_party", "thirdparty"})


def _tree_note(relpath: str) -> str | None:
    if "{{" in relpath or "{%" in relpath:
        return "in a project template"
    *folders, name = re.split(r"[/\\]", relpath)
    folders = [folder.lower() for folder in folders]
    if any(folder in _VENDOR_DIRS for folder in folders):
        return "in vendored code"
    if (any(folder in _TEST_DIRS for folder in folders)
            or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"):
        return "in a test tree"
    return None


def _where_found(relpath: str, findings: list[Finding]) -> list[Finding]:
    note = _tree_note(relpath)
    if note is None:
        return findings
    return [f if f.severity == "info" else replace(f, severity="info", message=f"{f.message} ({note})")
            for f in findings]
