"""`nonatomic lint`, `nonatomic rules` and `nonatomic explain`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nonatomic.cli.common import codes, color_option, progress, wants_color, write
from nonatomic.config import ConfigError


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", help="Comma list of rule codes or prefixes to enable (NA1 = NA1xx).")
@click.option("--ignore", help="Comma list of rule codes or prefixes to disable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report to FILE.")
@click.option("--show-source", is_flag=True, help="text: show each finding's source lines, the span underlined.")
@color_option
@click.option("--stdin-filename", help="With `-` as PATH: the name standard input is linted under.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that change behaviour.")
@click.option("--diff", is_flag=True, help="Show the fixes as a diff; change nothing.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes [default: CPUs].")
@click.option("--no-cache", is_flag=True, help="Do not read or write .nonatomic_cache/.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with findings.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of findings (a JSON list with --format json).")
@click.option("--config", "config_file", type=click.Path(path_type=Path),
              help="pyproject.toml ([tool.nonatomic]) or nonatomic.toml (top-level keys) to read.")
@click.option("--baseline", type=click.Path(path_type=Path), help="Report only findings not in this baseline.")
@click.option("--write-baseline", type=click.Path(path_type=Path), help="Record today's findings and exit 0.")
def lint(paths, select, ignore, fmt, output, show_source, color, stdin_filename, fix, unsafe_fixes, diff, jobs,
         no_cache, exit_zero, statistics, config_file, baseline, write_baseline) -> None:
    """Lint agent code for non-atomic tool-call hazards (default PATH: ., `-`: standard input)."""
    from nonatomic.lint import baseline as baselines
    from nonatomic.lint.config import load_settings
    from nonatomic.lint.engine import lint_paths, lint_stdin
    from nonatomic.lint.formats import checked_line, plural, render
    from nonatomic.lint.formats import statistics as render_statistics

    paths = list(paths) or ([Path("-")] if stdin_filename else [Path(".")])
    from_stdin = Path("-") in paths
    if from_stdin and len(paths) > 1:
        raise click.UsageError("`-` (standard input) cannot be combined with other paths")
    for path in paths:
        if not from_stdin and not path.exists():
            raise click.UsageError(f"{path}: no such file or directory")
    start = Path(stdin_filename) if from_stdin and stdin_filename else (Path(".") if from_stdin else paths[0])
    try:
        settings = load_settings(
            start=start if start.exists() else Path("."), config_file=config_file,
            select=codes(select), ignore=codes(ignore),
        )
        known = baselines.read_baseline(baseline) if baseline else None
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    for warning in settings.warnings:
        click.echo(f"warning: {warning}", err=True)

    fixing = fix or diff
    if from_stdin:
        source = click.get_binary_stream("stdin").read()
        report = lint_stdin(source, stdin_filename, settings, fix=fixing, unsafe_fixes=unsafe_fixes)
    else:
        source = None
        with progress("linting", min_total=200) as advance:
            report = lint_paths(
                paths, settings, jobs=jobs, use_cache=not no_cache, fix=fixing,
                unsafe_fixes=unsafe_fixes, progress=advance,
            )
    for crash in report.crashes:
        click.echo(f"error: {crash.path}: rule {crash.code} failed: {crash.error}", err=True)
    for path, note in report.notes:
        click.echo(f"note: {path}: {note}", err=True)
    if not report.files:
        click.echo(f"warning: no Python file under {', '.join(map(str, paths))}", err=True)

    if diff:
        import difflib  # only --diff needs it: kept off the one-file pre-commit path

        for path, (before, after) in sorted(report.fixed.items()):
            click.echo("".join(difflib.unified_diff(
                before.decode("utf-8", "replace").splitlines(True),
                after.decode("utf-8", "replace").splitlines(True),
                f"a/{path}", f"b/{path}",
            )), nl=False)
        _say_fixes(0, _hidden_fixes(report.findings, unsafe_fixes))
        sys.exit(1 if report.fixed else (2 if report.crashes else 0))
    if fix:
        if from_stdin:  # as ruff: the (fixed) source on stdout, the findings on stderr
            click.get_binary_stream("stdout").write(next(iter(report.fixed.values()), (source, source))[1])
        else:
            for path, (_, after) in report.fixed.items():
                Path(path).write_bytes(after)
        _say_fixes(report.fixes_applied, _hidden_fixes(report.findings, unsafe_fixes), files=len(report.fixed))

    findings = report.findings
    if write_baseline:
        write(baselines.baseline_text(findings), write_baseline)  # parent directories created
        click.echo(f"Wrote {plural(len(findings), 'finding')} to {write_baseline}.", err=True)
        sys.exit(2 if report.crashes else 0)
    if known is not None:
        findings = baselines.new_findings(findings, known)

    colour = wants_color(color, to_file=output is not None)
    if statistics:
        text = render_statistics(findings, fmt)
    else:
        # after --fix the hidden fixes were already counted above
        hidden = 0 if fix else _hidden_fixes(findings, unsafe_fixes)
        text = render(findings, fmt, colour=colour, fixes_hidden=hidden, files=report.files,
                      source=_source_lines(source) if show_source else None)
    # with `--fix -` standard output carries the fixed source
    write(text, output, color=colour, err=fix and from_stdin)
    if fmt != "text" or statistics:  # the text report ends with it; machine formats stay parseable
        click.echo(checked_line(report.files, findings), err=True)
    if report.crashes:
        sys.exit(2)
    sys.exit(0 if exit_zero or not findings else 1)


def _hidden_fixes(findings, unsafe_fixes: bool) -> int:
    """Fixes only `--unsafe-fixes` applies: said whenever fixing, since `--fix` alone may change nothing."""
    return 0 if unsafe_fixes else sum(1 for f in findings if f.fix and not f.fix_safe)


def _say_fixes(applied: int, hidden: int, *, files: int = 0) -> None:
    from nonatomic.lint.formats import plural

    if applied:
        click.echo(f"Fixed {plural(applied, 'finding')} in {plural(files, 'file')}.", err=True)
    if hidden:
        click.echo(f"{plural(hidden, 'fix', 'fixes')} available with --unsafe-fixes.", err=True)


def _source_lines(stdin_source: bytes | None):
    """The lines of a finding's file for --show-source (standard input's when linting `-`)."""
    cache: dict[str, list[str] | None] = {}

    def lines_of(path: str) -> list[str] | None:
        if path not in cache:
            try:
                data = stdin_source if stdin_source is not None else Path(path).read_bytes()
                cache[path] = data.decode("utf-8", "replace").splitlines()
            except OSError:
                cache[path] = None
        return cache[path]

    return lines_of


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
