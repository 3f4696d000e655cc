"""Every rule's own VALID and INVALID cases, collected from the rule classes (as Fixit does)."""

from __future__ import annotations

import inspect
from pathlib import Path

import libcst as cst
import pytest

from nonatomic.rules.lint import all_rules

VALID = [
    pytest.param(rule, case, id=f"{rule.code}-valid-{i}")
    for rule in all_rules()
    for i, case in enumerate(rule.VALID)
]
INVALID = [
    pytest.param(rule, case, id=f"{rule.code}-invalid-{i}")
    for rule in all_rules()
    for i, case in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "code"), VALID)
def test_valid_case_is_not_flagged(lint, rule, code):
    findings = lint(code, select=[rule.code]).findings
    assert [f for f in findings if f.code in (rule.code, "NA000")] == []


@pytest.mark.parametrize(("rule", "case"), INVALID)
def test_invalid_case_is_flagged(lint, rule, case):
    findings = [f for f in lint(case.code, select=[rule.code]).findings if f.code == rule.code]
    assert findings, f"{rule.code} did not flag:\n{case.code}"
    if case.line is not None:
        assert case.line in [f.line for f in findings]
    at_line = [f for f in findings if case.line is None or f.line == case.line]
    assert {f.severity for f in at_line} == {case.severity or rule.severity}


@pytest.mark.parametrize(("rule", "case"), [p for p in INVALID if p.values[1].fixed is not None])
def test_fix_gives_expected_source_reparses_and_is_idempotent(lint, rule, case):
    fixed = lint(case.code, select=[rule.code], fix=True).fixed
    assert fixed is not None and fixed.decode() == case.fixed
    cst.parse_module(fixed)
    assert lint(case.fixed, select=[rule.code], fix=True).fixed is None


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_is_documented_in_ruff_style(rule):
    doc = rule.documentation()
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert section in doc, f"{rule.code} lacks {section!r}"
    assert rule.VALID and rule.INVALID, f"{rule.code} needs VALID and INVALID cases"
    assert rule.severity in ("error", "warning", "info")


def _block(doc: str, section: str) -> str:
    """The first ```python block under a documentation section."""
    body = doc.split(section, 1)[1].split("\n## ", 1)[0]
    return body.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_documented_example_is_flagged_and_its_fix_is_clean(lint, rule):
    doc = rule.documentation()
    bad, good = _block(doc, "## Example"), _block(doc, "## Use instead")
    assert [f for f in lint(bad, select=[rule.code]).findings if f.code == rule.code], (
        f"{rule.code}'s Example is not flagged:\n{bad}"
    )
    assert [f for f in lint(good, select=[rule.code]).findings if f.code == rule.code] == [], (
        f"{rule.code}'s Use instead is flagged:\n{good}"
    )


class _CaseStrings(cst.CSTVisitor):
    """The string literals of a rule module's VALID and INVALID lists, as spelled."""

    def __init__(self) -> None:
        self.spelled: list[str] = []
        self.inside = False

    def visit_Assign(self, node: cst.Assign) -> None:
        self.inside = any(isinstance(t.target, cst.Name) and t.target.value in ("VALID", "INVALID")
                          for t in node.targets)

    def leave_Assign(self, node: cst.Assign) -> None:
        self.inside = False

    def visit_Arg(self, node: cst.Arg) -> bool:
        # `severity="info"` is a setting of the case, not a source
        return node.keyword is None or node.keyword.value in ("code", "fixed")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.inside:
            self.spelled.append(node.value)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        if self.inside:
            self.spelled.append(cst.Module([]).code_for_node(node))
        return False


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_cases_are_spelled_one_way(rule):
    # triple-quoted, opening with a newline, indented with the code around them (base.source)
    strings = _CaseStrings()
    cst.parse_module(Path(inspect.getfile(rule)).read_text("utf-8")).visit(strings)
    assert len(strings.spelled) >= len(rule.VALID) + len(rule.INVALID)
    assert [s for s in strings.spelled if not s.startswith('"""\n')] == []
