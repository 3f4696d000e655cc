"""`nonatomic lint`, `nonatomic rules` and `nonatomic explain`."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import click

from nonatomic.cli.common import codes, progress, write
from nonatomic.config import ConfigError


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", help="Comma list of rule codes or prefixes to enable (NA1 = NA1xx).")
@click.option("--ignore", help="Comma list of rule codes or prefixes to disable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report to FILE.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that change behaviour.")
@click.option("--diff", is_flag=True, help="Show the fixes as a diff; change nothing.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes [default: CPUs].")
@click.option("--no-cache", is_flag=True, help="Do not read or write .nonatomic_cache/.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with findings.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of findings.")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="pyproject.toml to read.")
@click.option("--baseline", type=click.Path(path_type=Path), help="Report only findings not in this baseline.")
@click.option("--write-baseline", type=click.Path(path_type=Path), help="Record today's findings and exit 0.")
def lint(paths, select, ignore, fmt, output, fix, unsafe_fixes, diff, jobs, no_cache, exit_zero,
         statistics, config_file, baseline, write_baseline) -> None:
    """Lint agent code for non-atomic tool-call hazards (default PATH: .)."""
    from nonatomic.lint import baseline as baselines
    from nonatomic.lint.config import load_settings
    from nonatomic.lint.engine import lint_paths
    from nonatomic.lint.formats import render
    from nonatomic.lint.formats import statistics as render_statistics
    from nonatomic.lint.runner import MAX_LINE_BYTES

    paths = list(paths) or [Path(".")]
    for path in paths:
        if not path.exists():
            raise click.UsageError(f"{path}: no such file or directory")
    try:
        settings = load_settings(
            start=paths[0], config_file=config_file, select=codes(select), ignore=codes(ignore)
        )
        known = baselines.read_baseline(baseline) if baseline else None
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc

    fixing = fix or diff
    with progress("linting", min_total=200) as advance:
        report = lint_paths(
            paths, settings, jobs=jobs, use_cache=not no_cache, fix=fixing,
            unsafe_fixes=unsafe_fixes, progress=advance,
        )
    for crash in report.crashes:
        click.echo(f"error: {crash.path}: rule {crash.code} failed: {crash.error}", err=True)
    for path in report.too_large:
        click.echo(
            f"note: {path}: larger than max-file-bytes ({settings.max_file_bytes}) or with a line over "
            f"{MAX_LINE_BYTES} bytes: only its syntax was checked",
            err=True,
        )

    if diff:
        for path, (before, after) in sorted(report.fixed.items()):
            click.echo("".join(difflib.unified_diff(
                before.decode("utf-8", "replace").splitlines(True),
                after.decode("utf-8", "replace").splitlines(True),
                f"a/{path}", f"b/{path}",
            )), nl=False)
        sys.exit(1 if report.fixed else (2 if report.crashes else 0))
    if fix:
        for path, (_, after) in report.fixed.items():
            Path(path).write_bytes(after)
        if report.fixed:
            click.echo(f"Fixed {report.fixes_applied} finding(s) in {len(report.fixed)} file(s).", err=True)

    findings = report.findings
    if write_baseline:
        baselines.write_baseline(write_baseline, findings)
        click.echo(f"Wrote {len(findings)} finding(s) to {write_baseline}.", err=True)
        sys.exit(2 if report.crashes else 0)
    if known is not None:
        findings = baselines.new_findings(findings, known)

    hidden = 0 if unsafe_fixes else sum(1 for f in findings if f.fix and not f.fix_safe)
    colour = output is None and sys.stdout.isatty()
    text = render_statistics(findings) if statistics else render(findings, fmt, colour=colour, fixes_hidden=hidden)
    write(text, output, color=colour)
    if report.crashes:
        sys.exit(2)
    sys.exit(0 if exit_zero or not findings else 1)


def _catalogue() -> list[tuple[str, str, str, bool, str]]:
    """(code, name, severity, default on, documentation) of every lint rule and replay detector."""
    from nonatomic.rules.lint import all_rules
    from nonatomic.rules.replay import DETECTORS

    entries = [(r.code, r.name, r.severity, r.default_on, r.documentation()) for r in all_rules()]
    entries += [(d.code, d.name, d.severity, d.default_on, d.doc) for d in DETECTORS.values()]
    return entries


@click.command()
def rules() -> None:
    """List the lint rules (NA) and replay detectors (NR) with their defaults."""
    click.echo(f"{'code':<6}  {'name':<40} {'severity':<8} default")
    for code, name, severity, default_on, _ in _catalogue():
        click.echo(f"{code:<6}  {name:<40} {severity:<8} {'on' if default_on else 'off'}")


@click.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a rule or detector: what it finds, why it matters, an example, what to do instead."""
    for entry_code, name, severity, default_on, doc in _catalogue():
        if entry_code == code.strip().upper():
            click.echo(f"# {entry_code} {name}  ({severity}, default {'on' if default_on else 'off'})\n")
            click.echo(doc.strip())
            return
    raise click.UsageError(f"unknown code {code!r}; see `nonatomic rules`")
