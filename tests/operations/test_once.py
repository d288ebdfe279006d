"""A write operation given a request id applies it once, on both backends: a second call with
the same id writes nothing and returns the first call's result; the same id with other
arguments is refused; and what a process ending mid-way leaves is answered truly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noetic.assessment import Assessment
from noetic.errors import StoreError, UsageError
from noetic.operations import bootstrap, check, investigate, outcome, postflight, preflight
from noetic.operations.once import Replayed, answered
from noetic.runtime.opening import open_tracker
from noetic.runtime.tracker import Tracker

from ..conftest import uniform

GOOD = uniform(0.85, engagement=0.9, coherence=0.9)
TABLES = ("sessions", "cascades", "assessments", "investigations", "outcomes", "requests")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def tracker(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Tracker]:
    where: str | Path = tmp_path / "store"
    if request.param == "postgresql":
        where = request.getfixturevalue("postgres_url")
        monkeypatch.setenv("NOETIC_STORE_URL", where)  # the store sets it: undone after
    opened = open_tracker(where, create=True)
    yield opened
    opened.store.close()


def rows(tracker: Tracker) -> dict[str, int]:
    conn = tracker.store.conn
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def twice(call, *args, **kwargs):
    """The first call's result, and the retry's."""
    first = call(*args, **kwargs)
    again = call(*args, **kwargs)
    assert not isinstance(first, Replayed)
    assert isinstance(again, Replayed), again
    return first, again


def test_each_write_called_twice_with_one_request_id_writes_once(tracker: Tracker) -> None:
    booted, again = twice(bootstrap, tracker, ai_id="ops", request_id="boot")
    assert again.result == booted and answered(again) == booted
    assert "request boot (bootstrap) was already applied" in again.note()
    sid = booted.session.id
    steps = [
        (preflight, (tracker, sid, "tidy the parser", GOOD), "pre"),
        (investigate, (tracker, sid, "read the parser"), "inv"),
        (check, (tracker, sid, {"know": 0.9}), "chk"),
        (postflight, (tracker, sid, GOOD), "post"),
        (outcome, (tracker.store, sid), "out"),
    ]
    for call, args, key in steps:
        extra = {"success": True, "evidence": "tests pass"} if call is outcome else {}
        first, again = twice(call, *args, request_id=key, **extra)
        assert again.result == first, call.__name__
        assert answered(again) == first
    assert rows(tracker) == {
        "sessions": 1, "cascades": 1, "assessments": 3, "investigations": 1, "outcomes": 1,
        "requests": 6,
    }  # fmt: skip


def test_one_request_id_names_one_request(tracker: Tracker) -> None:
    sid = answered(bootstrap(tracker, ai_id="ops")).session.id
    preflight(tracker, sid, "tidy the parser", GOOD)
    check(tracker, sid, {"know": 0.9}, request_id="r")
    before = rows(tracker)
    with pytest.raises(UsageError) as other:
        check(tracker, sid, {"know": 0.5}, request_id="r")
    assert "request id 'r' was already used for another request (check at" in other.value.message
    assert "new request id" in (other.value.fix or "")
    with pytest.raises(UsageError, match="already used for another request"):
        investigate(tracker, sid, "read the log", request_id="r")
    assert rows(tracker) == before


def test_a_request_is_its_arguments_as_the_operation_reads_them(tracker: Tracker) -> None:
    """The scores as JSON (the CLI's) and as an assessment (an MCP tool's) are one request:
    a retry through the other interface is answered, not refused nor applied again."""
    sid = answered(bootstrap(tracker, ai_id="ops")).session.id
    preflight(tracker, sid, "tidy the parser", GOOD)
    first = check(tracker, sid, {"know": 0.9, "p_success": 0.7}, request_id="same")
    built = Assessment.from_input("check", {"vectors": {"know": 0.9}})
    again = check(tracker, sid, built, p_success=0.7, request_id="same")
    assert isinstance(again, Replayed) and again.result == first
    assert rows(tracker)["assessments"] == 2


def test_a_prompt_records_no_request(tracker: Tracker) -> None:
    sid = answered(bootstrap(tracker, ai_id="ops")).session.id
    prompted = preflight(tracker, sid, "tidy the parser", request_id="p")
    assert not isinstance(prompted, Replayed) and not prompted.recorded
    assert rows(tracker)["requests"] == 0
    done = preflight(tracker, sid, "tidy the parser", GOOD, request_id="p")
    assert not isinstance(done, Replayed) and rows(tracker)["requests"] == 1


def test_a_failed_write_records_no_request_and_its_retry_applies_it(tracker: Tracker) -> None:
    sid = answered(bootstrap(tracker, ai_id="ops")).session.id
    with pytest.raises(UsageError):  # no open task: nothing to check
        check(tracker, sid, {"know": 0.9}, request_id="c")
    assert rows(tracker)["requests"] == 0
    preflight(tracker, sid, "tidy the parser", GOOD)
    done = check(tracker, sid, {"know": 0.9}, request_id="c")
    assert not isinstance(done, Replayed) and rows(tracker)["assessments"] == 2


def test_a_request_applied_without_its_answer_kept_is_not_applied_again(tracker: Tracker) -> None:
    """What a process ending between its write and keeping the answer leaves (possible where
    they are two transactions, on PostgreSQL): the retry writes nothing and says so."""
    sid = answered(bootstrap(tracker, ai_id="ops")).session.id
    preflight(tracker, sid, "tidy the parser", GOOD)
    check(tracker, sid, {"know": 0.9}, request_id="c")
    with tracker.store.transaction() as c:
        c.execute("UPDATE requests SET response = NULL WHERE id = ?", ("c",))
    before = rows(tracker)
    again = check(tracker, sid, {"know": 0.9}, request_id="c")
    assert isinstance(again, Replayed) and again.result is None
    assert "(its response was not kept)" in again.note()
    with pytest.raises(StoreError, match="was already applied") as refused:
        answered(again)
    assert "read the state" in (refused.value.fix or "")
    assert rows(tracker) == before


def test_on_sqlite_the_write_its_request_and_its_answer_commit_together(tmp_path: Path) -> None:
    """One transaction: no moment where the write is stored and its answer is not."""
    tracker = open_tracker(tmp_path / "store", create=True)
    try:
        sid = answered(bootstrap(tracker, ai_id="ops")).session.id
        preflight(tracker, sid, "tidy the parser", GOOD)
        statements: list[str] = []
        tracker.store.conn.set_trace_callback(statements.append)
        check(tracker, sid, {"know": 0.9}, request_id="c")
        tracker.store.conn.set_trace_callback(None)
    finally:
        tracker.store.close()
    wrote = next(i for i, s in enumerate(statements) if "INSERT INTO assessments" in s)
    begun = max(i for i, s in enumerate(statements[:wrote]) if s.startswith("BEGIN"))
    ended = next(i for i, s in enumerate(statements) if i > wrote and s == "COMMIT")
    inside = statements[begun:ended]
    assert any(s.startswith("INSERT INTO requests") for s in inside), statements
    assert any(s.startswith("UPDATE requests SET response") for s in inside), statements


def test_a_model_written_assessment_retried_asks_the_model_once(tracker: Tracker) -> None:
    """The request is looked up before the model is asked: a retry costs no second call."""
    import json

    from noetic.vectors import VECTOR_NAMES

    from ..llm.model_server import reply, running

    body = {v: {"score": 0.8, "rationale": f"{v} is fine"} for v in VECTOR_NAMES}
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(reply("```json\n" + json.dumps({"vectors": body}) + "\n```"))
        sid = answered(bootstrap(tracker, ai_id="ops")).session.id
        first = preflight(tracker, sid, "tidy the docs", provider=spec, request_id="m")
        again = preflight(tracker, sid, "tidy the docs", provider=spec, request_id="m")
        asked = len(server.requests)
    assert not isinstance(first, Replayed)
    assert isinstance(again, Replayed) and again.result == first
    assert asked == 1
    assert rows(tracker)["assessments"] == 1
