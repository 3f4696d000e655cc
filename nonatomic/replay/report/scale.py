"""Time to pixels for the SVG charts: to scale, with long quiet stretches folded.

A stretch with no event and no op in flight that is longer than
FOLD_MIN_MS and FOLD_FACTOR times the median time between two moments
drawn is drawn FOLD_WIDTH wide (narrower when many share the plot) and
marked with its length, so a 30 s wait does not squeeze the second that
matters, and tasks an hour apart each keep their detail; a poll every 3 s
is drawn to scale, not folded 3 s at a time.  Everything else is drawn to
one scale (Jaeger's rule).  Ticks are
multiples of a round step (1, 2 or 5 times a power of ten) at least
TICK_SPACING apart, labelled with just enough decimals for that step, so no
two labels are the same.  The page script draws the ticks of a zoomed
window by the same rule from the segments the chart carries (`data-segments`).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

FOLD_MIN_MS = 1_000
FOLD_FACTOR = 10
FOLD_WIDTH = 32
TICK_SPACING = 80
"""Pixels between ticks at least; the page script uses the same figure (assets.SCRIPT)."""


@dataclass(frozen=True)
class Segment:
    t0: int
    t1: int
    x0: float
    x1: float
    folded: bool


class Scale:
    """A piecewise-linear map from epoch milliseconds to x, over [x0, x0 + width]."""

    def __init__(self, times: Iterable[int], busy: Iterable[tuple[int, int]], x0: float, width: float) -> None:
        moments = sorted(set(times))
        self.start, self.end = moments[0], moments[-1]
        busy = sorted(busy)
        gaps = sorted(b - a for a, b in zip(moments, moments[1:]))
        least = max(FOLD_MIN_MS, FOLD_FACTOR * gaps[(len(gaps) - 1) // 2]) if gaps else 0  # the lower median
        folds = [(a, b) for a, b in zip(moments, moments[1:]) if b - a > least and not _covered(busy, a, b)]
        drawn_ms = (self.end - self.start) - sum(b - a for a, b in folds)
        fold_width = min(FOLD_WIDTH, width / 2 / len(folds)) if folds else 0  # many folds share half the width
        room = width - fold_width * len(folds)
        self.px_per_ms = room / drawn_ms if drawn_ms else 0.0
        self.segments: list[Segment] = []
        t, x = self.start, x0 if drawn_ms else x0 + room / 2
        for a, b in [*folds, (self.end, self.end)]:
            if a > t or not self.segments:
                self.segments.append(Segment(t, a, x, x + (a - t) * self.px_per_ms, False))
                x = self.segments[-1].x1
            if b > a:
                self.segments.append(Segment(a, b, x, x + fold_width, True))
                x += fold_width
            t = b
        self._starts = [s.t0 for s in self.segments]

    def x(self, ms: int) -> float:
        s = self.segments[max(0, bisect_right(self._starts, ms) - 1)]
        if s.t1 == s.t0:
            return s.x0
        return s.x0 + (min(max(ms, s.t0), s.t1) - s.t0) * (s.x1 - s.x0) / (s.t1 - s.t0)

    @property
    def folds(self) -> list[Segment]:
        return [s for s in self.segments if s.folded]

    def ticks(self, origin: int) -> list[tuple[float, str]]:
        """(x, label) of the ticks, offsets in seconds from `origin`; labels never repeat."""
        if not self.px_per_ms:
            return [(self.segments[0].x0, label(self.start - origin, 1))]
        step = tick_step(TICK_SPACING / self.px_per_ms)
        out: list[tuple[float, str]] = []
        for s in self.segments:
            if s.folded:
                continue
            k = math.ceil((s.t0 - origin) / step)
            while origin + k * step <= s.t1:
                x, text = self.x(origin + k * step), label(k * step, step)
                if (not out or x - out[-1][0] >= TICK_SPACING / 2) and text not in {t for _, t in out}:
                    out.append((x, text))
                k += 1
        return out


def _covered(busy: list[tuple[int, int]], a: int, b: int) -> bool:
    """Is some op in flight over the whole of (a, b)?"""
    return any(t0 <= a and t1 >= b for t0, t1 in busy)


def tick_step(least_ms: float) -> int:
    """The smallest round step (1, 2, 5 × 10^n ms) of at least `least_ms`."""
    power = 10 ** max(0, math.floor(math.log10(max(least_ms, 1))))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= least_ms)


def label(offset_ms: int, step_ms: int) -> str:
    """An offset in seconds with the decimals its step needs: `+0.25`, `+12`, `-1.5`."""
    decimals = max(0, 3 - math.floor(math.log10(step_ms)))
    return f"{'+' if offset_ms >= 0 else '-'}{abs(offset_ms) / 1000:.{decimals}f}"
