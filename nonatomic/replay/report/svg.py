"""A timeline as an inline SVG swimlane chart: one lane per row of Timeline.lanes, task order across.

Each row of the timeline gets a column, so a 5 ms retry and an hour-long
wait are both readable; the axis gives the time since the task's first event.
Every event is a link to its row in the event table below the chart and has
a tooltip with the log line and the findings it witnesses.  The SVG uses
classes and presentation attributes only (no `style` attributes), so the
page's Content-Security-Policy can stay hash-only.
"""

from __future__ import annotations

from html import escape

from nonatomic.replay.report.model import Row, Timeline, clock, extras, seconds

LABEL_WIDTH = 190
LABEL_CHARS = 27
LANE_HEIGHT = 30
TOP = 22
"""The band above the lanes, where findings are numbered."""
AXIS_HEIGHT = 24
COLUMN_MIN, COLUMN_MAX, CHART_WIDTH = 16, 60, 920
AXIS_LABEL_WIDTH = 56
TOOLTIP_EXTRAS = 300


def escape_html(value: object) -> str:
    """A value as HTML text or attribute value (quotes escaped too)."""
    return escape(str(value), quote=True)


def svg(t: Timeline, anchor: str) -> str:
    """The chart of `t`; `anchor` prefixes the ids of the event rows and findings it links to."""
    chart = _Chart(t)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{chart.width}" height="{chart.height}" '
             f'viewBox="0 0 {chart.width} {chart.height}" role="img" aria-label="{escape_html("timeline of task " + t.task_id)}">']
    parts += chart.lanes() + chart.gaps() + chart.edges() + chart.spans() + chart.events(anchor) + chart.axis()
    parts.append("</svg>")
    return "".join(parts)


class _Chart:
    def __init__(self, t: Timeline) -> None:
        self.t = t
        self.column = max(COLUMN_MIN, min(COLUMN_MAX, CHART_WIDTH // max(len(t.rows), 1)))
        self.right = LABEL_WIDTH + self.column * len(t.rows) + 14  # room for open-ended arrows
        self.width = self.right + 6
        self.bottom = TOP + LANE_HEIGHT * len(t.lanes)
        self.height = self.bottom + AXIS_HEIGHT

    def x(self, row: int) -> int:
        return LABEL_WIDTH + self.column * row + self.column // 2

    @staticmethod
    def y(lane: int) -> int:
        return TOP + LANE_HEIGHT * lane + LANE_HEIGHT // 2

    def lanes(self) -> list[str]:
        out = []
        for i, lane in enumerate(self.t.lanes):
            label = lane.label if len(lane.label) <= LABEL_CHARS else lane.label[: LABEL_CHARS - 1] + "…"
            out.append(f'<rect class="lane{" odd" if i % 2 else ""}" x="0" y="{TOP + LANE_HEIGHT * i}" '
                       f'width="{self.right}" height="{LANE_HEIGHT}"/>'
                       f'<text class="lane-label" x="6" y="{self.y(i) + 4}">{escape_html(label)}<title>{escape_html(lane.label)}</title></text>')
        return out

    def gaps(self) -> list[str]:
        return [f'<rect class="gap" x="{self.x(i) - self.column // 2}" y="{TOP}" width="{self.column}" '
                f'height="{self.bottom - TOP}"><title>{escape_html(row.text)}</title></rect>'
                for i, row in enumerate(self.t.rows) if row.kind == "gap"]

    def edges(self) -> list[str]:
        """The task's start and end, across every lane."""
        return [f'<line class="edge" x1="{self.x(i)}" x2="{self.x(i)}" y1="{TOP}" y2="{self.bottom}"/>'
                for i, row in enumerate(self.t.rows) if row.role in ("task_start", "task_end")]

    def spans(self) -> list[str]:
        out = []
        for s in self.t.spans:
            y = self.y(s.lane)
            x0 = self.x(s.start)
            x1 = self.right - 8 if s.end is None else self.x(s.end)
            if s.kind == "lease":
                out.append(f'<rect class="lease {escape_html(s.outcome)}" x="{x0}" y="{y - 9}" width="{max(x1 - x0, 2)}" '
                           f'height="18" rx="3"><title>lock lease: {escape_html(s.outcome)}</title></rect>')
                if s.end is None:
                    out.append(self._arrow(y, "arrow lease-open"))
                continue
            if s.end is not None and s.end != s.start:
                out.append(f'<rect class="op {escape_html(s.kind)} {escape_html(s.outcome)}" x="{x0}" y="{y - 6}" width="{x1 - x0}" '
                           f'height="12" rx="2"/>')
            if s.dangling:
                since = self.x(s.start if s.end is None else s.end)
                until = self.right - 8 if s.settled is None else self.x(s.settled)
                what = "never settled" if s.settled is None else f"until the verify at #{self.t.rows[s.settled].pos}"
                out.append(f'<line class="dangling" x1="{since}" x2="{until}" y1="{y}" y2="{y}">'
                           f'<title>outcome unknown: the effect may still land, {escape_html(what)}</title></line>')
                if s.settled is None:
                    out.append(self._arrow(y, "arrow"))
        return out

    def _arrow(self, y: int, cls: str) -> str:
        return f'<polygon class="{cls}" points="{self.right - 9},{y - 5} {self.right},{y} {self.right - 9},{y + 5}"/>'

    def events(self, anchor: str) -> list[str]:
        out = []
        for i, row in enumerate(self.t.rows):
            if row.kind == "gap":
                continue
            x, y = self.x(i), self.y(row.lane)
            radius = 6 if row.role in ("task_start", "task_end") else 5
            dot = (f'<circle class="ev {escape_html(row.outcome)} {escape_html(row.role)}" cx="{x}" cy="{y}" r="{radius}">'
                   f'<title>{escape_html(self._tooltip(row))}</title></circle>')
            if row.marks:
                label = ",".join(map(str, row.marks))
                dot += (f'<line class="mark-line" x1="{x}" x2="{x}" y1="{TOP - 4}" y2="{y - 9}"/>'
                        f'<circle class="witness" cx="{x}" cy="{y}" r="9"/>'
                        f'<text class="mark" x="{x}" y="{TOP - 7}" text-anchor="middle">{label}</text>')
            out.append(f'<a href="#{anchor}-e{row.pos}">{dot}</a>' if row.kind == "event" else dot)
        return out

    def _tooltip(self, row: Row) -> str:
        number = f"#{row.pos}  " if row.kind == "event" else ""
        text = [f"{number}{clock(row.ts_ms)} UTC (+{seconds(row.ts_ms - self.t.start_ms)} s)", row.text]
        if row.kind == "event":
            text.append(f"{row.event['file']}:{row.event['line']}")
        for n in row.marks:
            f = self.t.findings[n - 1]
            text.append(f"[{n}] {f['code']} {f['name']}: {f['message']}")
        more = " ".join(f"{k}={v}" for k, v in extras(row).items())
        if more:
            text.append(more if len(more) <= TOOLTIP_EXTRAS else more[: TOOLTIP_EXTRAS - 1] + "…")
        return "\n".join(text)

    def axis(self) -> list[str]:
        every = -(-AXIS_LABEL_WIDTH // self.column)  # ceil: labels must not overlap
        return [f'<text class="axis" x="6" y="{self.height - 8}">seconds since first event</text>'] + [f'<text class="axis" x="{self.x(i)}" y="{self.height - 8}" text-anchor="middle">'
                f'+{seconds(row.ts_ms - self.t.start_ms)}</text>'
                for i, row in enumerate(self.t.rows) if i % every == 0 and row.kind != "gap"]
