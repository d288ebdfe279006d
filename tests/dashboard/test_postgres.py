"""The dashboard over a shared PostgreSQL store (a team's agents on many machines): the same
pages from the same read operations, and a write from another process shown live."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest

from noetic.operations.live import Cursor

from ..conftest import serving
from .seed import seed
from .test_live import WRITER, events_from

pytestmark = [pytest.mark.postgres, pytest.mark.subprocess]


@pytest.fixture
def shared(tmp_path, postgres_url, monkeypatch):
    monkeypatch.setenv("NOETIC_INDEX", "inline")
    home = tmp_path / "store"
    home.mkdir()
    (home / "config.toml").write_text(f'[store]\nurl = "{postgres_url}"\n', encoding="utf-8")
    ids = seed(home, scored=24)
    assert not (home / "noetic.db").exists()  # everything went to PostgreSQL
    with serving(home) as url:
        yield url, home, ids


def test_every_page_reads_a_postgresql_store(shared):
    url, _, ids = shared
    listing = httpx.get(url + "/", params={"agent": "gpt", "until": "2999-01-01"})
    assert listing.status_code == 200 and "12 sessions" in listing.text
    found = httpx.get(url + "/", params={"q": "flaky"}).text
    assert re.search(r"\b1 session\b", found)
    tasks = httpx.get(url + "/tasks", params={"agent": "gpt", "status": "open", "q": "task"})
    assert tasks.status_code == 200 and '<p class="count" id="count">12 tasks' in tasks.text
    scored = httpx.get(url + "/tasks", params={"engine": "nova", "outcome": "success"}).text
    assert re.findall(r'href="/tasks/(c_\w+)"', scored) == [ids.full_task]
    task = httpx.get(f"{url}/tasks/{ids.full_task}").text
    assert "PREFLIGHT #1" in task and "12 passed" in task and "$0.0087" in task
    run = httpx.get(f"{url}/runs/{ids.engine_task}").text
    assert "gate refused: max_tool_calls" in run
    calibration = httpx.get(url + "/calibration").text
    assert "25 scored tasks" in calibration and "Phase by phase" in calibration
    compare = httpx.get(url + "/compare", params={"a": ids.full_task, "b": "agent:gpt"})
    assert compare.status_code == 200 and "Agent gpt" in compare.text
    assert httpx.get(url + "/tasks/c_nope").status_code == 404


def test_a_write_from_another_process_reaches_the_stream(shared):
    url, home, _ = shared
    first = events_from(url + "/live", {}, want=1)[0]
    assert first["event"] == "ready"
    before = Cursor.parse(first["id"])
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(home)])
    try:
        got = events_from(url + "/live", {"after": str(before)}, want=1)
    finally:
        assert writer.wait(timeout=60) == 0
    assert got[0]["event"] == "change"
    assert Cursor.parse(got[0]["id"]).events > before.events
