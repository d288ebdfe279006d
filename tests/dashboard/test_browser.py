"""The dashboard in a real headless Chromium (Debian's, driven by Playwright): no console
errors, axe-core's accessibility rules, no sideways scroll at 360 px, keyboard-only use, filters
that survive a reload, and a task written by another process appearing without a reload.
Screenshots of every page go to ``build/screenshots`` (``$NOETIC_ARTEFACTS`` to change)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import serving
from .conftest import Site
from .seed import seed

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("NOETIC_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AXE = Path(__file__).with_name("vendor") / "axe.min.js"
ARTEFACTS = Path(os.environ.get("NOETIC_ARTEFACTS", Path(__file__).parents[2] / "build"))
WRITER = textwrap.dedent(
    """
    import sys
    from noetic.assessment import Assessment
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store
    from noetic.vectors import VECTOR_NAMES
    with Store(sys.argv[1]) as store:
        tracker = Tracker(store, ProfileRegistry(), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="elsewhere")
        vectors = {name: 0.8 for name in VECTOR_NAMES}
        tracker.preflight(session.id, sys.argv[2], Assessment(phase="preflight", vectors=vectors))
    """
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.fail("Chromium is not installed: run `make test`, which installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def live_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A seeded store of its own: these tests write to it."""
    home = tmp_path_factory.mktemp("browser") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOETIC_INDEX", "inline")
        ids = seed(home)
        with serving(home) as url:
            yield Site(url, home, ids)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from _page(browser, bypass_csp=False)


@pytest.fixture
def axe_page(browser: Any) -> Iterator[Any]:
    """A page where axe-core can be injected as an inline script (the dashboard's content
    security policy forbids any script but its own file)."""
    yield from _page(browser, bypass_csp=True)


def _page(browser: Any, *, bypass_csp: bool) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=bypass_csp)
    pg = context.new_page()
    pg.errors = []
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def pages(ids: Any) -> dict[str, str]:
    return {
        "sessions": "/",
        "tasks": "/tasks",
        "session": f"/sessions/{ids.sessions[0]}",
        "task": f"/tasks/{ids.full_task}",
        "run": f"/runs/{ids.engine_task}",
        "calibration": "/calibration",
        "compare": f"/compare?a={ids.full_task}&b=agent:gpt",
        "not-found": "/tasks/c_nope",
    }


def axe_violations(pg: Any) -> list[dict[str, Any]]:
    pg.add_script_tag(path=str(AXE))
    result = pg.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
    )
    return [
        {"id": v["id"], "help": v["help"], "nodes": [n["html"][:120] for n in v["nodes"][:3]]}
        for v in result["violations"]
    ]


def test_every_page_renders_without_console_errors_and_passes_axe(site, page, axe_page):
    shots = ARTEFACTS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    for name, path in pages(site.ids).items():
        status = 404 if name == "not-found" else 200
        # under the dashboard's own content security policy: a violation is a console error
        response = page.goto(site.url + path)
        assert response.status == status, name
        errors = [e for e in page.errors if not (name == "not-found" and "404" in e)]
        assert errors == [], (name, errors)
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        page.errors.clear()
        assert axe_page.goto(site.url + path).status == status
        assert axe_violations(axe_page) == [], name


def test_no_page_scrolls_sideways_at_360_px(site, browser):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    pg = context.new_page()
    shots = ARTEFACTS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    try:
        for name, path in pages(site.ids).items():
            pg.goto(site.url + path)
            width = pg.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 360, (name, width)
            pg.screenshot(path=str(shots / f"{name}-360.png"))
    finally:
        context.close()


def test_filters_and_search_live_in_the_url_and_survive_a_reload(site, page):
    page.goto(site.url + "/")
    page.select_option("#f-agent", "gpt")
    page.fill("#q", "task number 1")
    page.press("#q", "Enter")
    page.wait_for_url("**/?*")
    assert "agent=gpt" in page.url and "q=task+number+1" in page.url
    count = page.inner_text("#count")
    assert count.startswith("5 sessions")  # gpt has the even numbers: 10, 12, 14, 16, 18
    page.reload()
    assert page.input_value("#f-agent") == "gpt"
    assert page.input_value("#q") == "task number 1"
    assert page.inner_text("#count") == count


def test_tasks_filters_survive_a_reload_at_360_px_without_sideways_scroll(site, browser):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    pg = context.new_page()
    try:
        pg.goto(site.url + "/tasks")
        pg.select_option("#f-agent", "gpt")
        pg.select_option("#f-status", "open")
        pg.fill("#q", "task number 1")
        pg.press("#q", "Enter")
        pg.wait_for_url("**/tasks?*")
        assert "agent=gpt" in pg.url and "status=open" in pg.url and "q=task+number+1" in pg.url
        count = pg.inner_text("#count")
        assert count.startswith("5 tasks")  # gpt has the even numbers: 10, 12, 14, 16, 18
        pg.reload()
        assert pg.input_value("#f-agent") == "gpt"
        assert pg.input_value("#f-status") == "open"
        assert pg.input_value("#q") == "task number 1"
        assert pg.inner_text("#count") == count
        assert pg.evaluate("() => document.documentElement.scrollWidth") <= 360
    finally:
        context.close()


def test_keyboard_alone_reaches_a_session_and_its_task(site, page):
    page.goto(site.url + "/")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"
    for _ in range(80):
        page.keyboard.press("Tab")
        href = page.evaluate("() => document.activeElement.getAttribute('href') || ''")
        if href.startswith("/sessions/s_"):
            break
    else:
        raise AssertionError("no session link reachable with Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{href}")
    for _ in range(40):
        page.keyboard.press("Tab")
        href = page.evaluate("() => document.activeElement.getAttribute('href') || ''")
        if href.startswith("/tasks/c_"):
            break
    else:
        raise AssertionError("no task link reachable with Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{href}")
    assert page.locator("h1").count() == 1


def _write_task(home: Path, task: str) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(home), task], check=True, timeout=60)


def test_a_task_written_by_another_process_appears_without_a_reload(live_site, page):
    page.goto(live_site.url + "/")
    page.evaluate("() => { window.__kept = true; }")  # gone if the page reloads
    page.wait_for_function("() => document.getElementById('live-status').textContent === 'Live'")
    _write_task(live_site.home, "a task from another process")
    page.wait_for_selector("text=a task from another process", timeout=20_000)
    assert page.evaluate("() => window.__kept") is True
    assert "Updated" in page.inner_text("#live-status")


def test_updates_pause_while_the_tab_is_hidden_and_catch_up_on_return(live_site, page):
    page.goto(live_site.url + "/")
    page.wait_for_function("() => document.getElementById('live-status').textContent === 'Live'")
    page.evaluate(
        "() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
        " document.dispatchEvent(new Event('visibilitychange')); }"
    )
    _write_task(live_site.home, "written while nobody looked")
    page.wait_for_timeout(1500)  # the stream is closed: nothing may arrive
    assert page.locator("text=written while nobody looked").count() == 0
    page.evaluate(
        "() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
        " document.dispatchEvent(new Event('visibilitychange')); }"
    )
    page.wait_for_selector("text=written while nobody looked", timeout=20_000)


def test_the_pause_button_holds_updates_until_pressed_again(live_site, page):
    page.goto(live_site.url + "/")
    page.wait_for_function("() => document.getElementById('live-status').textContent === 'Live'")
    page.click("#live-toggle")
    assert page.get_attribute("#live-toggle", "aria-pressed") == "true"
    _write_task(live_site.home, "written during a pause")
    page.wait_for_timeout(1500)
    assert page.locator("text=written during a pause").count() == 0
    page.click("#live-toggle")
    page.wait_for_selector("text=written during a pause", timeout=20_000)


def test_a_guarded_server_logs_a_browser_in_with_the_form(tmp_path, page):
    home = tmp_path / "store"
    seed(home, scored=1)
    with serving(home, token="t0ken") as url:
        page.goto(url + "/calibration")
        assert "/login" in page.url
        page.fill("#token", "t0ken")
        page.press("#token", "Enter")
        page.wait_for_url("**/calibration")
        assert page.inner_text("h1") == "Calibration"
        assert page.errors == []
        page.goto("about:blank")  # close the live stream before the server stops


def test_keyboard_alone_pauses_and_resumes_updates(site, page):
    page.goto(site.url + "/calibration")
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "live-toggle":
            break
    else:
        raise AssertionError("the pause button is not reachable with Tab")
    page.keyboard.press("Space")
    assert page.get_attribute("#live-toggle", "aria-pressed") == "true"
    assert page.inner_text("#live-status") == "Paused"
    page.keyboard.press("Enter")
    assert page.get_attribute("#live-toggle", "aria-pressed") == "false"
