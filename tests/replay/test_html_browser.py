"""The HTML pages in a real headless Chromium: no console errors, findings and timelines present,
and the shipped incidents' timelines drawn to scale, with their legend, zoom and other lock owners.

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`)
with the standard library only.  A control page that breaks the
Content-Security-Policy proves the console check would see a violation.
Screenshots are saved next to the pages, in pytest's temporary directory (their paths are
printed: run with -s).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from nonatomic.cli import main
from nonatomic.replay.report.svg import LEGEND

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 60


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on PATH (.ci/run installs it with `apt-get install chromium`; "
                "without it the browser test cannot run)")


# Chromium reads commands from fd 3 and answers on fd 4.  This starts it with the two pipe ends
# there (copied out of the way first, in case one of them already is 3 or 4); a shell could not
# be trusted with fd numbers above 9.
_ON_FDS_3_AND_4 = """
import fcntl, os, sys
commands, answers = (fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3])
os.dup2(commands, 3)
os.dup2(answers, 4)
os.execv(sys.argv[3], sys.argv[3:])
"""


class DevTools:
    """A headless Chromium and one page, spoken to over the DevTools pipe (fds 3 and 4 of the child)."""

    def __init__(self, binary: str, profile) -> None:
        to_child, self._to_browser = os.pipe()
        self._from_browser, from_child = os.pipe()

        self.process = subprocess.Popen(
            [sys.executable, "-c", _ON_FDS_3_AND_4, str(to_child), str(from_child), binary, "--headless",
             "--remote-debugging-pipe", "--disable-gpu", "--no-first-run",
             # the page is our own file; root in CI containers cannot use the sandbox
             "--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--window-size=1300,900", "about:blank"],
            pass_fds=(to_child, from_child), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        while True:
            found = next((ev for ev in self.events if ev.get("method") == method), None)
            if found:
                self.events.remove(found)
                return found
            self.events.append(self._read())

    def _read(self) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self._from_browser, 1 << 16) if ready else b""
            if not chunk:
                raise TimeoutError("Chromium stopped answering")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, path) -> None:
        self.call("Page.navigate", session=True, url=path.as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, dialogs (an XSS would alert) so far."""
        found = []
        for ev in self.events:
            method, params = ev.get("method"), ev.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(params["exceptionDetails"].get("text", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(json.dumps(params.get("args")))
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                found.append(params["entry"]["text"])
            elif method == "Page.javascriptDialogOpening":
                found.append(f"dialog: {params.get('message')}")
        return found

    def screenshot(self, path) -> None:
        size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = self.call("Page.captureScreenshot", session=True, format="png", clip=clip, captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close")
            self.process.wait(timeout=10)
        except (OSError, RuntimeError, TimeoutError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


HOSTILE = "<script>alert(1)</script>"


def _log(path) -> None:
    def ev(second, task="refund-1", **fields):
        return {"ts": f"2024-05-01T10:00:{second:06.3f}Z", "task_id": task, **fields}

    refund = dict(step=1, tool="refund_payment", target="order:8821")
    events = [
        ev(0, op="task_start", status="started", worker="w-3"),
        ev(0.1, op="lock_acquire", step=1, target="lock:order:8821", owner="w-3", ttl_ms=30_000),
        ev(0.2, op="call", attempt=1, phase="start", **refund),
        ev(10.2, op="call", attempt=1, phase="end", status="timeout", code=504, error="gateway timeout", **refund),
        ev(10.3, op="call", attempt=2, status="ok", code=200, **refund),
        ev(12, op="verify", step=1, status="ok", tool="get_refund", target="order:8821"),
        ev(12.5, op="task_end", status="completed"),
        # model-generated text everywhere a log value can go
        ev(1, task=HOSTILE, op="call", step=1, attempt=1, status="timeout", tool='"><img src=x onerror=alert(2)>',
           target=HOSTILE, error="</title><script>alert(3)</script>", note="<svg onload=alert(4)>"),
        ev(2, task=HOSTILE, op="call", step=1, attempt=2, status="ok", tool='"><img src=x onerror=alert(2)>',
           target=HOSTILE),
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    devtools = DevTools(_browser(), tmp_path_factory.mktemp("chromium-profile"))
    yield devtools
    devtools.close()


def test_the_console_check_sees_a_csp_violation(browser, tmp_path):
    page = tmp_path / "control.html"
    page.write_text("<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"
                    "<script>document.title = 'ran'</script>")
    browser.events.clear()
    browser.open(page)
    assert browser.evaluate("document.title") != "ran"
    assert any("Content Security Policy" in p for p in browser.problems())


def test_report_opens_without_errors_and_shows_findings_and_timelines(browser, tmp_path):
    log = tmp_path / "incident.jsonl"
    _log(log)
    report = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["replay", "--format", "html", "--output", str(report), str(log)])
    assert result.exit_code in (0, 1), result.output
    findings = json.loads(CliRunner().invoke(main, ["replay", "--format", "json", str(log)]).output)["findings"]

    browser.events.clear()
    browser.open(report)
    assert browser.problems() == []
    shown = browser.evaluate("Array.from(document.querySelectorAll('#findings-table tbody tr'))"
                             ".map(r => r.dataset.fingerprint)")
    assert sorted(shown) == sorted(f["fingerprint"] for f in findings)
    assert browser.evaluate("document.querySelectorAll('article.timeline svg').length") == 2
    assert browser.evaluate("document.querySelectorAll('svg circle.witness').length") > 0
    # hostile values are shown as text and ran nowhere
    assert HOSTILE in browser.evaluate("document.body.textContent")
    assert browser.evaluate("document.querySelectorAll('img, main script, svg script, [onload], [onerror]').length") == 0
    # the findings table filters and sorts
    visible = ("(() => { const f = document.getElementById('filter'); f.value = arguments_; "
               "f.dispatchEvent(new Event('input')); return Array.from(document.querySelectorAll("
               "'#findings-table tbody tr')).filter(r => !r.hidden).length; })()")
    assert browser.evaluate(visible.replace("arguments_", "'NR303'")) == sum(f["code"] == "NR303" for f in findings)
    assert browser.evaluate(visible.replace("arguments_", "''")) == len(findings)
    codes = ("(() => { document.querySelector('#findings-table th:nth-child(2) button').click(); "
             "return Array.from(document.querySelectorAll('#findings-table tbody tr td:nth-child(2)'))"
             ".map(c => c.textContent); })()")
    assert browser.evaluate(codes) == sorted(f["code"] for f in findings)
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.problems() == []
    shot = tmp_path / "report.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000
    print(f"\nscreenshot: {shot}")


# -- the shipped incidents, as an on-call engineer opens them ------------------------------------

SAMPLES = Path(__file__).parents[2] / "sample_logs"
INCIDENTS = {path.stem: [str(path)] for path in sorted(SAMPLES.glob("*.jsonl")) if path.stem != "clean_runs"}
INCIDENTS["invoice_workers"] = ["--mapping", str(SAMPLES / "foreign" / "mapping.yaml"),
                                str(SAMPLES / "foreign" / "invoice_workers.jsonl")]
LOCK_INCIDENTS = {"lock_leak_after_timeout", "invoice_workers"}

# Each mark's rendered centre and time, grouped by the scale segment it falls in.
_MARKS = """(() => Array.from(document.querySelectorAll('svg.chart')).map(svg => {
  const segments = JSON.parse(svg.dataset.segments);
  return {id: svg.id, segments: segments,
          marks: Array.from(svg.querySelectorAll('g.ev[data-ts]')).map(g => {
            const box = g.getBoundingClientRect();
            return [+g.dataset.ts, box.left + box.width / 2];
          }),
          ticks: Array.from(svg.querySelectorAll('g.ticks text')).map(t => t.textContent)};
}))()"""


def _assert_to_scale(chart: dict) -> None:
    """Within each stretch drawn to scale, x is one linear function of time, with one slope for all."""
    slopes = []
    for t0, t1, _x0, _x1, folded in chart["segments"]:
        inside = sorted({ts: x for ts, x in chart["marks"] if t0 <= ts <= t1}.items())
        if folded or len(inside) < 2 or inside[-1][0] == inside[0][0]:
            continue
        (ta, xa), (tb, xb) = inside[0], inside[-1]
        slope = (xb - xa) / (tb - ta)
        for ts, x in inside:
            assert abs(xa + (ts - ta) * slope - x) < 1.5, (chart["id"], ts, x)
        slopes.append(slope)
    assert all(abs(s - slopes[0]) <= 0.01 * abs(slopes[0]) + 1e-6 for s in slopes), (chart["id"], slopes)


def _chart_box(browser, chart_id: str) -> dict:
    return browser.evaluate(f"(() => {{ const r = document.getElementById('{chart_id}').getBoundingClientRect(); "
                            "return {left: r.left, top: r.top, width: r.width, height: r.height}; })()")


def _drag(browser, x0: float, x1: float, y: float) -> None:
    for kind, x in (("mousePressed", x0), ("mouseMoved", (x0 + x1) / 2), ("mouseMoved", x1), ("mouseReleased", x1)):
        browser.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left",
                     buttons=0 if kind == "mouseReleased" else 1, clickCount=1)


@pytest.mark.parametrize("incident", sorted(INCIDENTS))
def test_shipped_incident_timelines(browser, tmp_path, incident):
    page = tmp_path / f"{incident}.html"
    result = CliRunner().invoke(main, ["timeline", "--format", "html", "--output", str(page), *INCIDENTS[incident]])
    assert result.exit_code == 0, result.output
    browser.events.clear()
    browser.open(page)
    assert browser.problems() == []

    charts = browser.evaluate(_MARKS)
    assert charts, "a chart per task with findings"
    for chart in charts:
        _assert_to_scale(chart)
        assert chart["ticks"] and len(set(chart["ticks"])) == len(chart["ticks"]), chart["ticks"]

    # every mark the charts use is in the legend, and the legend has every entry
    keys = browser.evaluate("Array.from(document.querySelectorAll('.legend .key')).map(k => k.dataset.key)")
    assert keys == list(LEGEND)
    drawn = browser.evaluate("""(() => {
      const has = sel => document.querySelector('svg.chart ' + sel) !== null;
      return {call: has('.op.call, .ev.call'), rollback: has('.op.rollback, .ev.rollback'),
              verify: has('.op.verify, .ev.verify'), lease: has('.lease:not(.other)'), 'lease-other': has('.lease.other'),
              dangling: has('.dangling'), witness: has('.witness'), fold: has('.fold'), omitted: has('.omitted'),
              step: has('.step-span')};
    })()""")
    assert {k for k, present in drawn.items() if present} <= set(keys)
    assert drawn["witness"], "the findings' witnesses are marked"

    if incident in LOCK_INCIDENTS:
        # another owner of the lock has a lane of its own in a lock incident's timeline
        assert browser.evaluate("document.querySelectorAll('svg.chart rect.lane.other').length") >= 1
    if incident == "invoice_workers":
        # NR202/NR203: the lease of the other owner is drawn in both tasks' charts
        assert browser.evaluate("Array.from(document.querySelectorAll('article svg.chart'))"
                                ".map(s => s.querySelectorAll('rect.lease.other').length)") == [1, 1]
    if incident == "retry_rollback_race":
        # the rollback and the retry it raced are on separate tracks, not on top of each other
        ys = browser.evaluate("['rollback', 'call'].map(k => Array.from(document.querySelectorAll("
                              "'svg.chart rect.op.' + k)).map(r => +r.getAttribute('y')))")
        assert set(ys[0]).isdisjoint(ys[1][1:]), ys

    # pointing at a finding lights up its witnesses in the chart
    item = browser.evaluate("(() => { const r = document.querySelector('li[data-finding=\"1\"]')"
                            ".getBoundingClientRect(); return [r.left + 20, r.top + 8]; })()")  # its first line
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=item[0], y=item[1])
    lit = browser.evaluate("document.querySelectorAll('svg.chart g.lit').length")
    assert lit == browser.evaluate("document.querySelectorAll('article:first-of-type svg.chart "
                                   "g[data-findings~=\"1\"]').length") > 0
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=1, y=1)
    assert browser.evaluate("document.querySelectorAll('svg.chart g.lit').length") == 0
    # each because line of a finding lights up the witness it names, and only that one
    lines = browser.evaluate("Array.from(document.querySelectorAll('article:first-of-type li[data-witness]'))"
                             ".map(li => { const r = li.getBoundingClientRect(); "
                             "return [li.dataset.witness, r.left + 30, r.top + r.height / 2]; })")
    assert lines, "the first finding's because lines are listed"
    for witness, x, y in lines:
        browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=x, y=y)
        lit = browser.evaluate("Array.from(document.querySelectorAll('svg.chart g.lit')).map(g => g.dataset.because)")
        assert lit and all(witness in marks.split() for marks in lit), (witness, lit)
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=1, y=1)

    shot = tmp_path / f"{incident}.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000
    print(f"\nscreenshot: {shot}")

    # zoom: drag across the first chart's plot, then the buttons; the view stays to scale
    first = charts[0]["id"]
    box = _chart_box(browser, first)
    left, right = box["left"] + 300, box["left"] + 500
    _drag(browser, left, right, box["top"] + box["height"] / 2)
    assert browser.evaluate(f"document.getElementById('{first}').dataset.view") != "", "the drag zoomed"
    zoomed = next(c for c in browser.evaluate(_MARKS) if c["id"] == first)
    assert len(set(zoomed["ticks"])) == len(zoomed["ticks"]) and zoomed["ticks"] != charts[0]["ticks"]
    _assert_to_scale(zoomed)
    browser.evaluate(f"document.querySelector('.zoom[data-chart=\"{first}\"] button[data-zoom=\"reset\"]').click()")
    again = next(c for c in browser.evaluate(_MARKS) if c["id"] == first)
    assert again["ticks"] == charts[0]["ticks"]
    assert all(abs(a[1] - b[1]) < 0.5 for a, b in zip(again["marks"], charts[0]["marks"]))
    browser.evaluate(f"document.querySelector('.zoom[data-chart=\"{first}\"] button[data-zoom=\"in\"]').click()")
    assert next(c for c in browser.evaluate(_MARKS) if c["id"] == first)["ticks"] != charts[0]["ticks"]
    assert browser.problems() == []


def test_the_report_draws_every_task_on_one_scale(browser, tmp_path):
    report = tmp_path / "report.html"
    logs = [str(p) for p in sorted(SAMPLES.glob("*.jsonl"))]
    result = CliRunner().invoke(main, ["replay", "--fail-on", "never", "--format", "html", "--output", str(report), *logs])
    assert result.exit_code == 0, result.output
    browser.events.clear()
    browser.open(report)
    assert browser.problems() == []
    rows = browser.evaluate("document.querySelectorAll('#overview-chart a text.lane-label').length")
    assert rows == browser.evaluate("document.querySelectorAll('article.timeline').length") > 1
    shot = tmp_path / "report.png"
    browser.screenshot(shot)
    print(f"\nscreenshot: {shot}")
