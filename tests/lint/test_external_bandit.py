"""NA201 against bandit's B113 on the example file bandit ships in its sdist."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile

import pytest
from click.testing import CliRunner

from nonatomic.cli import main

BANDIT_VERSION = "1.9.4"
EXAMPLE = f"bandit-{BANDIT_VERSION}/examples/requests-missing-timeout.py"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    where = tmp_path_factory.mktemp("bandit")
    download = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "--dest", str(where), f"bandit=={BANDIT_VERSION}"],
        capture_output=True, text=True, timeout=300,
    )
    if download.returncode != 0:
        pytest.skip(f"cannot download bandit's sdist (registry unreachable?): {download.stderr.strip()[-200:]}")
    with tarfile.open(next(where.glob("bandit-*.tar.gz"))) as archive:
        archive.extract(EXAMPLE, where, filter="data")
    return where / EXAMPLE


@pytest.mark.network
def test_na201_flags_exactly_the_lines_b113_flags(example):
    pytest.importorskip("bandit")
    bandit = subprocess.run(
        [sys.executable, "-m", "bandit", "-q", "-t", "B113", "-f", "json", str(example)],
        capture_output=True, text=True,
    )
    b113 = sorted(r["line_number"] for r in json.loads(bandit.stdout)["results"] if r["test_id"] == "B113")
    assert len(b113) > 20  # the example really exercises the rule

    result = CliRunner().invoke(main, ["lint", "--no-cache", "--select", "NA201", "--format", "json", str(example)])
    ours = json.loads(result.stdout)
    assert [f["code"] for f in ours if f["code"] != "NA201"] == []
    assert sorted(f["line"] for f in ours) == b113
