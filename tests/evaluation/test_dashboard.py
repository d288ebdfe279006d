"""The dashboard's eval pages, served as `noetic serve` serves them, over real HTTP and in a
real headless Chromium (no console errors, axe-core's rules)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from noetic.operations.evaluating import start_eval
from noetic.runtime.opening import open_tracker

from ..conftest import serving
from ..dashboard import test_browser
from ..llm.model_server import running
from .conftest import spec
from .standin import StandIn
from .test_run import right_unless_three

pytestmark = pytest.mark.subprocess
# the dashboard suite's Chromium and pages
browser, page, axe_page = test_browser.browser, test_browser.page, test_browser.axe_page


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory, problems) -> Iterator[tuple[str, str]]:
    """A store with one eval run (split reviews), served; yields its URL and the run's id."""
    home = tmp_path_factory.mktemp("eval-dash") / "store"
    with pytest.MonkeyPatch.context() as mp, running() as server:
        mp.setenv("NOETIC_HOME", str(home))
        server.responder = StandIn(problems, right_unless_three)
        tracker = open_tracker(Path(home), create=True)
        run = asyncio.run(start_eval(tracker, provider=spec(server), matching="HumanEval/3?",
                                     review="split", concurrency=2))  # fmt: skip
        tracker.store.close()
        with serving(Path(home)) as url:
            yield url, run.run_id


def test_the_eval_pages_show_the_run_and_its_problems(evaluated):
    url, run_id = evaluated
    listing = httpx.get(f"{url}/evals")
    assert listing.status_code == 200 and f'href="/evals/{run_id}"' in listing.text
    assert "10/10" in listing.text
    shown = httpx.get(f"{url}/evals/{run_id[:8]}")
    assert shown.status_code == 200
    text = shown.text
    assert "ADVERSARIAL REVIEW" in text and "PREFLIGHT" in text
    assert text.count("HumanEval/3") == 10
    assert "the tests failed: ValueError: not written" in text
    assert "of it not behind the tests" in text
    assert httpx.get(f"{url}/evals/e_nope").status_code == 404


@pytest.mark.browser
def test_the_eval_pages_render_without_console_errors_and_pass_axe(evaluated, page, axe_page):
    url, run_id = evaluated
    for path in ("/evals", f"/evals/{run_id}"):
        assert page.goto(url + path).status == 200
        assert page.errors == [], (path, page.errors)
        assert axe_page.goto(url + path).status == 200
        assert test_browser.axe_violations(axe_page) == [], path
