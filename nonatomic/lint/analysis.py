"""The libcst part of linting one file: parse, one batched walk of the rules that
can fire, findings with positions and fingerprints, suppressions and fixes.

Imported only when some file needs it: a run whose files no rule's trigger passes
never loads libcst or a rule module.
"""

from __future__ import annotations

import ast
import math
import re
import time
import traceback
from dataclasses import replace

import libcst as cst
from libcst.metadata import PositionProvider

from nonatomic.lint.config import LintSettings
from nonatomic.lint.findings import Finding, OverBudget, RuleCrash, Unparsable, fingerprint
from nonatomic.lint.reachability import dead_spans, within
from nonatomic.rules.lint import rule_for
from nonatomic.rules.lint.base import LintRule, RuleContext, Violation
from nonatomic.rules.lint.semantics.callees import CalleeProvider
from nonatomic.rules.lint.semantics.tool_config import constructor_types
from nonatomic.rules.lint.tree.positions import Locator
from nonatomic.rules.lint.tree.walk import Metadata, visit_batched

_NOQA = re.compile(
    rb"#\s*noqa(?::[\s]*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_SCOPE = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+(\w+)")


class Analysis:
    """The rule classes and their contexts: built once per process, on first need."""

    def __init__(self, settings: LintSettings) -> None:
        self.contexts = {
            code: RuleContext(options=settings.options_for(code), settings=settings) for code in settings.enabled
        }
        CalleeProvider.constructors = constructor_types(settings.tools)

    def lint(self, relpath: str, data: bytes, codes: list[str], tree: ast.Module | None = None,
             deadline: float = math.inf):
        """(findings, crashes, module, violations) of the rules `codes`; raises
        Unparsable when libcst cannot parse `data`, OverBudget once past `deadline`
        (a `time.thread_time()` value, read in the thread that lints).  `tree`,
        CPython's tree of `data`, places findings without generating the whole module."""
        try:
            module = cst.parse_module(data)
        except Exception as exc:  # noqa: BLE001 - whatever libcst raises, it is NA000
            raise Unparsable(exc) from exc
        _check(deadline)  # libcst's parser cannot be interrupted: the first check is after it
        instances = [rule_for(code)(self.contexts[code]) for code in codes]
        metadata = Metadata(module)
        metadata.positions = Locator(module, tree, data, lambda: metadata.resolve(PositionProvider))
        for instance in instances:
            instance.tree_metadata = metadata
        crashes = _visit(module, metadata, instances, relpath, Deadline(deadline))
        if not any(rule.violations for rule in instances):
            return [], crashes, module, []
        _check(deadline)
        positions = metadata.positions
        positions.place(
            node for rule in instances for violation in rule.violations for node in (violation.node, *violation.related)
        )
        _check(deadline)
        lines = data.decode(module.encoding, errors="replace").splitlines()
        dead = dead_spans(tree) if tree is not None else []
        findings, violations = [], []
        for rule in instances:
            if any(crash.code == rule.code for crash in crashes):
                continue
            for violation in rule.violations:
                finding = _to_finding(relpath, rule, violation, positions, module, lines)
                if not _suppressed(finding, lines) and not within(dead, finding.line):
                    findings.append(finding)
                    violations.append(violation)
        return _with_occurrences(findings), crashes, module, violations


def parses(data: bytes) -> bool:
    try:
        cst.parse_module(data)
        return True
    except Exception:  # noqa: BLE001
        return False


def fixed(module: cst.Module, fixes: list[Violation]) -> bytes:
    """The source with `fixes` applied, and the imports they use added."""
    replacer = _Replacer(fixes)
    return _with_imports(module.visit(replacer), replacer.applied).bytes


class Deadline(cst.BatchableCSTVisitor):
    """Stops a batched walk (OverBudget) once `time.thread_time()` passes `deadline`:
    checked at each statement line and call, so the clock is read on a small share
    of the nodes."""

    def __init__(self, deadline: float) -> None:
        super().__init__()
        self.deadline = deadline

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        _check(self.deadline)

    visit_Call = visit_SimpleStatementLine  # type: ignore[assignment]


def _check(deadline: float) -> None:
    if time.thread_time() > deadline:
        raise OverBudget


def _visit(module: cst.Module, metadata: Metadata, instances: list[LintRule], relpath: str,
           deadline: Deadline) -> list[RuleCrash]:
    """One batched traversal; if it raises, run rules alone to find the culprit."""
    try:
        for instance in instances:
            metadata.attach(instance)
        visit_batched(module, [*instances, deadline])
        return []
    except OverBudget:
        raise
    except Exception:  # noqa: BLE001 - a rule bug must not stop the run
        pass
    crashes = []
    for rule in instances:
        rule.violations.clear()
        try:
            metadata.attach(rule)
            visit_batched(module, [rule, deadline])
        except OverBudget:
            raise
        except Exception as exc:  # noqa: BLE001
            where = traceback.extract_tb(exc.__traceback__)[-1]
            crashes.append(
                RuleCrash(relpath, rule.code, f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})")
            )
            rule.violations.clear()
    return crashes


def _to_finding(relpath, rule: LintRule, violation: Violation, positions, module, lines) -> Finding:
    where = positions[violation.node]
    line, col = where.start.line, where.start.column + 1
    text = " ".join(module.code_for_node(violation.node).split())
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=violation.severity or rule.severity,
        path=relpath,
        line=line,
        col=col,
        end_line=where.end.line,
        end_col=where.end.column + 1,
        message=violation.message,
        fix=violation.fix_title,
        fix_safe=violation.replacement is not None and not violation.unsafe_fix,
        fingerprint=fingerprint(rule.code, relpath, _enclosing_scope(lines, line), text),
        related=tuple(
            (positions[node].start.line, positions[node].start.column + 1) for node in violation.related
        ),
    )


def _with_occurrences(findings: list[Finding]) -> list[Finding]:
    """Two identical findings in one scope get distinct fingerprints, by order."""
    seen: dict[str, int] = {}
    unique = []
    for finding in sorted(findings, key=lambda f: f.sort_key):
        count = seen.get(finding.fingerprint, 0)
        seen[finding.fingerprint] = count + 1
        if count:
            finding = replace(finding, fingerprint=fingerprint(finding.fingerprint, str(count)))
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
