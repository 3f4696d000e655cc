"""The shipped pre-commit hook, run for real through `pre-commit try-repo`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.network  # pre-commit installs the hook's environment from the registry
def test_hook_blocks_a_hazard_and_passes_the_fixed_file(tmp_path):
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the project as a git checkout and git")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q"], cwd=work, check=True, env=env)
    tool = work / "tools.py"
    tool.write_text("import requests\n\ndef refund(order):\n    return requests.post(URL, json=order)\n")
    (work / "notes.txt").write_text("requests.get(u)\n")  # not Python: the hook must not see it
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)

    def try_repo():
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "nonatomic-lint", "--all-files"],
            cwd=work, env=env, capture_output=True, text=True, timeout=900,
        )

    first = try_repo()
    if "Could not find a version" in first.stdout + first.stderr:
        pytest.skip("the package registry is unreachable")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "tools.py:4:12: NA201" in first.stdout
    assert "notes.txt" not in first.stdout

    tool.write_text("import requests\n\ndef refund(order):\n    return requests.post(URL, json=order, timeout=10)\n")
    second = try_repo()
    assert second.returncode == 0, second.stdout + second.stderr
