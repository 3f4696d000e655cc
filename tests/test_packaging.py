"""What a user gets from the package: the sdist's contents, its metadata, the rule
pages SARIF links to, and a README that matches the commands."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import click
import pytest

from nonatomic.cli import COMMANDS, main
from nonatomic.lint import docs
from nonatomic.rules.lint.catalogue import CATALOGUE
from nonatomic.rules.replay import DETECTORS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")


def test_rule_pages_are_generated_from_the_docstrings():
    on_disk = {path.name: path.read_text("utf-8") for path in (ROOT / docs.DOCS_DIR).glob("*.md")}
    assert on_disk == docs.pages(), "regenerate them: python -m nonatomic.lint.docs docs/rules"


def test_every_rule_page_has_the_anchor_sarif_links_to():
    for entry in CATALOGUE:
        title = (ROOT / docs.DOCS_DIR / f"{entry.code}.md").read_text("utf-8").splitlines()[0]
        # GitHub's anchor of a heading: lower case, punctuation other than `-` dropped, spaces as `-`
        slug = re.sub(r"[^\w\- ]", "", title.lstrip("# ").lower()).replace(" ", "-")
        assert slug == f"{entry.code}-{entry.name}".lower()


def test_metadata_names_license_author_urls_and_classifiers():
    meta = metadata.metadata("nonatomic")
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    assert meta["Author"] or meta["Author-email"]
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL"))
    assert {"Homepage", "Source", "Issues"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    assert "Programming Language :: Python :: 3.10" in meta.get_all("Classifier")
    assert (ROOT / "LICENSE").read_text("utf-8").startswith("MIT License")


def test_the_sdist_carries_tests_sample_logs_examples_and_docs(tmp_path):
    pytest.importorskip("setuptools", minversion="77")
    built = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))",
         str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stderr
    with tarfile.open(tmp_path / built.stdout.strip().splitlines()[-1]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for wanted in ("LICENSE", "README.md", "Makefile", ".ci/run", ".ci/floors.py", "tests/test_packaging.py",
                   "tests/lint/test_cli.py", "sample_logs/duplicate_refund.jsonl",
                   "sample_logs/expected_findings.yaml", "examples/support_agent.py", "docs/rules/NA101.md",
                   "nonatomic/rules/tools.yaml"):
        assert wanted in names, wanted
    assert not any("__pycache__" in name for name in names)


def test_floors_are_pinned_from_pyproject():
    floors = subprocess.run([sys.executable, str(ROOT / ".ci" / "floors.py")], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    declared = metadata.requires("nonatomic")
    runtime = [r for r in declared if "extra ==" not in r]
    assert len(floors) == len(runtime)
    for line in floors:
        name, version = re.match(r"([\w.-]+)==([\w.]+)", line).groups()
        assert any(r.lower().startswith(name.lower()) and f">={version}" in r for r in runtime), line


def test_readme_rule_table_lists_every_rule_and_detector():
    listed = set(re.findall(r"^\| (N[AR]\d{3}) \|", README, re.M))
    assert listed == {e.code for e in CATALOGUE} | set(DETECTORS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_readme_lists_every_option_of_every_command(command):
    cli = main.get_command(click.Context(main), command)
    missing = [
        option for param in cli.params if isinstance(param, click.Option)
        for option in param.opts if option.startswith("--") and f"`{option}" not in README
    ]
    assert not missing, f"`nonatomic {command}` options missing from README.md: {missing}"


def test_readme_pre_commit_snippet_matches_the_hook_and_the_version():
    from nonatomic import __version__

    snippet = re.search(r"```yaml\nrepos:\n(.*?)```", README, re.S).group(1)
    hook_ids = re.findall(r"^- id: (\S+)", (ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"), re.M)
    assert re.search(r"- id: (\S+)", snippet).group(1) in hook_ids
    assert f"rev: v{__version__}" in snippet
    repo = re.search(r"repo: (\S+)", snippet).group(1)
    urls = dict(entry.split(", ", 1) for entry in metadata.metadata("nonatomic").get_all("Project-URL"))
    assert repo == urls["Source"]
