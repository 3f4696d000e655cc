"""The rule pages in docs/rules/: one Markdown page per lint rule, generated from
the rule's docstring, and the stable address SARIF's `helpUri` gives each rule.

Regenerate after editing a rule's documentation (a test fails until you do):

    python -m nonatomic.lint.docs docs/rules
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

from nonatomic import __version__
from nonatomic.rules.lint import all_rules

DOCS_DIR = "docs/rules"
"""Where the pages live in the repository."""


def anchor(rule) -> str:
    """The page title's anchor as GitHub renders it (`# NA101: retry-...` -> `na101-retry-...`)."""
    return f"{rule.code}-{rule.name}".lower()


def page(rule) -> str:
    """A rule's page: its title, defaults and options, then its documentation."""
    default = "on" if rule.default_on else f"off (enable with `--select {rule.code}`)"
    return (
        f"# {rule.code}: {rule.name}\n\n"
        f"Severity: {rule.severity}. Default: {default}. "
        f"Suppress with `# noqa: {rule.code}`.\n\n"
        f"{rule.documentation()}\n"
    )


def index() -> str:
    """docs/rules/README.md: every rule with its default and first sentence."""
    rows = [
        f"| [{rule.code}]({rule.code}.md#{anchor(rule)}) | {rule.name} | {'on' if rule.default_on else 'off'} "
        f"| {_cell(rule.summary())} |"
        for rule in all_rules()
    ]
    head = ["# Lint rules", "", "Generated from the rules' documentation (`python -m nonatomic.lint.docs docs/rules`).",
            "", "| code | name | default | flags |", "|---|---|---|---|"]
    return "\n".join([*head, *rows]) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def pages() -> dict[str, str]:
    """File name -> content of every page under docs/rules/."""
    return {"README.md": index(), **{f"{rule.code}.md": page(rule) for rule in all_rules()}}


@lru_cache(maxsize=1)
def _source_url() -> str | None:
    """The repository's address, from the installed package's `Source` project URL."""
    from importlib import metadata  # only SARIF and the docs need it: a tenth of a one-file lint

    try:
        urls = metadata.metadata("nonatomic").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "source":
            return url.strip().rstrip("/")
    return None


def help_uri(rule) -> str | None:
    """The rule's page at this version's tag: an address that stays right for this release."""
    base = _source_url()
    if base is None:
        return None
    return f"{base}/blob/v{__version__}/{DOCS_DIR}/{rule.code}.md#{anchor(rule)}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: python -m nonatomic.lint.docs {DOCS_DIR}", file=sys.stderr)
        return 2
    directory = Path(argv[0])
    directory.mkdir(parents=True, exist_ok=True)
    written = pages()
    for name, content in written.items():
        (directory / name).write_text(content, "utf-8")
    print(f"wrote {len(written)} pages to {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
