"""The SVG charts against the numbers they draw: each mark's position and size is computed
back from the SVG and compared with the read model's figures."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.calibration.drift import DriftAlarm
from noetic.calibration.outcomes import Filters
from noetic.dashboard import charts
from noetic.operations.calibration_view import (
    Bin,
    DriftPoint,
    Gap,
    Interval,
    calibration_view,
    gap_from,
    wilson,
)
from noetic.operations.task_view import AssessmentPoint, level
from noetic.store import Store

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(str(svg).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def f(e: ET.Element, name: str) -> float:
    return float(e.attrib[name])


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("know", 0.95, "excellent"),
        ("know", 0.90, "excellent"),
        ("know", 0.85, "good"),
        ("know", 0.75, "acceptable"),
        ("know", 0.69, "needs attention"),
        ("density", 0.05, "excellent"),  # low load is good
        ("density", 0.40, "needs attention"),
        ("uncertainty", 0.15, "good"),
        ("uncertainty", 0.95, "needs attention"),
    ],
)
def test_a_bar_is_as_long_as_its_value_and_coloured_by_the_oriented_level(name, value, expected):
    root = parse(charts.bar(name, value))
    bar = root.find(f"{NS}rect[@data-value]")
    assert f(bar, "width") == pytest.approx(100 * value, abs=0.01)
    assert bar.attrib["data-level"] == expected
    assert charts.LEVEL_CLASS[expected] in bar.attrib["class"]
    assert root.find(f"{NS}title").text == f"{name} {value:.2f}"  # never colour alone


@given(st.floats(0, 1))
def test_levels_follow_the_seeds_thresholds(score):
    lv = level(score)
    floor = {"excellent": 0.9, "good": 0.8, "acceptable": 0.7, "needs attention": 0.0}[lv]
    assert score >= floor
    assert (
        lv == "excellent"
        or score < {"good": 0.9, "acceptable": 0.8}.get(lv, 0.7)
        or (lv == "needs attention" and score < 0.7)
    )


def _point(seq: int, phase: str, confidence: float) -> AssessmentPoint:
    return AssessmentPoint(
        seq=seq,
        phase=phase,
        at="2026-01-01T00:00:00+00:00",
        vectors={},
        confidence=confidence,
        p_success=None,
        action="PROCEED",
        rule="threshold",
        reason="",
        threshold=0.7,
        gaps=[],
        rationales={},
        evidence={},
        note="",
    )


def test_the_trajectory_puts_each_assessment_at_its_confidence():
    points = [_point(1, "preflight", 0.6), _point(2, "check", 0.75), _point(3, "postflight", 0.93)]
    root = parse(charts.trajectory(points, threshold=0.7))
    marks = root.findall(".//*[@data-seq]")
    assert [m.tag.removeprefix(NS) for m in marks] == ["rect", "circle", "polygon"]
    top, height = 8.0, 180.0
    for mark, p in zip(marks, points, strict=True):
        if mark.tag == f"{NS}circle":
            y = f(mark, "cy")
        elif mark.tag == f"{NS}rect":
            y = f(mark, "y") + 4
        else:
            y = float(mark.attrib["points"].split()[0].split(",")[1]) + 5
        assert (top + height - y) / height == pytest.approx(p.confidence, abs=0.001)
        assert float(mark.attrib["data-value"]) == p.confidence
    line = root.find(f"{NS}line[@class='threshold']")
    assert (top + height - f(line, "y1")) / height == pytest.approx(0.7, abs=0.001)


def test_the_reliability_diagram_draws_each_bin_where_its_numbers_say():
    bins = [
        Bin(
            low=0.0,
            high=0.5,
            count=4,
            mean_confidence=0.3,
            observed=0.25,
            gap=0.05,
            interval=wilson(0.25, 4),
        ),
        Bin(
            low=0.5,
            high=1.0,
            count=16,
            mean_confidence=0.8,
            observed=0.5,
            gap=0.3,
            interval=wilson(0.5, 16),
        ),
    ]
    root = parse(charts.reliability(bins))
    groups = root.findall(f"{NS}g[@class='bin']")
    assert len(groups) == 2
    left, top, side = 40.0, 10.0, 300.0
    for g, b in zip(groups, bins, strict=True):
        point = g.find(f"{NS}circle")
        assert (f(point, "cx") - left) / side == pytest.approx(b.mean_confidence, abs=0.001)
        assert (top + side - f(point, "cy")) / side == pytest.approx(b.observed, abs=0.001)
        whisker = g.find(f"{NS}line[@class='whisker']")
        ends = sorted((top + side - f(whisker, k)) / side for k in ("y1", "y2"))
        assert ends == pytest.approx([b.interval.low, b.interval.high], abs=0.001)
        assert g.find(f"{NS}text[@class='count']").text == str(b.count)
        assert int(g.attrib["data-count"]) == b.count
    # the bigger bin has the bigger point and the full-height bar in the histogram
    small, big = (g.find(f"{NS}circle") for g in groups)
    assert f(big, "r") > f(small, "r")
    hist = [g.find(f"{NS}rect[@class='hist']") for g in groups]
    assert f(hist[1], "height") == pytest.approx(60.0) and f(hist[0], "height") == pytest.approx(15)


def test_gap_bars_run_right_for_overconfidence_and_left_for_under():
    rows = [
        Gap(
            group="PREFLIGHT",
            n=30,
            stated=0.8,
            observed=0.6,
            gap=0.2,
            interval=Interval(low=0.1, high=0.3),
        ),
        Gap(group="CHECK", n=3, stated=0.5, observed=0.6, gap=-0.1, interval=None),
    ]
    root = parse(charts.gaps(rows, label="phase"))
    zero = f(root.find(f"{NS}line[@class='zero']"), "x1")
    over, under = root.findall(f"{NS}g[@class='gap']")
    ro, ru = over.find(f"{NS}rect"), under.find(f"{NS}rect")
    assert ro.attrib["class"] == "over" and f(ro, "x") == pytest.approx(zero)
    assert ru.attrib["class"] == "under" and f(ru, "x") + f(ru, "width") == pytest.approx(zero)
    # 0.2 is twice 0.1: the bars' lengths keep the ratio
    assert f(ro, "width") == pytest.approx(2 * f(ru, "width"), rel=0.01)
    assert over.find(f"{NS}line[@class='whisker']") is not None
    assert under.find(f"{NS}line[@class='whisker']") is None  # too few for an interval


def test_the_drift_chart_marks_each_alarm_at_its_outcome():
    path = [DriftPoint(index=i, at="", gap=0.0) for i in range(1, 41)]
    alarms = [DriftAlarm(at=30, since=1, direction="overconfident", sycophancy=False)]
    root = parse(charts.drift(path, alarms))
    alarm = root.find(f"{NS}g[@class='alarm']")
    line = alarm.find(f"{NS}line")
    left, w = 40.0, 560.0
    assert (f(line, "x1") - left) / (w / 39) + 1 == pytest.approx(30)
    assert "overconfident" in alarm.find(f"{NS}text").text


@given(st.floats(0, 1), st.integers(1, 10_000))
def test_wilson_intervals_hold_the_rate_and_stay_in_range(rate, n):
    i = wilson(rate, n)
    assert 0.0 <= i.low <= rate + 1e-6 and rate - 1e-6 <= i.high <= 1.0


def test_a_phase_becomes_a_gap_bar_with_the_reports_interval():
    from noetic.calibration.per_phase import PhasePoint, phase_stats

    points = [
        PhasePoint(
            cascade_id=f"c{i}",
            at="",
            phase="preflight",
            stated=0.8,
            basis="confidence",
            observed=float(i % 2),
            agent="a",
            model="m",
            engine="e",
            persona="p",
            profile="balanced",
        )
        for i in range(10)
    ]
    stats = phase_stats("preflight", points)
    g = gap_from("PREFLIGHT", stats)
    assert g is not None
    assert g.n == 10 and g.stated == pytest.approx(0.8) and g.observed == pytest.approx(0.5)
    assert g.gap == pytest.approx(0.3)
    assert g.interval is not None and g.interval.low <= 0.3 <= g.interval.high
    assert gap_from("CHECK", phase_stats("check", [])) is None


@pytest.mark.subprocess
def test_the_served_reliability_diagram_matches_the_calibration_report(site):
    page = httpx.get(site.url + "/calibration", timeout=30).text
    svg = re.search(r'<svg class="chart reliability-chart".*?</svg>', page, re.S)[0]
    root = parse(svg)
    with Store(site.home, write_files=False) as store:
        view = calibration_view(store, Filters())
    drawn = [
        (
            int(g.attrib["data-count"]),
            float(g.attrib["data-confidence"]),
            float(g.attrib["data-observed"]),
        )
        for g in root.findall(f"{NS}g[@class='bin']")
    ]
    expected = [(b.count, b.mean_confidence, b.observed) for b in view.bins]
    assert [c for c, _, _ in drawn] == [c for c, _, _ in expected]
    flat = [v for _, p, y in drawn for v in (p, y)]
    assert flat == pytest.approx([v for _, p, y in expected for v in (p, y)], abs=1e-5)
    assert sum(c for c, _, _ in drawn) == view.report.tasks == 31
