"""Linting one file: prefilter, one parse, one batched traversal, suppressions, fixes."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import PositionProvider

from nonatomic.lint.config import LintSettings
from nonatomic.lint.findings import Finding, RuleCrash
from nonatomic.lint.globs import matches_any
from nonatomic.rules.lint import all_rules, rule_for
from nonatomic.rules.lint.base import LintRule, RuleContext, Violation
from nonatomic.rules.lint.semantics.callees import CalleeProvider, default_constructors
from nonatomic.rules.lint.walk import Metadata, visit_batched

_IGNORE_FILE = re.compile(rb"#\s*nonatomic:\s*ignore-file\b")
_NOQA = re.compile(
    rb"#\s*noqa(?::[\s]*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_SCOPE = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+(\w+)")
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
    """The enabled rules, their options and prefilters: built once per process."""

    def __init__(self, settings: LintSettings) -> None:
        self.settings = settings
        self.report_syntax_errors = "NA000" in settings.enabled
        self.rules: list[type[LintRule]] = [
            rule for rule in all_rules() if rule.code in settings.enabled and rule.code != "NA000"
        ]
        self.contexts = {
            rule.code: RuleContext(options=settings.options_for(rule.code), settings=settings)
            for rule in self.rules
        }
        self.prefilters = {
            rule.code: rule.build_prefilter(settings.options_for(rule.code)) for rule in self.rules
        }
        CalleeProvider.constructors = default_constructors() | settings.tools.get("types", {})

    def rules_for(self, relpath: str, data: bytes) -> list[type[LintRule]]:
        ignored = {
            code
            for glob, codes in self.settings.per_file_ignores.items()
            if matches_any([glob], relpath)
            for code in codes
        }
        return [
            rule
            for rule in self.rules
            if not any(rule.code.startswith(code) for code in ignored)
            and (self.prefilters[rule.code] is None or self.prefilters[rule.code].search(data))
        ]

    def syntax_errors_wanted(self, relpath: str) -> bool:
        return self.report_syntax_errors and not any(
            "NA000".startswith(code)
            for glob, codes in self.settings.per_file_ignores.items()
            if matches_any([glob], relpath)
            for code in codes
        )


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
        replacer = _Replacer(fixable)
        new_module = _with_imports(module.visit(replacer), replacer.applied)
        new_data = new_module.bytes
        if new_data == data:
            break
        result.fixes_applied += len(fixable)
        data = new_data
    if data != original:
        result.fixed = data
    return result


def _lint_once(relpath: str, data: bytes, plan: RulePlan):
    verdict, python_error = _cpython_check(data, relpath)
    wanted = plan.syntax_errors_wanted(relpath)
    if verdict == _TOO_COMPLEX:  # never hand it to libcst: its native parser can overflow the stack
        return (_syntax_error(relpath, python_error) if wanted else []), [], None, []
    rules = plan.rules_for(relpath, data)
    if not rules or _oversized(data, plan.settings.max_file_bytes):
        if verdict == _SYNTAX and wanted and not _libcst_parses(data):
            return _syntax_error(relpath, python_error), [], None, []
        return [], [], None, []
    try:
        module = cst.parse_module(data)
    except Exception as exc:  # noqa: BLE001 - any parse failure is a finding, never a crash
        return (_syntax_error(relpath, python_error or exc) if wanted else []), [], None, []
    instances = [rule(plan.contexts[rule.code]) for rule in rules]
    metadata = Metadata(module)
    for instance in instances:
        instance.tree_metadata = metadata
    crashes = _visit(module, metadata, instances, relpath)
    if not any(rule.violations for rule in instances):
        return [], crashes, module, []
    positions = metadata.resolve(PositionProvider)
    lines = data.decode(module.encoding, errors="replace").splitlines()
    findings, violations = [], []
    for rule in instances:
        if any(crash.code == rule.code for crash in crashes):
            continue
        for violation in rule.violations:
            finding = _to_finding(relpath, rule, violation, positions, module, lines)
            if not _suppressed(finding, lines):
                findings.append(finding)
                violations.append(violation)
    return _with_occurrences(findings), crashes, module, violations


def _visit(module: cst.Module, metadata: Metadata, instances: list[LintRule], relpath: str) -> list[RuleCrash]:
    """One batched traversal; if it raises, run rules alone to find the culprit."""
    try:
        for instance in instances:
            metadata.attach(instance)
        visit_batched(module, instances)
        return []
    except Exception:  # noqa: BLE001 - a rule bug must not stop the run
        pass
    crashes = []
    for rule in instances:
        rule.violations.clear()
        try:
            metadata.attach(rule)
            visit_batched(module, [rule])
        except Exception as exc:  # noqa: BLE001
            where = traceback.extract_tb(exc.__traceback__)[-1]
            crashes.append(
                RuleCrash(relpath, rule.code, f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})")
            )
            rule.violations.clear()
    return crashes


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


def _cpython_check(data: bytes, relpath: str) -> tuple[str, Exception | None]:
    """CPython's parser first: fast, the best messages ("Did you mean print(...)?"),
    and a guard against input so deep that libcst should not see it."""
    try:
        compile(data, relpath, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if any(limit in str(exc.msg) for limit in _NESTING_LIMITS):
            return _TOO_COMPLEX, exc
        return _SYNTAX, exc  # libcst may still know newer syntax than this interpreter
    except (RecursionError, MemoryError) as exc:
        return _TOO_COMPLEX, exc
    except ValueError as exc:  # e.g. null bytes
        return _SYNTAX, exc
    return _OK, None


def _libcst_parses(data: bytes) -> bool:
    try:
        cst.parse_module(data)
        return True
    except Exception:  # noqa: BLE001
        return False


def _syntax_error(relpath: str, error: Exception | None) -> list[Finding]:
    """The NA000 finding, from CPython's error when there is one, else libcst's."""
    line, col = 1, 1
    if isinstance(error, SyntaxError) and error.lineno:
        line, col = error.lineno, max(error.offset or 1, 1)
        message = f"cannot parse: {error.msg}"
    elif isinstance(error, cst.ParserSyntaxError):
        line, col = error.raw_line, error.raw_column + 1
        message = f"cannot parse: {error.message}"
    elif isinstance(error, (RecursionError, MemoryError)):
        message = "cannot parse: too deeply nested for CPython to compile"
    else:
        message = f"cannot parse: {type(error).__name__}: {error}" if error else "cannot parse"
    rule = rule_for("NA000")
    assert rule is not None
    return [
        Finding("NA000", rule.name, rule.severity, relpath, line, col, line, col, message,
                fingerprint=_hash("NA000", relpath))
    ]


def _to_finding(relpath, rule: LintRule, violation: Violation, positions, module, lines) -> Finding:
    where = positions[violation.node]
    line, col = where.start.line, where.start.column + 1
    text = " ".join(module.code_for_node(violation.node).split())
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        path=relpath,
        line=line,
        col=col,
        end_line=where.end.line,
        end_col=where.end.column + 1,
        message=violation.message,
        fix=violation.fix_title,
        fix_safe=violation.replacement is not None and not violation.unsafe_fix,
        fingerprint=_hash(rule.code, relpath, _enclosing_scope(lines, line), text),
    )


def _with_occurrences(findings: list[Finding]) -> list[Finding]:
    """Two identical findings in one scope get distinct fingerprints, by order."""
    seen: dict[str, int] = {}
    unique = []
    for finding in sorted(findings, key=lambda f: f.sort_key):
        count = seen.get(finding.fingerprint, 0)
        seen[finding.fingerprint] = count + 1
        if count:
            finding = replace(finding, fingerprint=_hash(finding.fingerprint, str(count)))
        unique.append(finding)
    return unique


def _enclosing_scope(lines: list[str], line: int) -> str:
    """`Class.method` path of the def/class around a line, from indentation alone."""
    names: list[str] = []
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip()) if line <= len(lines) else 0
    for text in reversed(lines[: line - 1]):
        match = _SCOPE.match(text)
        if match and len(match.group(1)) < indent:
            names.append(match.group(2))
            indent = len(match.group(1))
            if indent == 0:
                break
    return ".".join(reversed(names))


def _suppressed(finding: Finding, lines: list[str]) -> bool:
    for number in {finding.line, finding.end_line}:
        if number > len(lines):
            continue
        for match in _NOQA.finditer(lines[number - 1].encode("utf-8", "replace")):
            codes = match.group("codes")
            if codes is None:
                return True
            if finding.code.encode() in re.split(rb"[\s,]+", codes.upper()):
                return True
    return False


def _hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


class _Replacer(cst.CSTTransformer):
    """Puts each fix's replacement in place of its node (one fix per node and pass:
    another fix of the same node applies in the next pass)."""

    def __init__(self, violations: list[Violation]) -> None:
        super().__init__()
        self.fixes = {id(v.node): v for v in violations}
        self.applied: list[Violation] = []

    def on_leave(self, original_node, updated_node):
        fix = self.fixes.get(id(original_node))
        if fix is not None and fix.node is original_node:
            self.applied.append(fix)
            return fix.replacement
        return updated_node


def _with_imports(module: cst.Module, applied: list[Violation]) -> cst.Module:
    """Adds the imports the applied fixes use (merged into an existing `from m import ...`)."""
    wanted = dict.fromkeys(item for fix in applied for item in fix.imports)
    if not wanted:
        return module
    # Only a fix needs the codemod machinery: keep it out of a plain lint's start-up.
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, ImportItem

    items = [ImportItem(name, obj_name=obj) for name, obj in wanted]
    return AddImportsVisitor(CodemodContext(), items).transform_module(module)
