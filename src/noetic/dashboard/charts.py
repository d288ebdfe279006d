"""Charts as SVG, drawn on the server from the numbers the read models hold.

Every chart is a ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` that say what it shows,
and every mark carries the number it stands for (``data-value`` and friends) beside a text label
or a table on the page, so nothing is told by colour alone and tests can check each mark
against its number. Scores are drawn on fixed 0–1 axes; a value's colour comes from
:func:`noetic.operations.task_view.level` on its *oriented* score, so a high density or
uncertainty is red, not green.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any, Final

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


def _n(value: float) -> str:
    """A coordinate: two decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".") or "0"


def _svg(width: float, height: float, title: str, desc: str, body: str, cls: str) -> Markup:
    return Markup(
        f'<svg class="chart {cls}" viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
        f'preserveAspectRatio="xMidYMid meet"><title>{escape(title)}</title>'
        f"<desc>{escape(desc)}</desc>{body}</svg>"
    )


def level_of(name: str, value: float) -> str:
    return level(oriented(name, value))


def bar(name: str, value: float) -> Markup:
    """One vector's bar: its length is the raw value (0–1), its colour the level of the
    oriented score. The page prints the value and the level word beside it."""
    lv = level_of(name, value)
    width = 100 * value
    return _svg(
        100,
        10,
        f"{name} {value:.2f}",
        f"{lv}{' (high is worse)' if name in INVERTED else ''}",
        f'<rect class="track" x="0" y="0" width="100" height="10"/>'
        f'<rect class="bar {LEVEL_CLASS[lv]}" x="0" y="0" width="{_n(width)}" height="10" '
        f'data-value="{value:g}" data-level="{lv}"/>',
        "bar-chart",
    )


def sparkline(values: Sequence[float], *, name: str = "confidence") -> Markup:
    """A small line over 0–1 (one point per value, oldest left)."""
    if not values:
        return Markup("")
    w, h = 120.0, 24.0
    step = w / max(1, len(values) - 1)
    pts = " ".join(f"{_n(i * step)},{_n(h - v * h)}" for i, v in enumerate(values))
    last = values[-1]
    body = (
        f'<polyline class="spark" points="{pts}" data-values="'
        f'{",".join(f"{v:g}" for v in values)}"/>'
        f'<circle class="{LEVEL_CLASS[level_of(name, last)]}" cx="{_n((len(values) - 1) * step)}" '
        f'cy="{_n(h - last * h)}" r="2.5"/>'
    )
    return _svg(w, h, f"{name}: {len(values)} values", f"last {last:.2f}", body, "spark-chart")


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

    grid = "".join(
        f'<line class="grid" x1="{_n(left)}" x2="{_n(left + w)}" y1="{_n(top + h - t * h)}" '
        f'y2="{_n(top + h - t * h)}"/><text class="tick" x="{_n(left - 4)}" '
        f'y="{_n(top + h - t * h + 4)}" text-anchor="end">{t:.1f}</text>'
        for t in (0.0, 0.5, 0.7, 0.8, 0.9, 1.0)
    )
    line = " ".join(
        f"{_n(x)},{_n(y)}" for x, y in (xy(i, p.confidence) for i, p in enumerate(points))
    )
    marks = []
    for i, p in enumerate(points):
        if n > 200 and p.phase == "check":
            continue
        x, y = xy(i, p.confidence)
        cls = f"mark {LEVEL_CLASS[level(p.confidence)]}"
        data = f'data-seq="{p.seq}" data-phase="{p.phase}" data-value="{p.confidence:g}"'
        label = f"<title>{p.phase.upper()} #{p.seq}: {p.confidence:.2f} → {p.action}</title>"
        shape = MARKERS.get(p.phase, "circle")
        if shape == "square":
            marks.append(
                f'<rect class="{cls}" x="{_n(x - 4)}" y="{_n(y - 4)}" width="8" '
                f'height="8" {data}>{label}</rect>'
            )
        elif shape == "diamond":
            marks.append(
                f'<polygon class="{cls}" points="{_n(x)},{_n(y - 5)} {_n(x + 5)},{_n(y)} '
                f'{_n(x)},{_n(y + 5)} {_n(x - 5)},{_n(y)}" {data}>{label}</polygon>'
            )
        else:
            marks.append(
                f'<circle class="{cls}" cx="{_n(x)}" cy="{_n(y)}" r="3.5" {data}>{label}</circle>'
            )
    limit = ""
    if threshold is not None:
        y = top + h - threshold * h
        limit = (
            f'<line class="threshold" x1="{_n(left)}" x2="{_n(left + w)}" y1="{_n(y)}" '
            f'y2="{_n(y)}" data-value="{threshold:g}"/><text class="tick" x="{_n(left + w)}" '
            f'y="{_n(y - 3)}" text-anchor="end">threshold {threshold:.2f}</text>'
        )
    body = grid + limit + f'<polyline class="line" points="{line}"/>' + "".join(marks)
    first, last = points[0], points[-1]
    return _svg(
        left + w + 10,
        top + h + 12,
        "Confidence across the task",
        f"{n} assessments, from {first.phase.upper()} {first.confidence:.2f} to "
        f"{last.phase.upper()} {last.confidence:.2f}",
        body,
        "trajectory-chart",
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

    axes = "".join(
        f'<line class="grid" x1="{_n(x(t))}" x2="{_n(x(t))}" y1="{_n(y(0))}" y2="{_n(y(1))}"/>'
        f'<line class="grid" x1="{_n(x(0))}" x2="{_n(x(1))}" y1="{_n(y(t))}" y2="{_n(y(t))}"/>'
        f'<text class="tick" x="{_n(x(t))}" y="{_n(y(0) + 14)}" text-anchor="middle">{t:.1f}</text>'
        f'<text class="tick" x="{_n(left - 6)}" y="{_n(y(t) + 4)}" text-anchor="end">{t:.1f}</text>'
        for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    )
    axes += (
        f'<line class="diagonal" x1="{_n(x(0))}" y1="{_n(y(0))}" x2="{_n(x(1))}" y2="{_n(y(1))}"/>'
        f'<text class="axis" x="{_n(x(0.5))}" y="{_n(y(0) + 30)}" text-anchor="middle">'
        f"stated confidence</text>"
        f'<text class="axis" transform="translate(12 {_n(y(0.5))}) rotate(-90)" '
        f'text-anchor="middle">observed success</text>'
    )
    most = max([b.count for b in bins] + [1])
    marks = []
    hist_top = y(0) + 42
    for b in bins:
        cx, cy = x(b.mean_confidence), y(b.observed)
        r = 3 + 7 * (b.count / most) ** 0.5
        over = "over" if b.gap > 0 else "under"
        marks.append(
            f'<g class="bin" data-low="{b.low:g}" data-high="{b.high:g}" data-count="{b.count}" '
            f'data-confidence="{b.mean_confidence:g}" data-observed="{b.observed:g}" '
            f'data-interval-low="{b.interval.low:g}" data-interval-high="{b.interval.high:g}">'
            f"<title>{b.low:.2f}–{b.high:.2f}: {b.count} tasks, stated {b.mean_confidence:.2f}, "
            f"observed {b.observed:.2f} (95% {b.interval.low:.2f}–{b.interval.high:.2f}), "
            f"{abs(b.gap):.2f} {over}confident</title>"
            f'<line class="whisker" x1="{_n(cx)}" x2="{_n(cx)}" y1="{_n(y(b.interval.low))}" '
            f'y2="{_n(y(b.interval.high))}"/>'
            f'<circle class="point" cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(r)}"/>'
            f'<text class="count" x="{_n(cx + r + 2)}" y="{_n(max(cy - r, top + 9))}">'
            f"{b.count}</text>"
            f'<rect class="hist" x="{_n(x(b.low))}" '
            f'y="{_n(hist_top + hist * (1 - b.count / most))}" '
            f'width="{_n(max(1.0, (b.high - b.low) * side - 1))}" '
            f'height="{_n(hist * b.count / most)}"/></g>'
        )
    for m in maps:
        if not m.in_force:
            continue
        path = " ".join(f"{_n(x(a))},{_n(y(q))}" for a, q in m.curve)
        marks.append(
            f'<g class="map" data-agent="{escape(m.agent)}" data-method="{escape(m.method)}">'
            f"<title>{escape(m.agent)}: the {escape(m.method)} map in force from {m.outcomes} "
            f"outcomes, stated → calibrated</title>"
            f'<polyline class="map-curve" points="{path}"/></g>'
        )
    body = axes + "".join(marks)
    total = sum(b.count for b in bins)
    return _svg(
        left + side + 30,
        hist_top + hist + 6,
        "Reliability diagram",
        f"{len(bins)} bins over {total} tasks; points on the diagonal are calibrated, below it "
        "overconfident, above it underconfident",
        body,
        "reliability-chart",
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

    parts = [
        f'<line class="zero" x1="{_n(zero)}" x2="{_n(zero)}" y1="0" '
        f'y2="{_n(row_h * len(rows))}"/>'
        f'<text class="tick" x="{_n(x(-reach))}" y="{_n(row_h * len(rows) + 12)}">'
        f"−{reach:.1f}</text>"
        f'<text class="tick" x="{_n(x(reach))}" y="{_n(row_h * len(rows) + 12)}" '
        f'text-anchor="end">+{reach:.1f}</text>'
    ]
    for i, g in enumerate(rows):
        top = i * row_h
        a, b = sorted((x(0), x(g.gap)))
        cls = "over" if g.gap > 0 else "under"
        whisker = ""
        if g.interval:
            whisker = (
                f'<line class="whisker" x1="{_n(x(g.interval.low))}" '
                f'x2="{_n(x(g.interval.high))}" y1="{_n(top + 9)}" y2="{_n(top + 9)}"/>'
            )
        parts.append(
            f'<g class="gap" data-group="{escape(g.group)}" data-value="{g.gap:g}" data-n="{g.n}">'
            f'<text class="name" x="{_n(name_w - 6)}" y="{_n(top + 13)}" text-anchor="end">'
            f"{escape(g.group[:18])}</text>"
            f'<rect class="{cls}" x="{_n(a)}" y="{_n(top + 3)}" width="{_n(max(b - a, 0.5))}" '
            f'height="12"/>{whisker}</g>'
        )
    return _svg(
        name_w + w + 10,
        row_h * len(rows) + 16,
        f"Overconfidence gap by {label}",
        "bars right of zero: stated confidence above outcomes (overconfident); left: below",
        "".join(parts),
        "gap-chart",
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

    grid = "".join(
        f'<line class="{"zero" if t == 0 else "grid"}" x1="{_n(left)}" x2="{_n(left + w)}" '
        f'y1="{_n(y(t))}" y2="{_n(y(t))}"/><text class="tick" x="{_n(left - 4)}" '
        f'y="{_n(y(t) + 4)}" text-anchor="end">{t:+.2f}</text>'
        for t in (-0.5, -0.25, 0.0, 0.25, 0.5)
    )
    pts = " ".join(f"{_n(x(p.index))},{_n(y(max(-0.5, min(0.5, p.gap))))}" for p in path)
    marks = "".join(
        f'<g class="alarm" data-at="{a.at}" data-direction="{a.direction}">'
        f"<title>alarm at outcome {a.at}: {a.direction}"
        f"{' (sycophancy-style)' if a.sycophancy else ''}</title>"
        f'<line x1="{_n(x(a.at))}" x2="{_n(x(a.at))}" y1="{_n(top)}" y2="{_n(top + h)}"/>'
        f'<text x="{_n(x(a.at) + 3)}" y="{_n(top + 10)}">⚠ {a.direction}</text></g>'
        for a in alarms
        if 1 <= a.at <= n
    )
    return _svg(
        left + w + 10,
        top + h + 10,
        "Calibration over time",
        f"running gap over {n} outcomes; {len(alarms)} drift alarm(s)",
        grid + f'<polyline class="line" points="{pts}"/>' + marks,
        "drift-chart",
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

    parts = []
    for i, lane in enumerate(t.lanes):
        top = i * lane_h
        parts.append(
            f'<text class="name" x="{_n(left - 6)}" y="{_n(top + 17)}" text-anchor="end">'
            f'{escape(lane)}</text><line class="grid" x1="{_n(left)}" x2="{_n(left + w)}" '
            f'y1="{_n(top + lane_h)}" y2="{_n(top + lane_h)}"/>'
        )
        for s in (s for s in t.spans if s.lane == lane):
            who = f" {escape(s.role)}" if s.role else ""
            parts.append(
                f'<rect class="span" x="{_n(x(s.start_ms))}" y="{_n(top + 4)}" '
                f'width="{_n(max(1.5, s.ms / span * w))}" height="10" '
                f'data-phase="{escape(s.phase)}" data-ms="{s.ms:g}">'
                f"<title>{escape(s.phase)}{who}: {s.ms:.0f} ms</title></rect>"
            )
        for it in (it for it in t.items if it.lane == lane and it.kind not in _SPAN_KINDS):
            cls = f"tick-{it.flag}" if it.flag else "tick-event"
            parts.append(
                f'<line class="{cls}" x1="{_n(x(it.ms))}" x2="{_n(x(it.ms))}" '
                f'y1="{_n(top + 15)}" y2="{_n(top + 23)}" data-kind="{it.kind}">'
                f"<title>{escape(it.label)}</title></line>"
            )
    return _svg(
        left + w + 10,
        lane_h * len(t.lanes) + 4,
        "Run timeline",
        f"{len(t.items)} events on {len(t.lanes)} lane(s) over {t.duration_ms:.0f} ms",
        "".join(parts),
        "timeline-chart",
    )


_SPAN_KINDS: Final = frozenset({"phase_entered", "phase_completed"})
