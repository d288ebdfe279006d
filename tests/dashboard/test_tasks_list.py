"""The tasks list over real HTTP: every task across sessions, newest first, its filters (the
sessions list's parameters, applied to tasks), search, paging and bad parameters."""

from __future__ import annotations

import re

import httpx
import pytest

from ..conftest import serving
from .conftest import Site
from .seed import assessment

pytestmark = pytest.mark.subprocess  # a server on loopback

TASK_LINK = re.compile(r'href="/tasks/(c_\w+)"')


def get(site: Site, **params: str) -> httpx.Response:
    return httpx.get(site.url + "/tasks", params=params or None, timeout=30)


def count(r: httpx.Response) -> int:
    found = re.search(r'id="count">(\d+) tasks?\b', r.text)
    assert found, r.text[:400]
    return int(found[1])


def test_tasks_list_shows_every_task_newest_first_with_its_session(site):
    r = get(site)
    assert r.status_code == 200
    assert count(r) == len(site.ids.tasks) == 31
    assert TASK_LINK.findall(r.text) == list(reversed(site.ids.tasks))
    assert f'href="/tasks/{site.ids.full_task}">Fix the flaky login test</a>' in r.text
    assert f'href="/sessions/{site.ids.sessions[0]}"' in r.text
    assert '<a href="/tasks" aria-current="page">Tasks</a>' in r.text
    assert '<a href="/tasks">Tasks</a>' in httpx.get(site.url + "/").text  # in every page's nav


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"agent": "gpt"}, 15),
        ({"agent": "claude"}, 16),
        ({"project": "other"}, 10),
        ({"status": "open"}, 15),  # gpt's tasks have no POSTFLIGHT
        ({"status": "completed"}, 16),
        ({"status": "completed", "agent": "gpt"}, 0),
        ({"profile": "balanced"}, 30),
        ({"profile": "high_reasoning_collaborative"}, 1),
        ({"q": "flaky login"}, 1),
        ({"q": "task number 1"}, 11),  # 1, 10–19
        ({"q": "100%_"}, 0),  # LIKE wildcards are literal
        ({"engine": "nova"}, 1),
        ({"engine": "observer"}, 0),
        ({"outcome": "none"}, 0),
        ({"since": "2000-01-01", "until": "2000-01-02"}, 0),
    ],
)
def test_filters_narrow_the_list_and_say_how_many(site, params, expected):
    r = get(site, **params)
    assert r.status_code == 200
    assert count(r) == expected, params
    assert len(TASK_LINK.findall(r.text)) == min(expected, 50)


def test_search_finds_a_task_by_its_id_or_its_sessions(site):
    for q in (site.ids.full_task, site.ids.sessions[0]):
        r = get(site, q=q)
        assert TASK_LINK.findall(r.text) == [site.ids.full_task], q


def test_outcome_filter_splits_the_scored_tasks(site):
    success, failure = count(get(site, outcome="success")), count(get(site, outcome="failure"))
    assert success + failure == 31
    assert success > 0 and failure > 0


def test_paging_keeps_the_filters_and_covers_every_task_once(site):
    seen: list[str] = []
    page = 1
    while True:
        r = get(site, agent="claude", per_page="5", page=str(page))
        seen += TASK_LINK.findall(r.text)
        nxt = re.search(r'rel="next" href="([^"]+)"', r.text)
        if not nxt:
            break
        assert nxt[1].startswith("/tasks?")
        assert "agent=claude" in nxt[1] and "per_page=5" in nxt[1]
        page += 1
    assert len(seen) == len(set(seen)) == 16
    assert page == 4
    assert count(get(site, page="9")) == 31 and not TASK_LINK.findall(get(site, page="9").text)


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("outcome=maybe", "outcome"),
        ("until=tomorrow", "until"),
        ("per_page=501", "per_page"),
        ("session=s_1", "session"),
        ("status=%3Cscript%3E", "status"),
    ],
)
def test_bad_parameters_get_a_400_page_naming_them(site, query, named):
    r = httpx.get(f"{site.url}/tasks?{query}")
    assert r.status_code == 400
    assert named in r.text and "<script>" not in r.text


def test_the_trailing_slash_leads_to_the_list(site):
    r = httpx.get(site.url + "/tasks/")
    assert r.status_code in (301, 307, 308)
    assert r.headers["location"].endswith("/tasks")


def test_a_task_without_an_outcome_shows_its_count_confidence_and_no_outcome(tmp_path):
    from noetic.calibration.learning import record_outcome
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    home = tmp_path / "store"
    with Store(home) as store:
        tracker = Tracker(store, ProfileRegistry(), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="solo", project="p")
        first = tracker.preflight(session.id, "scored task", assessment("preflight", 0.9))
        tracker.postflight(session.id, assessment("postflight", 0.95))
        record_outcome(store, first.cascade.id, score=1.0, source="test")
        second = tracker.preflight(session.id, "unscored task", assessment("preflight", 0.61))
        tracker.check(session.id, assessment("check", 0.74))
        latest = store.conn.execute(
            "SELECT confidence FROM assessments WHERE cascade_id = ? ORDER BY seq DESC LIMIT 1",
            (second.cascade.id,),
        ).fetchone()[0]
        first_stated = store.conn.execute(
            "SELECT confidence FROM assessments WHERE cascade_id = ? ORDER BY seq LIMIT 1",
            (second.cascade.id,),
        ).fetchone()[0]
    assert f"{latest:.2f}" != f"{first_stated:.2f}"  # so the cell tells which one it shows
    with serving(home) as url:
        none = httpx.get(url + "/tasks", params={"outcome": "none"}).text
        assert TASK_LINK.findall(none) == [second.cascade.id]
        row = none.split(f'href="/tasks/{second.cascade.id}"')[1].split("</tr>")[0]
        cells = re.findall(r'<td class="num">([^<]*)', row)
        assert cells[0] == "2"  # PREFLIGHT and CHECK
        assert cells[1].startswith(f"{latest:.2f} ")  # the latest assessment's confidence
        assert cells[2] == "–"  # no outcome yet
        done = httpx.get(url + "/tasks", params={"outcome": "success"}).text
        assert TASK_LINK.findall(done) == [first.cascade.id]
