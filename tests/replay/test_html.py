"""The HTML pages: hostile log values stay text, the CSP admits only our own style and script,
the report shows the same findings as JSON, and a report over many tasks stays small."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner

from nonatomic.cli import main
from nonatomic.replay.report import html as render_html
from nonatomic.replay.report.model import GROUP_SHOWN

INCIDENT = Path(__file__).parent / "golden" / "incident.jsonl"
HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', "'><svg onload=alert(3)>",
           "</title></svg></style><script>alert(4)</script>", "javascript:alert(5)", "&lt;b&gt;"]
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p", "dl", "div", "dt",
                "dd", "table", "thead", "tbody", "tr", "th", "td", "button", "input", "select", "option", "span",
                "a", "b", "br", "code", "article", "ol", "ul", "li", "details", "summary", "script",
                "section", "svg", "defs", "clippath", "g", "rect", "text", "tspan", "line", "circle", "path"}


def replay(*args):
    return CliRunner().invoke(main, ["replay", *map(str, args)])


class Page(HTMLParser):
    """Tags, attributes, text, and the contents of <style> and <script> of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.blocks: dict[str, list[str]] = {"style": [], "script": []}
        self._in: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in self.blocks:
            self._in = tag
            self.blocks[tag].append("")

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in:
            self.blocks[self._in][-1] += data
        else:
            self.text.append(data)


def hostile_log(path: Path) -> Path:
    """Every field a log value can reach, filled with markup, in a task whose id is markup too."""
    lines = []
    for n, value in enumerate(HOSTILE):
        def ev(second, **fields):
            return {"ts": f"2024-05-01T10:00:{second:02d}Z", "task_id": value, **fields}

        common = dict(step=n + 1, tool=value, target=value, idempotency_key=None)
        lines += [
            ev(0, op="task_start", status="started", note=value, **{value: value}),
            ev(1, op="lock_acquire", target=value, owner=value, ttl_ms=1000, step=n + 1),
            ev(2, op="call", attempt=1, status="timeout", error=value, extra_field=value,
               **{k: v for k, v in common.items() if v is not None}),
            ev(3, op="call", attempt=2, status="ok", **{k: v for k, v in common.items() if v is not None}),
            ev(4, op="task_end", status="failed", error=value),
            # another task holds the same lock: drawn in a lane of its own, named by hostile values
            {**ev(1, op="lock_acquire", target=value, owner=value + "!", ttl_ms=1000, step=n + 1),
             "task_id": value + "!"},
        ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "<script>alert(6)</script>\n")
    return path


def test_hostile_values_render_as_text_everywhere(tmp_path):
    log = hostile_log(tmp_path / "hostile.jsonl")
    for page_args in (["replay", "--format", "html"], ["timeline", "--format", "html"]):
        out = tmp_path / "page.html"
        result = CliRunner().invoke(main, [*page_args, "--output", str(out), str(log)])
        assert result.exit_code in (0, 1), result.output
        html = out.read_text(encoding="utf-8")
        page = Page(html)
        assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS
        for tag, attrs in page.tags:
            assert not [a for a in attrs if a.startswith("on") or a in ("style", "src")], (tag, attrs)
            href = attrs.get("href")
            assert href is None or re.fullmatch(r"#t\d+(-[ef]\d+)?", href), href
        assert len(page.blocks["script"]) == 1, "the findings table and the charts' zoom"
        assert any(a.get("class") == "lease released other" or a.get("class") == "lease expired other"
                   for tag, a in page.tags if tag == "rect"), "the other task's lease is drawn"
        text = "".join(page.text)
        for value in HOSTILE:
            assert value in text, f"{value!r} is not shown as text"
            assert value not in html or "<" not in value, f"{value!r} is in the page unescaped"
        assert "alert(6)" in text or page_args[0] == "timeline", "quarantined raw lines are shown, as text"


def test_csp_admits_exactly_the_inline_style_and_script(tmp_path):
    out = tmp_path / "report.html"
    replay("--format", "html", "--output", out, INCIDENT)
    page = Page(out.read_text(encoding="utf-8"))
    [csp] = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'none'"

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    [style], [script] = page.blocks["style"], page.blocks["script"]
    assert directives["style-src"] == digest(style)
    assert directives["script-src"] == digest(script)
    assert "unsafe" not in csp


def test_report_lists_the_same_findings_as_json(tmp_path):
    out = tmp_path / "report.html"
    html_run = replay("--format", "html", "--output", out, INCIDENT)
    json_run = replay("--format", "json", INCIDENT)
    assert html_run.exit_code == json_run.exit_code
    findings = json.loads(json_run.output)["findings"]
    page = Page(out.read_text(encoding="utf-8"))
    shown = [a["data-fingerprint"] for t, a in page.tags if t == "tr" and "data-fingerprint" in a]
    assert sorted(shown) == sorted(f["fingerprint"] for f in findings) and findings
    articles = [a["id"] for t, a in page.tags if t == "article"]
    assert len(articles) == len({f["task_id"] for f in findings})
    text = "".join(page.text)
    assert all(f["message"] in text for f in findings)


def _many_tasks(path: Path, tasks: int, events_per_task: int = 4) -> Path:
    """Tasks that each retry a write after a timeout without a verify (one finding each)."""
    lines = []
    for n in range(tasks):
        def ev(ms, **fields):
            return {"ts": 1714557600000 + n * 10_000 + ms, "task_id": f"task-{n:05d}", "tool": "charge_card",
                    "target": f"order:{n}", "step": 1, **fields}

        lines += [ev(i, op="call", attempt=1, status="ok", tool="get_order") for i in range(events_per_task - 2)]
        lines += [ev(100, op="call", attempt=1, status="timeout"), ev(9000, op="call", attempt=2, status="ok")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_report_over_many_tasks_draws_a_few_and_says_so(tmp_path):
    sizes = []
    for tasks in (render_html.REPORT_TASKS + 10, 4 * render_html.REPORT_TASKS):
        out = tmp_path / f"r{tasks}.html"
        replay("--format", "html", "--output", out, _many_tasks(tmp_path / f"l{tasks}.jsonl", tasks))
        html = out.read_text(encoding="utf-8")
        assert html.count('<article class="timeline"') == render_html.REPORT_TASKS
        assert f"{tasks - render_html.REPORT_TASKS} more task(s) with findings are not drawn" in html
        # a few groups (a code on charge_card), one finding per task each: the first few of each listed
        groups = html.count("… and ")
        assert groups and html.count(f"… and {tasks - GROUP_SHOWN} more") == groups
        assert html.count("<tr data-severity=") == groups * GROUP_SHOWN
        assert f"{groups * GROUP_SHOWN} of {groups * tasks} findings are listed" in html
        sizes.append(len(html.encode()))
    # 3.3 times the findings change counts on the page, not its size
    assert sizes[1] < 1.01 * sizes[0], sizes


def test_a_long_task_is_cut_to_the_event_cap(tmp_path):
    out = tmp_path / "r.html"
    log = _many_tasks(tmp_path / "l.jsonl", 1, events_per_task=10 * render_html.REPORT_EVENTS)
    replay("--format", "html", "--output", out, log)
    page = Page(out.read_text(encoding="utf-8"))
    rows = [a for t, a in page.tags if t == "tr" and a.get("id", "").startswith("t1-e")]
    assert len(rows) == render_html.REPORT_EVENTS
    assert f"… {9 * render_html.REPORT_EVENTS} event(s) not drawn" in "".join(page.text)
