"""Live updates: ``/live`` streams a change whenever any process writes to the store, and
picks up from the cursor a reconnecting page gives it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import ValidationError
from noetic.operations.live import Cursor, cursor
from noetic.store import Store

WRITER = textwrap.dedent(
    """
    import sys
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import open_store
    with open_store(sys.argv[1], create=True) as store:
        Tracker(store, ProfileRegistry(), checkpoints=False).bootstrap(ai_id="elsewhere")
    """
)

pytestmark = pytest.mark.subprocess  # a server, and writers in other processes


def events_from(url: str, params: dict[str, str], want: int, timeout: float = 30.0) -> list[dict]:
    """The first ``want`` server-sent events (id, event, data) from ``url``."""
    out: list[dict] = []
    current: dict[str, str] = {}
    with httpx.stream("GET", url, params=params, timeout=timeout) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if not line:
                if "event" in current:
                    out.append(current)
                    if len(out) == want:
                        return out
                current = {}
                continue
            if line.startswith(":"):
                continue
            key, _, value = line.partition(": ")
            current[key] = value
    return out


def test_a_write_by_another_process_reaches_the_stream(site):
    with Store(site.home, write_files=False) as store:
        before = cursor(store)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(site.home)])
    try:
        got = events_from(site.url + "/live", {"after": str(before)}, want=1)
    finally:
        assert writer.wait(timeout=60) == 0
    assert got[0]["event"] == "change"
    now = Cursor.parse(got[0]["id"])
    assert now.events > before.events
    assert '"session_started"' in got[0]["data"]


def test_a_page_coming_back_gets_what_changed_while_it_was_away(site):
    """The cursor a page last saw is behind the store: the first event says so at once."""
    with Store(site.home, write_files=False) as store:
        now = cursor(store)
    behind = Cursor(now.events - 1, now.outcomes, now.adjustments)
    started = time.monotonic()
    got = events_from(site.url + "/live", {"after": str(behind)}, want=1)
    assert got[0]["event"] == "change" and got[0]["id"] == str(now)
    assert time.monotonic() - started < 20


def test_without_a_cursor_the_stream_starts_from_now(site):
    got = events_from(site.url + "/live", {}, want=1)
    assert got[0]["event"] == "ready"


def test_a_reconnect_resumes_from_last_event_id(site):
    with Store(site.home, write_files=False) as store:
        now = cursor(store)
    behind = str(Cursor(now.events, max(0, now.outcomes - 1), now.adjustments))
    out = []
    with httpx.stream("GET", site.url + "/live", headers={"Last-Event-ID": behind}) as r:
        for line in r.iter_lines():
            if line.startswith("event: "):
                out.append(line)
                break
    assert out == ["event: change"]


@pytest.mark.parametrize("bad", ["x", "1.2.3.4", "-1", "1..2", "a.b.c"])
def test_a_malformed_cursor_is_a_400_naming_it(site, bad):
    r = httpx.get(site.url + "/live", params={"after": bad})
    assert r.status_code == 400
    assert "live cursor" in r.text


@given(st.tuples(*(st.integers(0, 2**62),) * 3))
def test_a_cursor_reads_back_what_it_wrote(parts):
    c = Cursor(*parts)
    assert Cursor.parse(str(c)) == c


@given(st.text(max_size=30))
def test_cursor_parsing_refuses_or_returns_whole_numbers(text):
    try:
        c = Cursor.parse(text)
    except ValidationError:
        return
    assert all(isinstance(n, int) and n >= 0 for n in c)
