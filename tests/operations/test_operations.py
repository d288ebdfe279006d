"""The operations layer alone, on a real store: what every interface relies on it to do once.

The CLI and MCP tests cover each operation through its interface; these check the parts an
interface cannot see: who the session is filed under, that a run's watcher is removed when the
run ends, that arguments are checked before the provider is resolved (an MCP client without
sampling gets "the task is empty", not a sampling error), and that the workflow's current
session is the store's only when asked.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from noetic.errors import NotFoundError, ValidationError
from noetic.events import Event, EventKind
from noetic.llm.scripted import ScriptedProvider
from noetic.operations import (
    AssessmentPrompt,
    Started,
    bootstrap,
    check,
    postflight,
    preflight,
    start_cascade,
    start_chain,
    start_nova,
    state,
)
from noetic.runtime.opening import current_session, open_tracker
from noetic.runtime.tracker import Tracker

from ..conftest import uniform

GOOD = uniform(0.85, engagement=0.9, coherence=0.9)


@pytest.fixture
def tracker(tmp_path: Path) -> Tracker:
    opened = open_tracker(tmp_path / "store", create=True)
    yield opened
    opened.store.close()


@pytest.mark.subprocess
def test_the_workflow_from_bootstrap_to_postflight(tracker: Tracker) -> None:
    done = bootstrap(tracker, ai_id="ops")
    sid = current_session(tracker, None, "ops")
    assert sid == done.session.id
    prompted = preflight(tracker, sid, "tidy the parser")
    assert isinstance(prompted, AssessmentPrompt) and not prompted.recorded
    assert state(tracker, sid).open_cascade is None  # a prompt records nothing
    opened = preflight(tracker, sid, "tidy the parser", GOOD)
    assert opened.cascade.task == "tidy the parser"
    assert check(tracker, sid, {"know": 0.9}).assessment.assessment.vectors["know"] == 0.9
    closed = postflight(tracker, sid, GOOD)
    assert closed.calibration is not None
    assert state(tracker, sid).open_cascade is None


def test_a_session_is_the_agents_current_one_only_when_asked(tracker: Tracker) -> None:
    bootstrap(tracker, ai_id="server", remember=False)
    with pytest.raises(NotFoundError, match="has no current session"):
        current_session(tracker, None, "server")


def test_scores_and_a_model_are_not_both_taken(tracker: Tracker) -> None:
    sid = bootstrap(tracker, ai_id="ops").session.id
    with pytest.raises(ValidationError, match="not both"):
        preflight(tracker, sid, "t", GOOD, provider="ollama:x")


def _unreachable() -> ScriptedProvider:
    raise AssertionError("the provider was resolved before the arguments were checked")


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (lambda t: start_cascade(t, " ", provider=_unreachable), "the task is empty"),
        (lambda t: start_chain(t, "", provider=_unreachable), "the query is empty"),
        (lambda t: start_nova(t, "  ", provider=_unreachable), "the question is empty"),
    ],
)
def test_arguments_are_checked_before_the_provider_is_resolved(
    tracker: Tracker, start, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        asyncio.run(start(tracker))


@pytest.mark.subprocess
def test_a_cascade_is_filed_under_its_model_and_its_watcher_removed(
    tracker: Tracker, tmp_path: Path
) -> None:
    scores = json.dumps({"vectors": GOOD})
    plan = '{"approach": "answer directly", "strategy": "general", "complex": false}'
    model = ScriptedProvider([scores, plan, "The answer.", scores], model="tiny-model")
    started: list[Started] = []
    seen: list[Event] = []
    subscribers = len(tracker.bus._subscribers)
    run = asyncio.run(
        start_cascade(
            tracker, "say hi", provider=model, workspace=tmp_path, remember=True,
            on_start=started.append, on_event=seen.append,
        )
    )  # fmt: skip
    assert run.output == "The answer."
    (first,) = started
    assert first.ai_id == "tiny-model" and first.provider == "tiny-model"
    assert tracker.store.get_session(first.session_id).ai_id == "tiny-model"
    assert current_session(tracker, None, "tiny-model") == first.session_id
    assert EventKind.PHASE_COMPLETED in {e.kind for e in seen}
    assert len(tracker.bus._subscribers) == subscribers  # the watcher is gone with the run


def test_every_name_the_package_lists_loads_from_its_module():
    import noetic.operations as ops

    for name in ops.__all__:
        assert getattr(ops, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_operation"):
        _ = ops.no_such_operation


def test_threshold_goals_come_from_the_gaps_and_are_not_added_twice(tmp_path: Path):
    from noetic.operations import generate_goals, list_goals

    tracker = open_tracker(tmp_path, create=True)
    boot = bootstrap(tracker, ai_id="a")
    preflight(tracker, boot.session.id, "fix the parser", uniform(0.4))
    first = generate_goals(tracker, boot.session.id)
    assert first and all(g.source == "threshold" for g in first)
    assert generate_goals(tracker, boot.session.id) == []  # the open ones stay, none twice
    assert [g.id for g in list_goals(tracker.store, boot.session.id)] == [g.id for g in first]
    tracker.store.close()


def test_where_creates_nothing_and_names_the_missing_session(tmp_path: Path):
    from noetic.operations import where

    found = where(tmp_path / "nowhere", None, "someone")
    assert not found.exists and found.session_id is None
    assert "someone has no current session" in found.session_from
    assert not (tmp_path / "nowhere").exists()


def test_rebuild_rewrites_a_deleted_session_file(tmp_path: Path):
    from noetic.operations import rebuild

    tracker = open_tracker(tmp_path, create=True)
    boot = bootstrap(tracker, ai_id="a")
    preflight(tracker, boot.session.id, "fix the parser", GOOD)
    tracker.store.close()
    files = list((tmp_path / "sessions").glob("*.json"))
    assert files
    for f in files:
        f.unlink()
    rebuilt = rebuild(tmp_path)
    assert rebuilt.sessions == 1 and rebuilt.reflex_logs == 1 and rebuilt.restored is None
    assert len(list((tmp_path / "sessions").glob("*.json"))) == len(files)


def test_task_counts_are_one_query_and_say_zero_for_a_session_without_tasks(tmp_path: Path):
    from typer.testing import CliRunner

    from noetic.cli import app
    from noetic.operations.session_list import task_counts

    tracker = open_tracker(tmp_path, create=True)
    busy = bootstrap(tracker, ai_id="a").session.id
    idle = bootstrap(tracker, ai_id="b").session.id
    preflight(tracker, busy, "first", GOOD)
    tracker.end_task(busy, "abandoned", {})
    preflight(tracker, busy, "second", GOOD)
    assert task_counts(tracker.store, [busy, idle]) == {busy: 2, idle: 0}
    assert task_counts(tracker.store, []) == {}
    tracker.store.close()
    listed = CliRunner().invoke(
        app, ["sessions", "list", "--store", str(tmp_path)], env={"COLUMNS": "200"}
    )
    assert listed.exit_code == 0, listed.output
    tasks = {row.split()[0]: row.split()[3] for row in listed.stdout.splitlines()[1:]}
    assert tasks == {busy: "2", idle: "0"}  # the list's "tasks" column
