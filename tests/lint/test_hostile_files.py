"""Files and trees as a careless user or a hostile one hands them to `nonatomic lint`:
each case is the minimal reproducer of a defect found by fuzzing the linter."""

from __future__ import annotations

import ast
import json
import os
import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nonatomic.cli import main
from nonatomic.lint import engine

FUZZ_EXAMPLES = int(os.environ.get("NONATOMIC_FUZZ_EXAMPLES", "0"))
HAZARD = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order)\n"
CLEAN = "import requests\n\ndef refund(order):\n    return requests.post(URL, json=order, timeout=10)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(*args: str, cache: bool = False):
    return CliRunner().invoke(main, ["lint", *(() if cache else ("--no-cache",)), *args], catch_exceptions=False)


def found(result) -> set[tuple[str, str, int]]:
    return {(f["path"], f["code"], f["line"]) for f in json.loads(result.stdout)}


# --- the cache -------------------------------------------------------------------------


def test_a_file_edited_while_it_is_linted_is_not_cached_under_its_new_stat(project, monkeypatch):
    path = project / "tool.py"
    path.write_text(CLEAN)
    real = engine.lint_source

    def edited_meanwhile(relpath, data, plan, **kwargs):
        path.write_text(HAZARD)  # the editor saves while the old bytes are linted
        return real(relpath, data, plan, **kwargs)

    monkeypatch.setattr(engine, "lint_source", edited_meanwhile)
    assert lint("--format", "json", ".", cache=True).stdout == "[]\n"  # the bytes it read were clean
    monkeypatch.setattr(engine, "lint_source", real)
    again = lint("--format", "json", ".", cache=True)
    assert found(again) == {("tool.py", "NA201", 4)}
    assert again.exit_code == 1


@pytest.mark.parametrize(
    "cache_text",
    [
        "[]",
        '{"tool.py": 3}',
        '{"tool.py": [1, 2]}',
        '{"tool.py": [1, 2, "abc", [{"code": "NA201"}]]}',
        '{"tool.py": [1, 2, "abc", [1]]}',
        '{"tool.py": ["1", 2, "abc", []]}',
        "null",
    ],
)
def test_a_cache_file_of_valid_json_in_the_wrong_shape_is_a_miss(project, cache_text):
    (project / "tool.py").write_text(HAZARD)
    first = lint("--format", "json", ".", cache=True)
    for cache_file in (project / ".nonatomic_cache").glob("*.json"):
        cache_file.write_text(cache_text)
    again = lint("--format", "json", ".", cache=True)
    assert again.exit_code == 1
    assert again.stdout == first.stdout
    # ... and the run repaired the cache: the next one reads it.
    assert lint("--format", "json", ".", cache=True).stdout == first.stdout


def test_a_cached_finding_of_the_wrong_type_is_a_miss(project):
    path = project / "tool.py"
    path.write_text(HAZARD)
    lint(".", cache=True)
    (cache_file,) = (project / ".nonatomic_cache").glob("*.json")
    entries = json.loads(cache_file.read_text())
    entries["tool.py"][3][0]["line"] = "four"
    cache_file.write_text(json.dumps(entries))
    assert found(lint("--format", "json", ".", cache=True)) == {("tool.py", "NA201", 4)}


# --- discovery -------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="needs POSIX symlinks")
def test_a_symlink_loop_in_the_tree_is_reported_and_the_rest_is_linted(project):
    (project / "tool.py").write_text(HAZARD)
    os.symlink("b.py", project / "a.py")
    os.symlink("a.py", project / "b.py")
    os.symlink(".", project / "self")  # a directory loop: never followed
    result = lint("--format", "json", ".")
    assert found(result) == {("tool.py", "NA201", 4)}
    assert result.exit_code == 1
    assert "note: a.py: skipped: Too many levels of symbolic links" in result.stderr


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="needs a file system that stores any bytes")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_file_name_that_is_not_utf8_is_linted(project, fmt):
    name = os.fsdecode(b"caf\xe9.py")
    (project / name).write_text(HAZARD)
    result = lint("--format", fmt, ".")
    assert result.exit_code == 1
    assert "caf" in result.stdout


# --- the import pre-check --------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        b"\x0cimport requests\nrequests.get(u)\n",
        b"try: import requests\nexcept ImportError: pass\nrequests.get(u)\n",
        b"import os, \\\n    requests\nrequests.get(u)\n",
        b"from \\\n    requests import get\nget(u)\n",
        b"x = 1\rimport requests\rrequests.get(u)\r",
        b"x = 1; import requests\nrequests.get(u)\n",
        b"if True: import requests\nrequests.get(u)\n",
    ],
    ids=["form-feed", "try-one-line", "backslash-import", "backslash-from", "cr-only", "semicolon", "if-one-line"],
)
def test_every_import_cpython_accepts_passes_the_pre_check(project, source):
    (project / "tool.py").write_bytes(source)
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    assert found(lint("--format", "json", ".")) == {("tool.py", "NA201", calls[0].lineno)}


# --- what libcst cannot parse, or should not -------------------------------------------


def test_a_file_cpython_compiles_and_libcst_cannot_parse_is_a_note_not_na000(project):
    (project / "annotated.py").write_text("import requests\n(x): int\nrequests.get(u)\n")
    (project / "tool.py").write_text(HAZARD)
    result = lint("--format", "json", ".")
    assert found(result) == {("tool.py", "NA201", 4)}
    # The CPython-tree gates still ran: the note names the rule that could fire.
    assert "note: annotated.py: libcst cannot parse line 2 though CPython compiles it: not checked by NA201" in (
        result.stderr
    )


def test_a_file_neither_parser_reads_is_still_na000(project):
    (project / "broken.py").write_text("import requests\nrequests.get(u\n")
    assert found(lint("--format", "json", ".")) == {("broken.py", "NA000", 2)}


@pytest.mark.parametrize(
    "expression",
    [
        "(requests\n" + "    .get()\n" * 3000 + ")",  # a chain on separate lines: no line guard sees it
        "requests" + ".get()" * 2500,  # one 15 kB line
        "a + " * 1100 + "requests.get(u)",
    ],
    ids=["chain-lines", "chain-line", "sum"],
)
def test_generated_deep_expressions_get_the_syntax_check_only(project, expression):
    (project / "generated.py").write_text(f"import requests\nx = {expression}\n")
    (project / "tool.py").write_text(HAZARD)
    result = lint("--format", "json", ".")
    assert found(result) == {("tool.py", "NA201", 4)}
    assert "note: generated.py: nested more than 1000 levels deep: only its syntax was checked" in result.stderr


def test_a_file_past_its_time_budget_gets_the_syntax_check_only(project):
    (project / "pyproject.toml").write_text("[tool.nonatomic]\nmax-file-seconds = 1e-9\n")
    (project / "tool.py").write_text(HAZARD)
    (project / "broken.py").write_text("import requests\nrequests.get(u\n")
    result = lint("--format", "json", ".")
    assert found(result) == {("broken.py", "NA000", 2)}
    assert "note: tool.py: took over 1e-09 s (max-file-seconds): only its syntax was checked" in result.stderr
    assert result.exit_code == 1


def test_a_budget_hit_is_not_cached(project):
    (project / "pyproject.toml").write_text("[tool.nonatomic]\nmax-file-seconds = 1e-9\n")
    (project / "tool.py").write_text(HAZARD)
    lint(".", cache=True)
    assert "took over" in lint(".", cache=True).stderr


@pytest.mark.parametrize("value", ['"ten"', "0", "-1", "true"])
def test_max_file_seconds_is_validated(project, value):
    (project / "pyproject.toml").write_text(f"[tool.nonatomic]\nmax-file-seconds = {value}\n")
    (project / "tool.py").write_text(HAZARD)
    result = CliRunner().invoke(main, ["lint", "--no-cache", "."])
    assert result.exit_code == 2
    assert "max-file-seconds" in result.output


def test_jobs_are_bounded_by_the_machine(project, monkeypatch):
    for i in range(12):
        (project / f"m{i}.py").write_text(HAZARD)
    asked = []
    import multiprocessing.context

    original = multiprocessing.context.BaseContext.Pool

    def pool(self, processes=None, *args, **kwargs):
        asked.append(processes)
        return original(self, processes, *args, **kwargs)

    monkeypatch.setattr(multiprocessing.context.BaseContext, "Pool", pool)
    result = lint("--jobs", "100000", "--format", "json", ".")
    assert len(json.loads(result.stdout)) == 12
    assert all(processes <= engine.usable_cpus() for processes in asked)


# --- NA201's fix in every layout of a call ---------------------------------------------

FIX_LAYOUTS = [
    (
        "requests.post(  # create\n    url,\n    json=body,  # the body\n)\n",
        "requests.post(  # create\n    url,\n    json=body,  # the body\n    timeout=30,\n)\n",
    ),
    (
        "requests.post(\n    url,\n    json=body  # no comma\n)\n",
        "requests.post(\n    url,\n    json=body,  # no comma\n    timeout=30\n)\n",
    ),
    ("requests.post(url,\n              json=body)\n", "requests.post(url,\n              json=body, timeout=30)\n"),
    (
        "requests.post(url,\n              json=body,  # c\n              )\n",
        "requests.post(url,\n              json=body,  # c\n              timeout=30,\n              )\n",
    ),
    ("requests.post(\n    url, json=body\n)\n", "requests.post(\n    url, json=body, timeout=30\n)\n"),
    (
        "requests.post(\n    url,\n    json=body,\n    # last\n)\n",
        "requests.post(\n    url,\n    json=body,\n    timeout=30,\n    # last\n)\n",
    ),
    ("requests.post(url, json=body,)\n", "requests.post(url, json=body, timeout=30,)\n"),
    ("requests.get(\n    url)  # after\n", "requests.get(\n    url, timeout=30)  # after\n"),
    (
        "def f():\n    return requests.post(\n        url,\n        json=body,  # why\n    )\n",
        "def f():\n    return requests.post(\n        url,\n        json=body,  # why\n        timeout=30,\n    )\n",
    ),
]


@pytest.mark.parametrize(("before", "after"), FIX_LAYOUTS)
def test_the_timeout_fix_keeps_the_call_layout_and_its_comments(lint, before, after):
    result = lint("import requests\n" + before, select=["NA201"], fix=True)
    assert result.fixed.decode() == "import requests\n" + after



# Random layouts of a multi-line call: each argument on its own line or not, a trailing
# comma or not, comments after any argument, after `(` and before `)`.
_ARGS = st.lists(st.sampled_from(["url", "json=body", "headers=h", "data"]), min_size=1, max_size=4, unique=True)


# The linter's deep thread raises the (process-wide) recursion limit on first use.
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=FUZZ_EXAMPLES or 25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=_ARGS, per_line=st.booleans(), trailing_comma=st.booleans(), comments=st.lists(st.booleans(), min_size=6,
                                                                                          max_size=6),
       closing_alone=st.booleans(), indent=st.sampled_from(["", "    "]))
def test_the_timeout_fix_is_clean_in_any_call_layout(lint, args, per_line, trailing_comma, comments, closing_alone,
                                                     indent):
    inner = indent + "    "
    args = sorted(args, key=lambda arg: "=" in arg)  # positional arguments first
    parts = []
    for i, arg in enumerate(args):
        last = i == len(args) - 1
        comma = "," if not last or trailing_comma else ""
        comment = f"  # c{i}" if comments[i + 1] and (per_line or last) else ""
        parts.append(f"{arg}{comma}{comment}" if per_line else f"{arg}{comma}")
    opening = "requests.post(" + ("  # open" if comments[0] else "")
    if per_line:
        body = "".join(f"\n{inner}{part}" for part in parts)
    else:
        body = "\n" + inner + " ".join(parts)
    closing = f"\n{indent})" if closing_alone or any("#" in p for p in parts) else ")"
    call = opening + body + closing
    head = "def f():\n" if indent else ""
    source = f"import requests\n{head}{indent}{call}\n"
    compile(source, "case.py", "exec")  # the generated layout is valid Python
    fixed = lint(source, select=["NA201"], fix=True).fixed.decode()
    compile(fixed, "fixed.py", "exec")
    assert fixed.count("timeout=30") == 1
    assert not any(line != line.rstrip() for line in fixed.splitlines()), "trailing whitespace"
    before = {c.strip() for c in source.splitlines() if "#" in c}
    after = {c.strip() for c in fixed.splitlines() if "#" in c}
    # each comment stays with the code it followed (a line may gain the new argument only)
    assert {c[c.index("#"):] for c in before} == {c[c.index("#"):] for c in after}
    assert all(any(b.split("#")[0].strip() in a for a in after) for b in before)
    assert lint(fixed, select=["NA201"], fix=True).fixed is None  # idempotent
