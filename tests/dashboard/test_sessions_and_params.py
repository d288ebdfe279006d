"""Login sessions and parameters over real HTTP: a login is a random id the server holds (new
on each login, never derived from the database), logging out or revoking the token ends it and
the page's open ``/live`` stream; every page answers a parameter out of range with a 400 page
naming it, never a traceback."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from noetic.dashboard import auth
from noetic.errors import InvalidValueError
from noetic.operations.access_tokens import create_token, revoke_token
from noetic.operations.live import MAX_ID, Cursor
from noetic.store import Store

from ..conftest import serving
from .seed import Seeded, seed

TOKEN = "admin-s3cret"

pytestmark = pytest.mark.subprocess  # a server on loopback


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, Seeded]]:
    """A server started with an admin token over a store holding tokens of its own."""
    home = tmp_path_factory.mktemp("sessions") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOETIC_INDEX", "inline")
        ids = seed(home, scored=2)
        with serving(home, token=TOKEN) as url:
            yield url, home, ids


def login(url: str, token: str) -> str:
    r = httpx.post(url + "/login", data={"token": token, "next": "/"})
    assert r.status_code == 303, r.text
    return r.cookies[auth.COOKIE]


def opens(url: str, cookie: str, path: str = "/") -> bool:
    r = httpx.get(url + path, cookies={auth.COOKIE: cookie})
    assert r.status_code in (200, 303), r.status_code
    return r.status_code == 200


def ready(response: httpx.Response) -> Iterator[str]:
    """The stream's lines, once its first event (``ready``) has been read."""
    assert response.status_code == 200
    lines = response.iter_lines()
    for line in lines:
        if line.startswith("event: ready"):
            return lines
    raise AssertionError("the stream sent no ready event")


def ends_within(lines: Any, seconds: float) -> bool:
    """Whether the stream ends (the server closes it) within ``seconds``: the client's read
    timeout is shorter than the stream's 15 s ping, so a stream left open raises."""
    started = time.monotonic()
    try:
        for _ in lines:
            pass
    except httpx.ReadTimeout:
        return False
    return time.monotonic() - started < seconds


def test_each_login_is_a_new_session_and_logging_out_ends_it_on_the_server(guarded):
    url, _, _ = guarded
    first, second = login(url, TOKEN), login(url, TOKEN)
    assert first != second and TOKEN not in first
    assert opens(url, first) and opens(url, second)
    out = httpx.post(url + "/logout", cookies={auth.COOKIE: first})
    assert out.status_code == 303
    assert not opens(url, first)  # the cookie kept by anyone after logout opens nothing
    assert opens(url, second)  # the other browser stays logged in


def test_a_copy_of_the_database_forges_no_login(guarded):
    url, home, _ = guarded
    with Store(home) as store:
        create_token(store, "copied")
        stored = store.conn.execute("SELECT hash FROM tokens WHERE name = 'copied'").fetchone()[0]
    mac = hmac.new(stored.encode(), b"noetic dashboard session", hashlib.sha256).hexdigest()
    for value in ("copied:" + mac, mac, stored, "copied:" + stored):
        assert not opens(url, value), value


def test_revoking_a_token_ends_its_logins_and_their_open_streams(guarded):
    url, home, _ = guarded
    with Store(home) as store:
        token = create_token(store, "bob")["token"]
    cookie = login(url, token)
    assert opens(url, cookie)
    with (
        httpx.Client(base_url=url, cookies={auth.COOKIE: cookie}, timeout=6) as client,
        client.stream("GET", "/live") as response,
    ):
        lines = ready(response)
        with Store(home) as store:
            revoke_token(store, "bob")
        assert ends_within(lines, 6), "the revoked token's stream kept running"
    assert not opens(url, cookie)
    assert httpx.get(url + "/live", cookies={auth.COOKIE: cookie}).status_code == 401


def test_logging_out_ends_the_browsers_open_stream(guarded):
    url, _, _ = guarded
    cookie = login(url, TOKEN)
    with (
        httpx.Client(base_url=url, cookies={auth.COOKIE: cookie}, timeout=6) as client,
        client.stream("GET", "/live") as response,
    ):
        lines = ready(response)
        assert httpx.post(url + "/logout", cookies={auth.COOKIE: cookie}).status_code == 303
        assert ends_within(lines, 6), "the stream outlived its login"


def test_a_bearer_stream_ends_when_its_token_is_revoked(guarded):
    url, home, _ = guarded
    with Store(home) as store:
        token = create_token(store, "carol")["token"]
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=url, headers=headers, timeout=6) as client,
        client.stream("GET", "/live") as response,
    ):
        lines = ready(response)
        with Store(home) as store:
            revoke_token(store, "carol")
        assert ends_within(lines, 6), "the revoked token's stream kept running"


def test_the_tasks_list_answers_a_logged_in_browser(guarded):
    url, _, _ = guarded
    cookie = login(url, TOKEN)
    for path in ("/tasks", "/tasks?agent=gpt", "/sessions", "/runs", "/compare"):
        r = httpx.get(url + path, cookies={auth.COOKIE: cookie})
        assert r.status_code in (200, 404), (path, r.status_code, r.text[:80])
        assert r.headers["content-type"].startswith("text/html"), path
    r = httpx.get(url + "/tasks", cookies={auth.COOKIE: cookie})
    assert r.status_code == 200 and "<h1>Tasks</h1>" in r.text
    # without a login, a browser is sent to the form rather than given JSON
    bare = httpx.get(url + "/tasks")
    assert bare.status_code == 303 and bare.headers["location"] == "/login?next=%2Ftasks"


# parameters ---------------------------------------------------------------------------------


def bad_requests(ids: Seeded) -> list[str]:
    task, session = ids.full_task, ids.sessions[0]
    return [
        "/live?after=" + "9" * 30,
        "/live?after=1.2.3.4",
        "/live?after=-1",
        f"/live?after={MAX_ID + 1}",
        "/live?after=1&after=2",
        "/live?since=1",
        "/sessions?page=" + "9" * 30,
        "/sessions?page=0",
        "/sessions?per_page=100000",
        "/sessions?page=1&page=2",
        "/sessions?since=2026-13-40",
        "/tasks?page=-3",
        "/tasks?until=99999-01-01",
        "/tasks?nope=1",
        "/tasks?q=" + "x" * 600,
        "/tasks?q=a%00b",
        f"/tasks/{task}?decisions=some",
        f"/tasks/{task}?decisions=all&decisions=all",
        f"/tasks/{task}?x=1",
        "/tasks/c_%00",
        "/tasks/" + "c" * 600,
        f"/sessions/{session}?page=2",
        "/sessions/a%01b",
        f"/runs/{task}?after=3",
        "/runs/%7F",
        "/calibration?since_days=1e400",
        "/calibration?since_days=nan",
        "/calibration?prediction=later",
        "/calibration?agent=" + "a" * 600,
        "/compare?a=" + "a" * 600 + "&b=agent:gpt",
        "/compare?a=x&b=y&c=z",
    ]


def test_every_page_answers_an_out_of_range_parameter_with_400(site):
    for path in bad_requests(site.ids):
        r = httpx.get(site.url + path, timeout=30)
        assert r.status_code == 400, (path, r.status_code, r.text[:200])
        assert "Traceback" not in r.text


def test_the_last_day_there_is_is_a_date_like_any_other(site):
    for path in ("/sessions?until=9999-12-31", "/tasks?until=9999-12-31&since=0001-01-01"):
        r = httpx.get(site.url + path)
        assert r.status_code == 200, (path, r.status_code)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["page", "per_page", "since", "until", "q", "agent", "outcome"]),
    value=st.one_of(
        st.integers(min_value=-(10**40), max_value=10**40).map(str),
        st.text(max_size=40),
        st.dates().map(str),
    ),
)
@example(name="until", value="9999-12-31")  # the last day: its next day does not exist
@example(name="page", value="9" * 30)
def test_a_list_parameter_is_answered_or_refused_never_a_server_error(site, name, value):
    for path in ("/sessions", "/tasks"):
        r = httpx.get(site.url + path, params={name: value}, timeout=30)
        assert r.status_code in (200, 400), (path, name, value, r.status_code)


@given(st.text(max_size=80))
@example("9" * 30)  # beyond any database id: SQLite raised OverflowError
@example("１２")  # digits, but not ASCII ones
def test_a_live_cursor_parses_to_ids_a_database_holds_or_is_refused(text):
    try:
        cursor = Cursor.parse(text)
    except InvalidValueError as exc:
        assert exc.field == "after" and "whole numbers" in str(exc)
        return
    assert all(0 <= n <= MAX_ID for n in cursor)
    assert Cursor.parse(str(cursor)) == cursor


@given(st.lists(st.integers(min_value=0, max_value=2**70), min_size=1, max_size=4))
def test_a_cursor_is_accepted_exactly_when_each_number_fits_a_database_id(numbers):
    text = ".".join(str(n) for n in numbers)
    fits = len(numbers) <= 3 and all(n <= MAX_ID for n in numbers)
    try:
        cursor = Cursor.parse(text)
    except InvalidValueError:
        assert not fits
    else:
        assert fits and list(cursor[: len(numbers)]) == numbers
