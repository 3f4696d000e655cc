"""Rendering findings: text (ruff-like), json (SPEC fields), sarif (2.1.0) and github."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import PurePath

import click

from nonatomic import __version__
from nonatomic.lint.findings import Finding
from nonatomic.rules.lint import all_rules

FORMATS = ("text", "json", "sarif", "github")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_SEVERITY_COLOUR = {"error": "red", "warning": "yellow", "info": "blue"}


def render(findings: list[Finding], fmt: str, *, colour: bool = False, fixes_hidden: int = 0) -> str:
    return {"text": text, "json": as_json, "sarif": sarif, "github": github}[fmt](
        findings, colour=colour, fixes_hidden=fixes_hidden
    )


def text(findings: list[Finding], *, colour: bool = False, fixes_hidden: int = 0) -> str:
    def style(value: str, **kw) -> str:
        return click.style(value, **kw) if colour else value

    lines = []
    for f in findings:
        mark = " [*]" if f.fix_safe else ""
        lines.append(
            f"{style(f.path, bold=True)}:{f.line}:{f.col}: "
            f"{style(f.code, fg=_SEVERITY_COLOUR[f.severity], bold=True)}{mark} {f.message}"
        )
    if findings:
        noun = "finding" if len(findings) == 1 else "findings"
        lines.append(f"Found {len(findings)} {noun}.")
        safe = sum(f.fix_safe for f in findings)
        if safe:
            lines.append(f"[*] {safe} fixable with `--fix`.")
        if fixes_hidden:
            lines.append(f"({fixes_hidden} more fixes available with `--fix --unsafe-fixes`.)")
    return "\n".join(lines) + ("\n" if lines else "")


def as_json(findings: list[Finding], **_) -> str:
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


def github(findings: list[Finding], **_) -> str:
    out = []
    for f in findings:
        command = {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
        out.append(
            f"::{command} file={_escape_property(f.path)},line={f.line},col={f.col},"
            f"endLine={f.end_line},endColumn={f.end_col},title={_escape_property(f.code)}::"
            f"{_escape_data(f'{f.code} {f.message}')}"
        )
    return "\n".join(out) + ("\n" if out else "")


def statistics(findings: list[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    fixable = Counter(f.code for f in findings if f.fix)
    rows = [
        f"{count:>5}  {code:<6} {name}{'  [fix]' if fixable[code] else ''}"
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return "\n".join(rows) + ("\n" if rows else "")


def _related_locations(f: Finding) -> dict:
    if not f.related:
        return {}
    uri = {"uri": PurePath(f.path).as_posix(), "uriBaseId": "%SRCROOT%"}
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


def sarif(findings: list[Finding], **_) -> str:
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
                "fullDescription": {"text": rule.summary()},
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
                        "artifactLocation": {"uri": PurePath(f.path).as_posix(), "uriBaseId": "%SRCROOT%"},
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
