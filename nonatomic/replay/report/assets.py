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
svg .lane { fill: #f6f7f9; } svg .lane.odd { fill: #eceef2; }
svg .lane-label { font-weight: 600; } svg .axis { fill: var(--muted); font-size: 10px; }
svg .edge { stroke: #1d232b; stroke-width: 1; stroke-dasharray: 2 3; }
svg .op { fill-opacity: .35; stroke-width: 1.5; }
svg .op.ok, svg .ev.ok { fill: var(--ok); stroke: var(--ok); }
svg .op.failed, svg .ev.failed { fill: var(--failed); stroke: var(--failed); }
svg .op.unknown, svg .op.open, svg .ev.unknown { fill: var(--unknown); stroke: var(--unknown); }
svg .op.other, svg .ev.other { fill: #8a94a3; stroke: #8a94a3; }
svg .op.rollback { fill-opacity: .15; stroke-dasharray: 4 2; }
svg .ev.start, svg .ev.acquire { fill: #fff; stroke-width: 2; }
svg .ev.expiry { fill: #fff; stroke: var(--lease); stroke-width: 2; }
svg .dangling { stroke: var(--unknown); stroke-width: 2.5; stroke-dasharray: 5 4; fill: none; }
svg .arrow { fill: var(--unknown); } svg .arrow.lease-open { fill: var(--lease); }
svg .lease { fill: var(--lease); fill-opacity: .18; stroke: var(--lease); stroke-width: 1.5; }
svg .lease.open { stroke-dasharray: 5 3; }
svg .gap { fill: #e3e5e9; }
svg .witness { fill: none; stroke: var(--mark); stroke-width: 2; }
svg .mark-line { stroke: var(--mark); stroke-width: 1; stroke-dasharray: 2 2; }
svg .mark { fill: var(--mark); font-weight: 700; }
svg a:hover circle, svg a:focus circle { stroke-width: 3; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: .8rem; color: var(--muted); margin: 8px 0; }
.legend .ok { color: var(--ok); } .legend .failed { color: var(--failed); } .legend .unknown { color: var(--unknown); }
.legend .lease { color: var(--lease); } .legend .mark { color: var(--mark); }
"""

SCRIPT = """
(function () {
  "use strict";
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
})();
"""


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(with_script: bool) -> str:
    """Nothing may load; only our stylesheet (and, on the report page, our script) may apply."""
    script = _sha256(SCRIPT) if with_script else "'none'"
    return (f"default-src 'none'; style-src {_sha256(CSS)}; script-src {script}; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")
