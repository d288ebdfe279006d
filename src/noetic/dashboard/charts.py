"""Charts as SVG, drawn on the server from the numbers the read models hold.

Every chart is a ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` that say what it shows,
and every mark carries the number it stands for (``data-value`` and friends) beside a text label
or a table on the page, so nothing is told by colour alone and tests can check each mark
against its number. Scores are drawn on fixed 0–1 axes; a value's colour comes from
:func:`noetic.operations.task_view.level` on its *oriented* score, so a high density or
uncertainty is red, not green.

This module only computes where each mark goes; the markup is the macros of
``templates/charts.html``, rendered with autoescape, so every value that reaches the page (an
event's kind, a group's name, a label) is escaped by the template engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from noetic.operations.calibration_view import Bin, DriftPoint, Gap
from noetic.operations.run_view import Timeline
from noetic.operations.task_view import AssessmentPoint, level
from noetic.vectors import INVERTED, oriented

LEVEL_CLASS: Final = {
    "excellent": "lv-excellent",
    "good": "lv-good",
    "acceptable": "lv-acceptable",
    "needs attention": "lv-attention",
}
MARKERS: Final = {"preflight": "square", "check": "circle", "postflight": "diamond"}
TEMPLATES: Final = Path(__file__).parent / "templates"


def _n(value: float) -> str:
    """A coordinate: two decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".") or "0"


def _points(pairs: Any) -> str:
    """An SVG ``points`` list: ``x,y x,y …``, numbers only."""
    return " ".join(f"{_n(x)},{_n(y)}" for x, y in pairs)


def templates() -> Environment:
    """The dashboard's templates, every value they show escaped."""
    return Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True
    )


@cache
def _macros() -> Any:
    env = templates()
    env.filters.update(n=_n, g=lambda v: f"{v:g}", fmt=lambda v, spec: format(v, spec))
    return env.get_template("charts.html").module


def _draw(macro: str, **chart: Any) -> Markup:
    return Markup(getattr(_macros(), macro)(chart))


def level_of(name: str, value: float) -> str:
    return level(oriented(name, value))


def bar(name: str, value: float) -> Markup:
    """One vector's bar: its length is the raw value (0–1), its colour the level of the
    oriented score. The page prints the value and the level word beside it."""
    lv = level_of(name, value)
    return _draw(
        "bar",
        title=f"{name} {value:.2f}",
        desc=f"{lv}{' (high is worse)' if name in INVERTED else ''}",
        cls=LEVEL_CLASS[lv],
        width=100 * value,
        value=value,
        level=lv,
    )


def sparkline(values: Sequence[float], *, name: str = "confidence") -> Markup:
    """A small line over 0–1 (one point per value, oldest left)."""
    if not values:
        return Markup("")
    w, h = 120.0, 24.0
    step = w / max(1, len(values) - 1)
    last = values[-1]
    return _draw(
        "sparkline",
        w=w,
        h=h,
        title=f"{name}: {len(values)} value{'' if len(values) == 1 else 's'}",
        desc=f"last {last:.2f}",
        points=_points((i * step, h - v * h) for i, v in enumerate(values)),
        numbers=",".join(f"{v:g}" for v in values),
        cls=LEVEL_CLASS[level_of(name, last)],
        cx=(len(values) - 1) * step,
        cy=h - last * h,
    )


def trajectory(points: Sequence[AssessmentPoint], threshold: float | None = None) -> Markup:
    """Overall confidence at each assessment, PREFLIGHT → CHECKs → POSTFLIGHT: x is the
    assessment's order, y its confidence; markers by phase (square, circle, diamond) and level
    colour, a dashed line at the profile's threshold. Over 200 points only the PREFLIGHT and
    POSTFLIGHT keep their markers."""
    if not points:
        return Markup("")
    left, top, w, h = 34.0, 8.0, 560.0, 180.0
    n = len(points)
    step = w / max(1, n - 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        return left + i * step, top + h - v * h

    marks = []
    for i, p in enumerate(points):
        if n > 200 and p.phase == "check":
            continue
        x, y = xy(i, p.confidence)
        marks.append(
            {
                "x": _n(x),
                "y": _n(y),
                "square": f"{_n(x - 4)}",
                "square_y": f"{_n(y - 4)}",
                "diamond": f"{_n(x)},{_n(y - 5)} {_n(x + 5)},{_n(y)} {_n(x)},{_n(y + 5)} "
                f"{_n(x - 5)},{_n(y)}",
                "cls": LEVEL_CLASS[level(p.confidence)],
                "point": p,
                "value": f"{p.confidence:g}",
                "label": f"{p.confidence:.2f}",
                "shape": MARKERS.get(p.phase, "circle"),
            }
        )
    first, last = points[0], points[-1]
    return _draw(
        "trajectory",
        width=left + w + 10,
        height=top + h + 12,
        title="Confidence across the task",
        desc=f"{n} assessment{'' if n == 1 else 's'}, from {first.phase.upper()} "
        f"{first.confidence:.2f} to {last.phase.upper()} {last.confidence:.2f}",
        left=left,
        right=left + w,
        grid=[{"value": t, "y": top + h - t * h} for t in (0.0, 0.5, 0.7, 0.8, 0.9, 1.0)],
        threshold=threshold,
        threshold_y=None if threshold is None else top + h - threshold * h,
        line=_points(xy(i, p.confidence) for i, p in enumerate(points)),
        marks=marks,
    )


def reliability(bins: Sequence[Bin], maps: Sequence[Any] = ()) -> Markup:
    """The reliability diagram: stated confidence (x) against observed success (y), one point
    per bin sized by its count and labelled with it, a vertical bar for the 95% interval of the
    observed rate, and the diagonal a calibrated agent would follow. Below it, the count in
    each bin as a histogram. Each recalibration map in force (``maps``: the report's
    ``recalibration`` rows) is drawn over it as a line, stated → calibrated."""
    left, top, side, hist = 40.0, 10.0, 300.0, 60.0

    def x(v: float) -> float:
        return left + v * side

    def y(v: float) -> float:
        return top + side - v * side

    most = max([b.count for b in bins] + [1])
    hist_top = y(0) + 42
    marks = []
    for b in bins:
        cx, cy = x(b.mean_confidence), y(b.observed)
        r = 3 + 7 * (b.count / most) ** 0.5
        marks.append(
            {
                "bin": b,
                "cx": cx,
                "cy": cy,
                "r": r,
                "whisker_low": y(b.interval.low),
                "whisker_high": y(b.interval.high),
                "label_y": max(cy - r, top + 9),
                "hist_x": x(b.low),
                "hist_y": hist_top + hist * (1 - b.count / most),
                "hist_w": max(1.0, (b.high - b.low) * side - 1),
                "hist_h": hist * b.count / most,
            }
        )
    total = sum(b.count for b in bins)
    return _draw(
        "reliability",
        width=left + side + 30,
        height=hist_top + hist + 6,
        title="Reliability diagram",
        desc=f"{len(bins)} bin{'' if len(bins) == 1 else 's'} over {total} "
        f"task{'' if total == 1 else 's'}; points on the diagonal are calibrated, below it "
        "overconfident, above it underconfident",
        left=left,
        right=x(1),
        top=y(1),
        bottom=y(0),
        middle_x=x(0.5),
        middle_y=y(0.5),
        ticks=[{"value": t, "x": x(t), "y": y(t)} for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)],
        bins=marks,
        maps=[
            {"map": m, "points": " ".join(f"{_n(x(a))},{_n(y(q))}" for a, q in m.curve)}
            for m in maps
            if m.in_force
        ],
    )


def gaps(rows: Sequence[Gap], *, label: str) -> Markup:
    """The overconfidence gap per group as bars from zero (right: overconfident, left:
    underconfident), each with its 95% interval when there is one."""
    if not rows:
        return Markup("")
    reach = max(
        [0.2]
        + [abs(g.gap) for g in rows]
        + [max(abs(g.interval.low), abs(g.interval.high)) for g in rows if g.interval]
    )
    reach = min(1.0, -(-reach * 10 // 1) / 10)
    name_w, w, row_h = 130.0, 300.0, 22.0
    zero = name_w + w / 2

    def x(v: float) -> float:
        return zero + v / reach * (w / 2)

    bars = []
    for i, g in enumerate(rows):
        a, b = sorted((x(0), x(g.gap)))
        bars.append(
            {
                "gap": g,
                "top": i * row_h,
                "x": a,
                "width": max(b - a, 0.5),
                "whisker": (x(g.interval.low), x(g.interval.high)) if g.interval else None,
            }
        )
    return _draw(
        "gaps",
        width=name_w + w + 10,
        height=row_h * len(rows) + 16,
        title=f"Overconfidence gap by {label}",
        desc="bars right of zero: stated confidence above outcomes (overconfident); left: below",
        zero=zero,
        rows_h=row_h * len(rows),
        reach=reach,
        low_x=x(-reach),
        high_x=x(reach),
        name_x=name_w - 6,
        rows=bars,
    )


def drift(path: Sequence[DriftPoint], alarms: Sequence[Any]) -> Markup:
    """The running gap (stated − observed over the last 20 outcomes) per outcome, with a
    marked line at each outcome where the drift monitor raised an alarm."""
    if not path:
        return Markup("")
    left, top, w, h = 40.0, 10.0, 560.0, 140.0
    n = len(path)
    step = w / max(1, n - 1)

    def x(i: int) -> float:
        return left + (i - 1) * step

    def y(v: float) -> float:
        return top + h / 2 - v * h  # ±0.5 fills the height

    return _draw(
        "drift",
        width=left + w + 10,
        height=top + h + 10,
        title="Calibration over time",
        desc=f"running gap over {n} outcome{'' if n == 1 else 's'}; {len(alarms)} drift "
        f"alarm{'' if len(alarms) == 1 else 's'}",
        left=left,
        right=left + w,
        top=top,
        bottom=top + h,
        grid=[{"value": t, "y": y(t)} for t in (-0.5, -0.25, 0.0, 0.25, 0.5)],
        line=_points((x(p.index), y(max(-0.5, min(0.5, p.gap)))) for p in path),
        alarms=[{"alarm": a, "x": x(a.at)} for a in alarms if 1 <= a.at <= n],
    )


def timeline(t: Timeline) -> Markup:
    """Lanes per engine; a bar for each phase that began and ended, a tick for every other
    event (refusals, failures and escalations marked). Time runs left to right."""
    if not t.items:
        return Markup("")
    left, lane_h, w = 80.0, 26.0, 560.0
    span = max(t.duration_ms, 1.0)

    def x(ms: float) -> float:
        return left + ms / span * w

    lanes = [
        {
            "name": lane,
            "top": i * lane_h,
            "spans": [
                {"span": s, "x": x(s.start_ms), "width": max(1.5, s.ms / span * w)}
                for s in t.spans
                if s.lane == lane
            ],
            "ticks": [
                {"item": it, "x": x(it.ms)}
                for it in t.items
                if it.lane == lane and it.kind not in _SPAN_KINDS
            ],
        }
        for i, lane in enumerate(t.lanes)
    ]
    events, count = len(t.items), len(t.lanes)
    return _draw(
        "timeline",
        width=left + w + 10,
        height=lane_h * count + 4,
        title="Run timeline",
        desc=f"{events} event{'' if events == 1 else 's'} on {count} "
        f"lane{'' if count == 1 else 's'} over {t.duration_ms:.0f} ms",
        left=left,
        right=left + w,
        lane_h=lane_h,
        lanes=lanes,
    )


_SPAN_KINDS: Final = frozenset({"phase_entered", "phase_completed"})
