"""Timelines as inline SVG, drawn to scale: one lane per Timeline.lane, and one row per task across a report.

Time runs left to right on one scale (scale.Scale: long quiet stretches
folded and marked).  Each op is a bar from its start to its end labelled
with its duration, an instant is a mark; calls, rollbacks, verifies and
lock leases each have their own shape and colour (the page's legend names
them), and the outcome colours the bar's outline and end mark.  Ops of a
step that overlap in time go on separate tracks of its lane, so a rollback
in flight beside a retry is two bars, not one on top of the other; another
task's lease of the same lock has its own lane.

Every event is a link to its row in the event table below the chart and has
a tooltip with the log line and the findings it witnesses.  Everything
placed in time carries its layout x in `data-x` (and `data-x2`) for the
page's zoom; the SVG uses classes and presentation attributes only (no
`style` attributes), so the Content-Security-Policy can stay hash-only.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from html import escape

from nonatomic.replay.report.model import Row, Span, Timeline, clock, duration, extras, seconds
from nonatomic.replay.report.scale import Scale

LABEL_WIDTH = 240
LABEL_CHARS = 36
LABEL_LINES = 3
PLOT_WIDTH = 800
INSET = 14
"""The plot's inner margin on the left: a mark at the first instant is not cut by the lane labels."""
OPEN_END = 16
"""Room right of the plot for the arrows of ops and leases still open when the log ends."""
TOP = 24
"""The band above the lanes, where findings are numbered."""
TRACK = 20
LINE = 13
AXIS_HEIGHT = 34
TOOLTIP_EXTRAS = 300
FOLD_LABEL_SPACING = 56
CHAR_PX = 6.2
"""About one character of the 10 px labels, to tell whether a duration fits inside its bar."""
_MARK = {"call": "circle", "rollback": "square", "verify": "diamond"}
_SHAPES = {"circle": '<circle r="5"/>', "square": '<rect x="-4.5" y="-4.5" width="9" height="9"/>',
           "diamond": '<path d="M0,-6 L6,0 L0,6 L-6,0 Z"/>', "cap": '<rect x="-1.5" y="-7" width="3" height="14"/>',
           "task": '<path d="M-5,-6 L5,0 L-5,6 Z"/>', "end": '<rect x="-5" y="-5" width="10" height="10"/>',
           "acquire": '<path d="M-4,-8 L4,-8 L4,-5 L-1,-5 L-1,8 L-4,8 Z"/>',
           "release": '<path d="M-4,8 L4,8 L4,5 L-1,5 L-1,-8 L-4,-8 Z"/>', "expiry": '<circle r="4.5"/>'}


def escape_html(value: object) -> str:
    """A value as HTML text or attribute value (quotes escaped too)."""
    return escape(str(value), quote=True)


def svg(t: Timeline, anchor: str) -> str:
    """The chart of `t`; `anchor` prefixes the ids of the event rows and findings it links to."""
    return _Chart(t, anchor).draw()


def overview(timelines: Sequence[Timeline], anchors: Sequence[str]) -> str:
    """One row per task over the whole report (Jepsen's timeline): each task's ops and leases to one scale."""
    return _Overview(timelines, anchors).draw()


class _Plot:
    """What both charts share: the scale, the axis, the bars and their zoom attributes."""

    scale: Scale
    origin: int
    height: int
    bottom: int

    def _frame(self, anchor: str, label: str) -> tuple[str, str]:
        width = LABEL_WIDTH + PLOT_WIDTH + OPEN_END
        segments = [[s.t0, s.t1, round(s.x0, 2), round(s.x1, 2), int(s.folded)] for s in self.scale.segments]
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" id="{anchor}-chart" class="chart" width="{width}" '
                f'height="{self.height}" viewBox="0 0 {width} {self.height}" role="img" '
                f'aria-label="{escape_html(label)}" data-left="{LABEL_WIDTH + INSET}" '
                f'data-right="{LABEL_WIDTH + PLOT_WIDTH}" data-origin="{self.origin}" '
                f'data-top="{TOP}" data-bottom="{self.bottom}" '
                f'data-segments="{escape_html(json.dumps(segments))}">'
                f'<defs><clipPath id="{anchor}-clip"><rect x="{LABEL_WIDTH}" y="0" width="{PLOT_WIDTH + OPEN_END}" '
                f'height="{self.height}"/></clipPath></defs>')
        return head, f'<g class="plot" clip-path="url(#{anchor}-clip)">'

    def folds(self) -> list[str]:
        out, last = [], None
        for s in self.scale.folds:
            mid = (s.x0 + s.x1) / 2
            out.append(f'<rect class="fold" x="{s.x0:.1f}" width="{s.x1 - s.x0:.1f}" y="{TOP}" '
                       f'height="{self.bottom - TOP}" data-x="{s.x0:.1f}" data-x2="{s.x1:.1f}"><title>quiet for '
                       f'{duration(s.t1 - s.t0)}: folded (not to scale)</title></rect>')
            if last is None or mid - last >= FOLD_LABEL_SPACING:  # folds side by side: the tooltip tells
                out.append(f'<text class="fold-label" x="{mid:.1f}" y="{self.bottom + 26}" text-anchor="middle" '
                           f'data-x="{mid:.1f}">≈{duration(s.t1 - s.t0)}</text>')
                last = mid
        return out

    def axis(self) -> list[str]:
        ticks = "".join(f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{self.bottom + 3}"/>'
                        f'<text class="axis" x="{x:.1f}" y="{self.bottom + 14}" text-anchor="middle">{text}</text>'
                        for x, text in self.scale.ticks(self.origin))
        return [f'<g class="ticks">{ticks}</g>']

    def axis_title(self) -> str:
        return (f'<text class="axis" x="6" y="{self.bottom + 14}">s since {clock(self.origin)} UTC</text>'
                f'<text class="axis" x="6" y="{self.bottom + 26}">to scale; ▥ quiet stretch folded</text>')

    def bar(self, t: Timeline, s: Span, y: float, other: bool = False, crowded: bool = False) -> list[str]:
        """A span of `t` as a bar (or, for an instant, only its doubt), at lane centre `y`;
        `crowded`: label a duration only inside its bar (the overview has no tracks to keep labels apart)."""
        x0 = self.scale.x(t.rows[s.start].ts_ms)
        x1 = self.right if s.end is None else self.scale.x(t.rows[s.end].ts_ms)
        open_end = ' data-open="1"' if s.end is None else ""
        out = []
        if s.kind == "lease":
            cls = f"lease {escape_html(s.outcome)}" + (" other" if other else "")
            out.append(f'<rect class="{cls}" x="{x0:.1f}" y="{y - 8}" width="{max(x1 - x0, 2):.1f}" height="16" '
                       f'data-x="{x0:.1f}" data-x2="{x1:.1f}"{open_end}><title>lock lease ({escape_html(s.outcome)}'
                       f'{"" if s.end is None else ", " + duration(t.rows[s.end].ts_ms - t.rows[s.start].ts_ms)})'
                       f'</title></rect>')
        elif s.end is not None and s.end != s.start:
            out.append(f'<rect class="op {escape_html(s.kind)} {escape_html(s.outcome)}" x="{x0:.1f}" y="{y - 6}" '
                       f'width="{max(x1 - x0, 2):.1f}" height="12" data-x="{x0:.1f}" data-x2="{x1:.1f}"/>')
        elif s.end is None:
            out.append(f'<rect class="op {escape_html(s.kind)} open" x="{x0:.1f}" y="{y - 6}" width="{max(x1 - x0, 2):.1f}" '
                       f'height="12" data-x="{x0:.1f}" data-x2="{x1:.1f}"{open_end}/>')
        if s.end is not None and s.end != s.start or s.kind == "lease" and s.end is not None:
            text = duration(t.rows[s.end].ts_ms - t.rows[s.start].ts_ms)
            wide = len(text) * CHAR_PX + 6
            inside = x1 - x0 >= wide
            # a short bar is labelled after its end, or before its start at the plot's right edge
            before = not inside and x1 + wide > self.right + OPEN_END
            if crowded and not inside:
                text = ""
            tx = x0 + 3 if inside else x0 - 3 if before else x1 + 3
            anchor = ' text-anchor="end"' if before else ""
            if text:
                out.append(f'<text class="dur{"" if inside else " outside"}" x="{tx:.1f}" y="{y + 3.5}" '
                           f'data-x="{tx:.1f}"{anchor}>{text}</text>')
        if s.dangling:
            since = self.scale.x(t.rows[s.start if s.end is None else s.end].ts_ms)
            until = self.right if s.settled is None else self.scale.x(t.rows[s.settled].ts_ms)
            what = "never settled" if s.settled is None else f"until the verify at #{t.rows[s.settled].pos}"
            settled = ' data-open="1"' if s.settled is None else ""
            out.append(f'<line class="dangling" x1="{since:.1f}" x2="{until:.1f}" y1="{y}" y2="{y}" '
                       f'data-x="{since:.1f}" data-x2="{until:.1f}"{settled}>'
                       f'<title>outcome unknown: the effect may still land, {escape_html(what)}</title></line>')
        if s.end is None or s.dangling and s.settled is None:
            out.append(f'<path class="arrow{" lease-open" if s.kind == "lease" else ""}" '
                       f'd="M{self.right + 2},{y - 5} L{self.right + 11},{y} L{self.right + 2},{y + 5} Z"/>')
        return out

    @property
    def right(self) -> int:
        return LABEL_WIDTH + PLOT_WIDTH


class _Chart(_Plot):
    def __init__(self, t: Timeline, anchor: str) -> None:
        self.t, self.anchor = t, anchor
        self.origin = t.start_ms
        self.scale = Scale(t.times(), t.busy(), LABEL_WIDTH + INSET, PLOT_WIDTH - INSET)
        self.track_of_span, self.track_of_row, tracks = self._tracks()
        self.labels = [textwrap.wrap(lane.label, LABEL_CHARS, max_lines=LABEL_LINES, placeholder=" …") or [""]
                       for lane in t.lanes]
        heights = [max(tracks[i] * TRACK, len(self.labels[i]) * LINE) + 8 for i in range(len(t.lanes))]
        self.tops = [TOP + sum(heights[:i]) for i in range(len(heights))]
        self.heights = heights
        self.bottom = TOP + sum(heights)
        self.height = self.bottom + AXIS_HEIGHT

    def _tracks(self) -> tuple[dict[int, int], dict[int, int], list[int]]:
        """Tracks of each lane: overlapping spans (a bar with its label and its doubt) on separate ones."""
        ends: dict[int, list[float]] = {}
        of_span: dict[int, int] = {}
        of_row: dict[int, int] = {}
        order = sorted(range(len(self.t.spans)), key=lambda k: (self.t.spans[k].start, k))
        for k in order:
            s = self.t.spans[k]
            x0, x1 = self._extent(s)
            lane = ends.setdefault(s.lane, [])
            track = next((n for n, end in enumerate(lane) if end + 2 < x0), len(lane))
            if track == len(lane):
                lane.append(x1)
            lane[track] = x1
            of_span[k] = track
            for row in (s.start, s.end):
                if row is not None:
                    of_row.setdefault(row, track)
        return of_span, of_row, [max(1, len(ends.get(i, ()))) for i in range(len(self.t.lanes))]

    def _extent(self, s: Span) -> tuple[float, float]:
        rows = self.t.rows
        x0 = self.scale.x(rows[s.start].ts_ms) - 7
        x1 = self.right + OPEN_END if s.end is None else self.scale.x(rows[s.end].ts_ms) + 7
        if s.end is not None and s.end != s.start:
            text = duration(rows[s.end].ts_ms - rows[s.start].ts_ms)
            if x1 - x0 - 14 < len(text) * CHAR_PX + 6:
                x1 += len(text) * CHAR_PX + 4
        if s.dangling:
            x1 = self.right + OPEN_END if s.settled is None else max(x1, self.scale.x(rows[s.settled].ts_ms))
        return x0, x1

    def y(self, lane: int, track: int = 0) -> float:
        return self.tops[lane] + 4 + TRACK * track + TRACK / 2

    def draw(self) -> str:
        head, plot = self._frame(self.anchor, f"timeline of task {self.t.task_id}")
        return "".join([head, *self.lanes(), plot, *self.folds(), *self.axis(), *self.omitted(), *self.edges(),
                        *self.steps(), *self.spans(), *self.events(), "</g>", self.axis_title(), "</svg>"])

    def lanes(self) -> list[str]:
        out = []
        for i, lane in enumerate(self.t.lanes):
            lines = "".join(f'<tspan x="6" dy="{0 if n == 0 else LINE}">{escape_html(text)}</tspan>'
                            for n, text in enumerate(self.labels[i]))
            first = self.tops[i] + (self.heights[i] - LINE * (len(self.labels[i]) - 1)) / 2 + 4
            kind = " other" if lane.other_task else ""
            out.append(f'<rect class="lane{" odd" if i % 2 else ""}{kind}" x="0" y="{self.tops[i]}" '
                       f'width="{self.right + OPEN_END}" height="{self.heights[i]}"/>'
                       f'<text class="lane-label" y="{first:.1f}">{lines}<title>{escape_html(lane.label)}</title></text>')
        return out

    def omitted(self) -> list[str]:
        """Runs of events left out (the cap on events drawn), at the time of the event before them."""
        out = []
        for row in self.t.rows:
            if row.kind == "gap":
                x = self.scale.x(row.ts_ms)
                out.append(f'<rect class="omitted" x="{x + 1:.1f}" y="{TOP}" width="5" height="{self.bottom - TOP}" '
                           f'data-x="{x + 1:.1f}" data-x2="{x + 6:.1f}"><title>{escape_html(row.text)}</title></rect>')
        return out

    def edges(self) -> list[str]:
        """The task's start and end, across every lane."""
        out = []
        for row in self.t.rows:
            if row.role in ("task_start", "task_end"):
                x = self.scale.x(row.ts_ms)
                out.append(f'<line class="edge" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{self.bottom}" '
                           f'data-x="{x:.1f}"/>')
        return out

    def steps(self) -> list[str]:
        """Each step as the parent of its ops (Jaeger's nesting): a thin bar over its lane from its
        first op's start to its last op's end."""
        reach: dict[int, tuple[int, int]] = {}
        for s in self.t.spans:
            if s.kind != "lease" and self.t.lanes[s.lane].key.isdigit():
                t0, t1 = self.t.rows[s.start].ts_ms, self.t.rows[s.start if s.end is None else s.end].ts_ms
                low, high = reach.get(s.lane, (t0, t1))
                reach[s.lane] = (min(low, t0), max(high, t1))
        out = []
        for lane, (t0, t1) in reach.items():
            x0, x1 = self.scale.x(t0), self.scale.x(t1)
            out.append(f'<rect class="step-span" x="{x0:.1f}" y="{self.tops[lane] + 1}" width="{max(x1 - x0, 2):.1f}" '
                       f'height="3" data-x="{x0:.1f}" data-x2="{x1:.1f}"><title>{escape_html(self.t.lanes[lane].label)}: '
                       f'{duration(t1 - t0)} from its first op to its last</title></rect>')
        return out

    def spans(self) -> list[str]:
        out = []
        for k, s in enumerate(self.t.spans):
            out += self.bar(self.t, s, self.y(s.lane, self.track_of_span[k]), bool(self.t.lanes[s.lane].other_task))
        return out

    def events(self) -> list[str]:
        out = []
        kinds = {}
        for s in self.t.spans:
            kinds.setdefault(s.start, s.kind)
        for i, row in enumerate(self.t.rows):
            if row.kind == "gap":
                continue
            x, y = self.scale.x(row.ts_ms), self.y(row.lane or 0, self.track_of_row.get(i, 0))
            shape = _shape(row, kinds.get(i))
            op = escape_html(row.event.get("op", "")) if row.kind != "expiry" else "expiry"
            found = (f' data-findings="{" ".join(map(str, row.marks))}" '
                     f'data-because="{" ".join(f"{n}.{k}" for n, k, _ in row.because)}"' if row.marks else "")
            mark = (f'<g class="ev {escape_html(row.outcome)} {escape_html(row.role)} {op}" '
                    f'transform="translate({x:.1f},{y:.1f})" '
                    f'data-x="{x:.1f}" data-y="{y:.1f}" data-ts="{row.ts_ms}"{found}>{_SHAPES[shape]}')
            if row.marks:
                mark += '<circle class="witness" r="10"/>'
            mark += f"<title>{escape_html(self._tooltip(row))}</title></g>"
            if row.marks:
                label = ",".join(map(str, row.marks))
                mark = (f'<line class="mark-line" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 4}" y2="{y - 11:.1f}" '
                        f'data-x="{x:.1f}"/><text class="mark" x="{x:.1f}" y="{TOP - 7}" text-anchor="middle" '
                        f'data-x="{x:.1f}">{label}</text>') + mark
            out.append(f'<a href="#{self.anchor}-e{row.pos}">{mark}</a>' if row.kind == "event" else mark)
        return out

    def _tooltip(self, row: Row) -> str:
        t = self.t
        number = f"#{row.pos}  " if row.kind == "event" else ""
        text = [f"{number}{clock(row.ts_ms)} UTC ({'+' if row.ts_ms >= t.start_ms else ''}"
                f"{seconds(row.ts_ms - t.start_ms)} s)", row.text]
        if row.kind in ("event", "foreign"):
            text.append(f"{row.event['file']}:{row.event['line']}")
        for n in row.marks:
            f = t.findings[n - 1]
            why = [clause for m, _k, clause in row.because if m == n]
            text += [f"[{n}] {f['code']} {f['name']}", *(f"    {clause}" for clause in why)] if why else [
                f"[{n}] {f['code']} {f['name']}: {f['message']}"]
        more = " ".join(f"{k}={v}" for k, v in extras(row).items())
        if more:
            text.append(more if len(more) <= TOOLTIP_EXTRAS else more[: TOOLTIP_EXTRAS - 1] + "…")
        return "\n".join(text)


def _shape(row: Row, kind: str | None) -> str:
    if row.role in ("task_start", "task_end"):
        return "task" if row.role == "task_start" else "end"
    if row.role in ("acquire", "release", "expiry"):
        return row.role
    if row.role == "start":
        return "cap"
    return _MARK.get(kind or row.event.get("op"), "circle")


class _Overview(_Plot):
    """Jepsen's view: a row per task, its ops and leases on the report's one time scale."""

    ROW = 36

    def __init__(self, timelines: Sequence[Timeline], anchors: Sequence[str]) -> None:
        self.timelines, self.anchors = timelines, anchors
        self.origin = min(t.start_ms for t in timelines)
        self.scale = Scale([ms for t in timelines for ms in t.times()], [b for t in timelines for b in t.busy()],
                           LABEL_WIDTH + INSET, PLOT_WIDTH - INSET)
        self.bottom = TOP + self.ROW * len(timelines)
        self.height = self.bottom + AXIS_HEIGHT

    def draw(self) -> str:
        head, plot = self._frame("overview", "every drawn task on one time scale")
        out = [head]
        for i, (t, anchor) in enumerate(zip(self.timelines, self.anchors)):
            y = TOP + self.ROW * i
            name = t.task_id if len(t.task_id) <= LABEL_CHARS else t.task_id[: LABEL_CHARS - 1] + "…"
            out.append(f'<rect class="lane{" odd" if i % 2 else ""}" x="0" y="{y}" width="{self.right + OPEN_END}" '
                       f'height="{self.ROW}"/><a href="#{anchor}"><text class="lane-label" x="6" y="{y + self.ROW / 2 + 4}">'
                       f'{escape_html(name)}<title>task {escape_html(t.task_id)}: {escape_html(t.headline())}</title></text></a>')
        out += [plot, *self.folds(), *self.axis()]
        for i, t in enumerate(self.timelines):
            y = TOP + self.ROW * i + self.ROW / 2
            for s in t.spans:
                if not t.lanes[s.lane].other_task:  # leases below the ops, as in the task's own chart
                    out += self.bar(t, s, y + 8 if s.kind == "lease" else y - 6, crowded=True)
            for row in t.rows:
                if row.kind == "event" and (row.marks or row.role in ("task_start", "task_end")):
                    x = self.scale.x(row.ts_ms)
                    ring = '<circle class="witness" r="8"/>' if row.marks else ""
                    out.append(f'<g class="ev {escape_html(row.outcome)} {escape_html(row.role)}" transform="translate({x:.1f},{y - 6})" '
                               f'data-x="{x:.1f}" data-y="{y - 6}" data-ts="{row.ts_ms}">{_SHAPES[_shape(row, None)]}{ring}'
                               f'<title>{escape_html(row.text)}</title></g>')
        out += ["</g>", self.axis_title(), "</svg>"]
        return "".join(out)


LEGEND: Mapping[str, tuple[str, str]] = {
    "call": ("call (bar: start to end, with its duration; ● an instant call)",
             '<rect class="op call ok" x="2" y="3" width="24" height="10"/>'),
    "rollback": ("rollback (■ an instant one)", '<rect class="op rollback ok" x="2" y="3" width="24" height="10"/>'),
    "verify": ("verify (◆ an instant one)", '<rect class="op verify ok" x="2" y="3" width="24" height="10"/>'),
    "lease": ("lock lease of this task (acquire to release or TTL expiry)",
              '<rect class="lease released" x="2" y="1" width="24" height="14"/>'),
    "lease-other": ("lock lease of another task",
                    '<rect class="lease released other" x="2" y="1" width="24" height="14"/>'),
    "ok": ("outcome ok", '<g class="ev ok end" transform="translate(14,8)"><circle r="5"/></g>'),
    "failed": ("failed", '<g class="ev failed end" transform="translate(14,8)"><circle r="5"/></g>'),
    "unknown": ("outcome unknown (timeout)", '<g class="ev unknown end" transform="translate(14,8)"><circle r="5"/></g>'),
    "dangling": ("may still take effect (until a verify settles it; ▶ never settled)",
                 '<line class="dangling" x1="2" x2="26" y1="8" y2="8"/>'),
    "witness": ("n: witness of finding n", '<circle class="witness" cx="14" cy="8" r="6"/>'),
    "step": ("a step, first op to last (its ops nest below)",
             '<rect class="step-span" x="2" y="6" width="24" height="3"/>'),
    "task": ("task start / end", '<line class="edge" x1="14" x2="14" y1="0" y2="16"/>'),
    "fold": ("quiet stretch folded (its length below the axis)", '<rect class="fold" x="8" y="0" width="12" height="16"/>'),
    "omitted": ("events not drawn", '<rect class="omitted" x="11" y="0" width="5" height="16"/>'),
}
"""Every mark a chart can hold, with its swatch (drawn with the charts' own classes)."""


def legend() -> str:
    return '<p class="legend">' + "".join(
        f'<span class="key" data-key="{key}"><svg width="28" height="16" viewBox="0 0 28 16" aria-hidden="true">'
        f"{swatch}</svg>{escape_html(text)}</span>" for key, (text, swatch) in LEGEND.items()) + "</p>"
