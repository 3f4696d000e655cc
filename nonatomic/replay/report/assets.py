"""The stylesheet and the one script of the HTML pages, and the Content-Security-Policy that admits them.

They are inlined (the page is one file that opens from disk) and admitted by
their sha256 hashes: nothing else can run or style the page, so a log value
that escaped escaping still could not execute or load anything.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root { --ok: #2e7d32; --failed: #c62828; --unknown: #e08600; --lease: #5c6bc0; --mark: #d50000;
        --call: #3a6fb0; --rollback: #8e44ad; --verify: #00897b; --other-lease: #a0522d;
        --line: #d0d4da; --muted: #5f6b7a; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
body { margin: 0 auto; max-width: 1280px; padding: 16px 24px 48px; color: #1d232b; background: #fff; }
h1 { font-size: 1.5rem; margin: 0 0 4px; } h2 { font-size: 1.2rem; margin: 28px 0 8px; }
h3 { font-size: 1.05rem; margin: 0 0 4px; overflow-wrap: anywhere; }
.meta, .note { color: var(--muted); font-size: .9rem; }
dl.summary { display: flex; flex-wrap: wrap; gap: 8px; margin: 12px 0; }
dl.summary div { border: 1px solid var(--line); border-radius: 6px; padding: 6px 14px; min-width: 90px; }
dl.summary dt { color: var(--muted); font-size: .8rem; } dl.summary dd { margin: 0; font-size: 1.3rem; font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 6px; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th, td.nowrap { white-space: nowrap; }
#findings-table td.message { min-width: 24em; }
th button { all: unset; cursor: pointer; font-weight: 600; }
th button:focus-visible { outline: 2px solid var(--lease); }
th[aria-sort="ascending"] button::after { content: " ▲"; } th[aria-sort="descending"] button::after { content: " ▼"; }
.controls { display: flex; gap: 8px; align-items: center; margin: 8px 0; }
.controls input { flex: 0 1 320px; padding: 4px 6px; }
.sev { font-weight: 600; } .sev.error { color: var(--failed); } .sev.warning { color: var(--unknown); }
.sev.info { color: var(--muted); }
article.timeline { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 16px 0; }
.svgwrap, .scroll { overflow-x: auto; margin: 8px 0; }
ol.findings { margin: 8px 0; padding-left: 1.6em; } ol.findings li { margin: 4px 0; }
ol.findings li:target, tr:target { background: #fff3c4; }
details summary { cursor: pointer; color: var(--muted); margin: 6px 0; }
table.events tr.witness td:first-child { box-shadow: inset 3px 0 var(--mark); }
td.extra { font-family: ui-monospace, monospace; font-size: .8rem; white-space: pre-wrap; }
code, .mono { font-family: ui-monospace, monospace; }
svg text { font-size: 11px; fill: #1d232b; }
svg.chart { user-select: none; cursor: crosshair; }
svg .lane { fill: #f6f7f9; } svg .lane.odd { fill: #eceef2; } svg .lane.other { fill: #f3efe9; }
svg .lane-label { font-weight: 600; } svg .axis, svg .fold-label { fill: var(--muted); font-size: 10px; }
svg .tick { stroke: #c4c9d1; stroke-width: 1; stroke-dasharray: 1 3; }
svg .edge { stroke: #1d232b; stroke-width: 1; stroke-dasharray: 2 3; }
svg .step-span { fill: #5f6b7a; }
svg .op { stroke-width: 1.5; }
svg .op.call { fill: var(--call); fill-opacity: .55; }
svg .op.rollback { fill: var(--rollback); fill-opacity: .35; stroke-dasharray: 4 2; }
svg .op.verify { fill: var(--verify); fill-opacity: .55; rx: 6px; }
svg .op.ok { stroke: var(--ok); } svg .op.failed { stroke: var(--failed); }
svg .op.unknown, svg .op.open { stroke: var(--unknown); } svg .op.other { stroke: #8a94a3; }
svg .op.open { fill-opacity: .2; stroke-dasharray: 5 3; }
svg .dur { font-size: 10px; fill: #1d232b; font-weight: 600; } svg .dur.outside { font-weight: 400; }
svg .ev { fill: #8a94a3; stroke: #fff; stroke-width: 1; }
svg .ev.call { fill: var(--call); } svg .ev.rollback { fill: var(--rollback); } svg .ev.verify { fill: var(--verify); }
svg .ev.ok.end, svg .ev.ok.instant { stroke: var(--ok); stroke-width: 2; }
svg .ev.failed { fill: var(--failed); } svg .ev.unknown { stroke: var(--unknown); stroke-width: 2.5; }
svg .ev.end.ok { fill: var(--ok); } svg .ev.end.unknown { fill: var(--unknown); }
svg .ev.task_start, svg .ev.task_end { fill: #1d232b; }
svg .ev.acquire, svg .ev.release { fill: var(--lease); } svg .ev.acquire.failed { fill: var(--failed); }
svg .ev.expiry { fill: #fff; stroke: var(--lease); stroke-width: 2; }
svg .dangling { stroke: var(--unknown); stroke-width: 2.5; stroke-dasharray: 5 4; fill: none; }
svg .arrow { fill: var(--unknown); } svg .arrow.lease-open { fill: var(--lease); }
svg .lease { fill: var(--lease); fill-opacity: .18; stroke: var(--lease); stroke-width: 1.5; }
svg .lease.other { fill: var(--other-lease); stroke: var(--other-lease); fill-opacity: .22; stroke-dasharray: 6 2; }
svg .lease.open { stroke-dasharray: 5 3; }
svg .fold { fill: #e3e5e9; stroke: #b8bec8; stroke-dasharray: 3 3; }
svg .omitted { fill: #b8bec8; }
svg .witness { fill: none; stroke: var(--mark); stroke-width: 2; }
svg .mark-line { stroke: var(--mark); stroke-width: 1; stroke-dasharray: 2 2; }
svg .mark { fill: var(--mark); font-weight: 700; }
svg g.lit .witness { stroke-width: 4; fill: var(--mark); fill-opacity: .2; }
ol.findings li.lit { background: #fff3c4; }
svg .selection { fill: var(--lease); fill-opacity: .15; stroke: var(--lease); }
svg a:hover .ev, svg a:focus .ev { stroke-width: 3; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: .8rem; color: var(--muted); margin: 8px 0; }
.legend .key { display: inline-flex; align-items: center; gap: 4px; }
.zoom { display: flex; gap: 6px; align-items: center; font-size: .8rem; }
.zoom button { font-size: .8rem; padding: 1px 8px; }
table.events tr.foreign td { background: #f8f5f0; }
ul.because { margin: 2px 0 0; padding-left: 1.2em; font-size: .85rem; color: var(--muted); list-style: "→ "; }
ul.because li { margin: 1px 0; } ul.because li.lit { background: #fff3c4; } ul.because a { color: inherit; }
"""

SCRIPT = """
(function () {
  "use strict";
  function findingsTable() {
    var table = document.getElementById("findings-table");
    if (!table) { return; }
    var body = table.tBodies[0], heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var rows = Array.prototype.slice.call(body.rows);
    var filter = document.getElementById("filter"), severity = document.getElementById("severity");
    var shown = document.getElementById("shown");
    function key(row, i) { var cell = row.cells[i]; return cell.getAttribute("data-sort") || cell.textContent; }
    heads.forEach(function (th, i) {
      th.querySelector("button").addEventListener("click", function () {
        var up = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        rows.sort(function (a, b) {
          return key(a, i).localeCompare(key(b, i), undefined, {numeric: true}) * (up ? 1 : -1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
    function apply() {
      var words = filter.value.trim().toLowerCase(), level = severity.value, count = 0;
      rows.forEach(function (row) {
        var keep = (!level || row.getAttribute("data-severity") === level) &&
                   row.textContent.toLowerCase().indexOf(words) !== -1;
        row.hidden = !keep;
        count += keep ? 1 : 0;
      });
      shown.textContent = count + " of " + rows.length + " shown";
    }
    filter.addEventListener("input", apply);
    severity.addEventListener("change", apply);
    apply();
  }

  // Zoom: the chart's layout x of everything placed in time is in data-x (data-x2); a view is a
  // window [a, b] of layout x stretched over the plot.  Ticks follow scale.py's rule.
  var SVG = "http://www.w3.org/2000/svg", SPACING = 80;
  function tickStep(least) {
    var power = Math.pow(10, Math.max(0, Math.floor(Math.log10(Math.max(least, 1)))));
    return [1, 2, 5, 10].map(function (m) { return m * power; }).filter(function (s) { return s >= least; })[0];
  }
  function label(offset, step) {
    var decimals = Math.max(0, 3 - Math.floor(Math.log10(step)));
    return (offset >= 0 ? "+" : "-") + (Math.abs(offset) / 1000).toFixed(decimals);
  }
  function chart(bar) {
    var svg = document.getElementById(bar.getAttribute("data-chart"));
    if (!svg) { return; }
    var left = +svg.getAttribute("data-left"), right = +svg.getAttribute("data-right");
    var origin = +svg.getAttribute("data-origin"), top = +svg.getAttribute("data-top");
    var bottom = +svg.getAttribute("data-bottom");
    var segments = JSON.parse(svg.getAttribute("data-segments"));
    var placed = Array.prototype.slice.call(svg.querySelectorAll("[data-x]"));
    var ticks = svg.querySelector("g.ticks"), view = [left, right];
    function at(x) { return left + (x - view[0]) * (right - left) / (view[1] - view[0]); }
    function draw() {
      placed.forEach(function (el) {
        var x = at(+el.getAttribute("data-x")), x2 = el.getAttribute("data-x2");
        x2 = x2 === null ? x : (el.hasAttribute("data-open") ? right : at(+x2));
        var tag = el.tagName.toLowerCase();
        if (tag === "g") {
          el.setAttribute("transform", "translate(" + x + "," + el.getAttribute("data-y") + ")");
        } else if (tag === "line") {
          el.setAttribute("x1", x); el.setAttribute("x2", x2);
        } else {
          el.setAttribute("x", x);
          if (tag === "rect") { el.setAttribute("width", Math.max(x2 - x, 2)); }
        }
      });
      while (ticks.firstChild) { ticks.removeChild(ticks.firstChild); }
      var zoom = (right - left) / (view[1] - view[0]), last = null, seen = {};
      segments.forEach(function (s) {
        var t0 = s[0], t1 = s[1], x0 = s[2], x1 = s[3];
        if (s[4] || t1 === t0) { return; }  // a folded stretch has no ticks; an instant has no scale
        var perMs = (x1 - x0) / (t1 - t0);
        var step = tickStep(SPACING / (perMs * zoom));
        for (var k = Math.ceil((t0 - origin) / step); origin + k * step <= t1; k++) {
          var x = at(x0 + (origin + k * step - t0) * perMs), text = label(k * step, step);
          if (x < left || x > right || seen[text] || (last !== null && x - last < SPACING / 2)) { continue; }
          seen[text] = true; last = x;
          var line = document.createElementNS(SVG, "line"), mark = document.createElementNS(SVG, "text");
          line.setAttribute("class", "tick"); line.setAttribute("x1", x); line.setAttribute("x2", x);
          line.setAttribute("y1", top); line.setAttribute("y2", bottom + 3);
          mark.setAttribute("class", "axis"); mark.setAttribute("x", x); mark.setAttribute("y", bottom + 14);
          mark.setAttribute("text-anchor", "middle"); mark.textContent = text;
          ticks.appendChild(line); ticks.appendChild(mark);
        }
      });
      svg.setAttribute("data-view", view[0] + "," + view[1]);
    }
    function show(a, b) {
      var width = Math.max(b - a, 4);
      a = Math.max(left, Math.min(a, right - width));
      view = [a, Math.min(right, a + width)];
      draw();
    }
    bar.querySelectorAll("button").forEach(function (button) {
      button.addEventListener("click", function () {
        var how = button.getAttribute("data-zoom"), mid = (view[0] + view[1]) / 2, half = (view[1] - view[0]) / 2;
        if (how === "in") { show(mid - half / 2, mid + half / 2); }
        else if (how === "out") { show(mid - half * 2, mid + half * 2); }
        else { show(left, right); }
      });
    });
    function layoutX(event) {
      var point = svg.createSVGPoint();
      point.x = event.clientX; point.y = event.clientY;
      var x = point.matrixTransform(svg.getScreenCTM().inverse()).x;
      return view[0] + (Math.max(left, Math.min(right, x)) - left) * (view[1] - view[0]) / (right - left);
    }
    var from = null, selection = null;
    svg.addEventListener("mousedown", function (event) {
      from = layoutX(event);
      selection = document.createElementNS(SVG, "rect");
      selection.setAttribute("class", "selection");
      selection.setAttribute("y", top); selection.setAttribute("height", bottom - top);
      selection.setAttribute("x", at(from)); selection.setAttribute("width", 0);
      svg.appendChild(selection);
      event.preventDefault();
    });
    svg.addEventListener("mousemove", function (event) {
      if (from === null) { return; }
      var a = at(Math.min(from, layoutX(event))), b = at(Math.max(from, layoutX(event)));
      selection.setAttribute("x", a); selection.setAttribute("width", b - a);
    });
    function end(event) {
      if (from === null) { return; }
      var to = layoutX(event), a = Math.min(from, to), b = Math.max(from, to);
      svg.removeChild(selection);
      from = null;
      if (at(b) - at(a) > 5) { show(a, b); }
    }
    svg.addEventListener("mouseup", end);
    svg.addEventListener("mouseleave", end);
    draw();
  }
  // A finding and its witnesses light up together: hover or focus either.  A because line
  // inside a finding lights only the witness it names, while the pointer is on it.
  function witnesses() {
    var lights = [];
    document.querySelectorAll("li[data-finding], li[data-witness]").forEach(function (item) {
      var svg = document.getElementById(item.getAttribute("data-chart"));
      if (!svg) { return; }
      var finding = item.getAttribute("data-finding");
      var marks = svg.querySelectorAll(finding ? 'g[data-findings~="' + finding + '"]'
                                               : 'g[data-because~="' + item.getAttribute("data-witness") + '"]');
      var outer = finding ? null : lights.filter(function (l) { return l.item.contains(item); })[0];
      function light(on) {
        item.classList.toggle("lit", on);
        marks.forEach(function (mark) { mark.classList.toggle("lit", on); });
      }
      function enter() { if (outer) { outer.light(false); } light(true); }
      function leave() { light(false); if (outer && outer.item.matches(":hover")) { outer.light(true); } }
      lights.push({item: item, light: light});
      [item].concat(Array.prototype.slice.call(marks)).forEach(function (el) {
        el.addEventListener("mouseenter", enter);
        el.addEventListener("mouseleave", leave);
        el.addEventListener("focusin", enter);
        el.addEventListener("focusout", leave);
      });
    });
  }
  findingsTable();
  witnesses();
  document.querySelectorAll(".zoom").forEach(chart);
})();
"""


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(with_script: bool) -> str:
    """Nothing may load; only our stylesheet (and, on the report page, our script) may apply."""
    script = _sha256(SCRIPT) if with_script else "'none'"
    return (f"default-src 'none'; style-src {_sha256(CSS)}; script-src {script}; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")
