"""Rendering findings: text (ruff-like), json (SPEC fields), sarif (2.1.0) and github."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path, PurePath
from urllib.parse import quote

import click

from nonatomic import __version__
from nonatomic.lint.docs import help_uri
from nonatomic.lint.findings import Finding
from nonatomic.rules.lint import all_rules
from nonatomic.rules.severity import COLOURS as SEVERITY_COLOURS

FORMATS = ("text", "json", "sarif", "github")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render(findings: list[Finding], fmt: str, *, colour: bool = False, fixes_hidden: int = 0,
           files: int | None = None, source: SourceLines | None = None) -> str:
    """The report in `fmt`; `files` (how many were checked) ends a text report, and
    `source` gives text findings their code frames (`--show-source`)."""
    if fmt == "text":
        return text(findings, colour=colour, fixes_hidden=fixes_hidden, files=files, source=source)
    return {"json": as_json, "sarif": sarif, "github": github}[fmt](findings)


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """`1 file`, `2 files`, `1 fix`, `3 fixes`."""
    return f"{count} {noun if count == 1 else plural_noun or noun + 's'}"


def checked_line(files: int, findings: list[Finding]) -> str:
    """What a run checked: `Checked 12 files, no findings.`"""
    return f"Checked {plural(files, 'file')}, {plural(len(findings), 'finding') if findings else 'no findings'}."


def text(findings: list[Finding], *, colour: bool = False, fixes_hidden: int = 0, files: int | None = None,
         source: SourceLines | None = None) -> str:
    def style(value: str, **kw) -> str:
        return click.style(value, **kw) if colour else value

    lines = []
    for f in findings:
        mark = " [*]" if f.fix_safe else ""
        lines.append(
            f"{style(f.path, bold=True)}:{f.line}:{f.col}: "
            f"{style(f.code, fg=SEVERITY_COLOURS[f.severity], bold=True)}{mark} {f.message}"
        )
        if source is not None and (file_lines := source(f.path)) is not None:
            lines += _frame(f, file_lines, style)
    if files is not None:
        lines.append(checked_line(files, findings))
    elif findings:
        lines.append(f"Found {plural(len(findings), 'finding')}.")
    safe = sum(f.fix_safe for f in findings)
    if safe:
        lines.append(f"[*] {safe} fixable with `--fix`.")
    if fixes_hidden:
        more = "more " if safe else ""
        lines.append(f"({plural(fixes_hidden, more + 'fix', more + 'fixes')} available with `--fix --unsafe-fixes`.)")
    return "\n".join(lines) + ("\n" if lines else "")


SourceLines = Callable[[str], "list[str] | None"]
"""A path's lines (None when it cannot be read): what code frames are cut from."""
_CONTEXT_LINES = 2  # around the flagged lines, as ruff's full output


def _printable(line: str) -> str:
    """A source line safe to print on a terminal: control characters (escape
    sequences included) shown as U+FFFD, a tab as one space (columns stay aligned)."""
    return "".join(c if c.isprintable() else " " if c == "\t" else "\ufffd" for c in line)


def _frame(f: Finding, file_lines: list[str], style) -> list[str]:
    """ruff's `full` code frame: numbered lines around the finding, its span underlined."""
    first = max(f.line - _CONTEXT_LINES, 1)
    last = min(max(f.end_line, f.line) + _CONTEXT_LINES, len(file_lines))
    width = len(str(last))
    gutter = style(" " * width + " |", fg="blue", bold=True)
    out = [gutter]
    for number in range(first, last + 1):
        line = _printable(file_lines[number - 1])
        out.append(f"{style(f'{number:>{width}} |', fg='blue', bold=True)} {line}".rstrip())
        if f.line <= number <= max(f.end_line, f.line):
            start = f.col - 1 if number == f.line else len(line) - len(line.lstrip())
            end = max(f.end_col - 1 if number == f.end_line else len(line), start + 1)
            label = f" {f.code}" if number == max(f.end_line, f.line) else ""
            marks = style("^" * (end - start) + label, fg=SEVERITY_COLOURS[f.severity], bold=True)
            out.append(f"{gutter} {' ' * start}{marks}")
    out.append(gutter)
    return out


def as_json(findings: list[Finding]) -> str:
    keys = ("code", "name", "severity", "path", "line", "col", "end_line", "end_col", "message", "fix", "fingerprint")
    return json.dumps(
        [{**{k: getattr(f, k) for k in keys}, "related": [{"line": l, "col": c} for l, c in f.related]}
         for f in findings],
        indent=2,
    ) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding]) -> str:
    out = []
    for f in findings:
        command = {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
        out.append(
            f"::{command} file={_escape_property(f.path)},line={f.line},col={f.col},"
            f"endLine={f.end_line},endColumn={f.end_col},title={_escape_property(f.code)}::"
            f"{_escape_data(f'{f.code} {f.message}')}"
        )
    return "\n".join(out) + ("\n" if out else "")


def statistics(findings: list[Finding], fmt: str = "text") -> str:
    """Counts per rule, most frequent first: a table, or with `json` a list of objects."""
    counts = Counter((f.code, f.name) for f in findings)
    fixable = Counter(f.code for f in findings if f.fix)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        rows = [{"code": code, "name": name, "count": count, "fixable": fixable[code]} for (code, name), count in ordered]
        return json.dumps(rows, indent=2) + "\n"
    lines = [
        f"{count:>5}  {code:<6} {name}{'  [fix]' if fixable[code] else ''}"
        for (code, name), count in ordered
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def _artifact(path: str) -> dict:
    """A SARIF artifact location: a percent-encoded URI relative to the checkout
    (`%SRCROOT%`), or a file: URI for a file outside it."""
    pure = PurePath(path)
    if pure.is_absolute() or pure.parts[:1] == ("..",):
        return {"uri": Path(path).resolve().as_uri()}
    return {"uri": quote(pure.as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def _related_locations(f: Finding) -> dict:
    if not f.related:
        return {}
    uri = _artifact(f.path)
    return {
        "relatedLocations": [
            {
                "id": number,
                "physicalLocation": {"artifactLocation": uri, "region": {"startLine": line, "startColumn": col}},
                "message": {"text": f"another site of this {f.code} finding"},
            }
            for number, (line, col) in enumerate(f.related)
        ]
    }


def sarif(findings: list[Finding]) -> str:
    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    driver = {
        "name": "nonatomic",
        "version": __version__,
        "informationUri": "https://pypi.org/project/nonatomic/",
        "rules": [
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary()},
                "fullDescription": {"text": rule.description()},
                **({"helpUri": uri} if (uri := help_uri(rule)) else {}),
                "help": {"text": rule.documentation(), "markdown": rule.documentation()},
                "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity], "enabled": rule.default_on},
                "properties": {"tags": ["reliability", "agents"]},
            }
            for rule in rules
        ],
    }
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact(f.path),
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.col,
                            "endLine": f.end_line,
                            "endColumn": f.end_col,
                        },
                    }
                }
            ],
            "partialFingerprints": {"nonatomicFingerprint/v1": f.fingerprint},
            **_related_locations(f),
        }
        for f in findings
    ]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }
    return json.dumps(log, indent=2) + "\n"
