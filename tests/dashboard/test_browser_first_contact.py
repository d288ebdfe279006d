"""What a person meets in the dashboard's first hour, in a real headless Chromium: the tasks
list after logging in, a run's whole wall time, the outcome line quoting what was stated, an
empty reliability section that agrees with the counts above it, the compare page saying why
Brier and ECE are missing, a readable confidence chart and a compact decisions table at 360
px, the login form naming ``noetic token create``, and counts in the singular."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from noetic.assessment import Assessment
from noetic.calibration.learning import record_outcome
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import serving
from .seed import vectors
from .test_browser import browser  # noqa: F401  (the fixture: Debian's Chromium)

pytestmark = pytest.mark.browser
TOKEN = "first-c0ntact"


@dataclass
class Walk:
    url: str
    home: Path
    task: str  # P(success) at PREFLIGHT and POSTFLIGHT, confidence at CHECK, an outcome
    slow: str  # began 2 s before its first event and ended 4 s after its last


def _write(home: Path) -> tuple[str, str]:
    with Store(home) as store:
        tracker = Tracker(store, ProfileRegistry(store.home / "profiles"), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="solo", ai_model="m1")
        stated = [0.8, 0.3, 0.7, 0.6]
        ids = []
        for i, p in enumerate(stated):  # four tasks in one session, each with an outcome
            pre = Assessment(phase="preflight", vectors=vectors(0.72), p_success=p)
            r = tracker.preflight(session.id, f"step {i}", pre)
            if i == 0:
                tracker.check(session.id, Assessment(phase="check", vectors=vectors(0.81)))
            post = Assessment(phase="postflight", vectors=vectors(0.9), p_success=0.9)
            tracker.postflight(session.id, post)
            record_outcome(store, r.cascade.id, score=float(i % 2 == 0), source="test")
            ids.append(r.cascade.id)
        other, _ = tracker.bootstrap(ai_id="pair")
        for i in range(2):
            pre = Assessment(phase="preflight", vectors=vectors(0.8))
            r = tracker.preflight(other.id, f"pair {i}", pre)
            tracker.postflight(other.id, Assessment(phase="postflight", vectors=vectors(0.8)))
            record_outcome(store, r.cascade.id, score=1.0, source="test")
        slow = ids[1]
        with store.transaction() as c:
            first, last = c.execute(
                "SELECT MIN(at), MAX(at) FROM events WHERE cascade_id = ?", (slow,)
            ).fetchone()
            began = datetime.fromisoformat(first) - timedelta(seconds=2)
            ended = datetime.fromisoformat(last) + timedelta(seconds=4)
            c.execute(
                "UPDATE cascades SET created_at = ?, ended_at = ? WHERE id = ?",
                (began.isoformat(), ended.isoformat(), slow),
            )
        return ids[0], slow


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walk]:
    home = tmp_path_factory.mktemp("first") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOETIC_INDEX", "inline")
        task, slow = _write(home)
        with serving(home, token=TOKEN) as url:
            yield Walk(url, home, task, slow)


@pytest.fixture(scope="module")
def context(browser: Any, walk: Walk) -> Iterator[Any]:  # noqa: F811
    """A browser that logged in through the form once (its cookie serves every test)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.goto(walk.url + "/")
    assert "/login" in pg.url
    pg.fill("#token", TOKEN)
    pg.press("#token", "Enter")
    pg.wait_for_url(walk.url + "/")
    pg.close()
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    pg.goto("about:blank")  # close the live stream before the next test
    pg.close()


def test_the_login_form_names_the_command_that_makes_a_token(walk, browser):  # noqa: F811
    ctx = browser.new_context()
    pg = ctx.new_page()
    try:
        pg.goto(walk.url + "/tasks")
        assert "/login" in pg.url
        text = pg.inner_text("main")
        assert "noetic token create" in text, text
    finally:
        ctx.close()


def test_the_tasks_link_opens_the_tasks_list_for_a_logged_in_browser(walk, page):
    page.goto(walk.url + "/")
    page.click("nav >> text=Tasks")
    page.wait_for_url(walk.url + "/tasks")
    assert page.inner_text("h1") == "Tasks"
    assert page.inner_text("#count").startswith("6 tasks")


def test_the_run_page_gives_the_runs_whole_wall_time(walk, page):
    page.goto(f"{walk.url}/runs/{walk.slow}")
    shown = page.inner_text("dt:text('Duration') + dd")
    assert shown.endswith(" s"), shown
    seconds = float(shown.removesuffix(" s"))
    assert 6.0 <= seconds < 7.0, shown  # 2 s before the first event, 4 s after the last


def test_the_outcome_line_quotes_what_was_stated_at_every_phase(walk, page):
    page.goto(f"{walk.url}/tasks/{walk.task}")
    line = page.inner_text("ul.outcomes li")
    row = "section[aria-labelledby=h-decisions] tbody tr:nth-child(2)"
    check = page.inner_text(row + " td:nth-child(3)")
    assert check.startswith("0.") and "CHECK" in page.inner_text(row)
    confidence = check.split()[0]  # the CHECK stated no P(success): its confidence
    assert (
        f"stated before: PREFLIGHT P(success) 0.80, CHECK confidence {confidence}, "
        "POSTFLIGHT P(success) 0.90" in line
    ), line


def test_an_empty_reliability_section_agrees_with_the_counts_above_it(walk, page):
    page.goto(walk.url + "/calibration?agent=solo")
    verdict = page.inner_text("#h-verdict + p")
    assert verdict.startswith("4 scored tasks (4 outcomes recorded); 4 with a PREFLIGHT"), verdict
    empty = page.inner_text("section[aria-labelledby=h-reliability] .empty")
    assert empty == (
        "The reliability diagram needs 20 scored tasks with a PREFLIGHT statement; 4 so far."
    )


def test_the_compare_page_says_why_brier_and_ece_are_missing_and_counts_in_the_singular(walk, page):
    page.goto(walk.url + "/compare?a=agent:solo&b=agent:pair")
    solo, pair = page.query_selector_all("section.side")
    assert solo.inner_text().count("1 session · 4 tasks · 4 outcomes") == 1
    assert "1 session · 2 tasks · 2 outcomes" in pair.inner_text()
    for side, n in ((solo, 4), (pair, 2)):
        ece = side.query_selector("tr:has(th:text-is('ECE')) td").inner_text()
        assert ece == f"– insufficient data: {n} outcomes, at least 20 needed", ece
        brier = side.query_selector("tr:has(th:text-is('Brier')) td").inner_text()
        assert brier[0].isdigit() or "insufficient data" in brier, brier  # a figure or why not


def test_at_360_px_the_confidence_chart_is_readable_and_decisions_are_compact(walk, browser):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 360, "height": 740})
    pg = ctx.new_page()
    try:
        pg.goto(walk.url + "/login")
        pg.fill("#token", TOKEN)
        pg.press("#token", "Enter")
        pg.wait_for_url(walk.url + "/")
        pg.goto(f"{walk.url}/tasks/{walk.task}")
        assert pg.evaluate("() => document.documentElement.scrollWidth") <= 360
        labels = pg.evaluate(
            "() => [...document.querySelectorAll('.trajectory-chart text.tick')]"
            ".map(t => t.getBoundingClientRect().height)"
        )
        assert labels and min(labels) >= 10, labels  # px on screen: about an 11 px font
        rows = pg.evaluate(
            "() => [...document.querySelectorAll('section[aria-labelledby=h-decisions] tbody tr')]"
            ".map(r => r.getBoundingClientRect().height)"
        )
        assert len(rows) == 3 and max(rows) <= 160, rows
        pg.goto("about:blank")
    finally:
        ctx.close()
