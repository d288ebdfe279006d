"""Claude Code, further in: subagents get tasks of their own under the parent's, PermissionDenied
and StopFailure are kept as events on the task (never as outcomes), TaskCompleted asks for the
POSTFLIGHT as Stop does, and noetic doctor checks every http hook URL."""

from __future__ import annotations

import json

import pytest

from noetic.calibration import list_outcomes
from noetic.operations.task_view import task_view
from noetic.store import Store

from ..conftest import serving
from .conftest import cli_json
from .test_hooks import hook, open_task, session_of, start


@pytest.mark.subprocess
def test_a_subagent_has_a_task_of_its_own_under_the_parents(project, home, _isolated_home):
    start(project)
    parent = open_task(_isolated_home)
    sid = session_of(_isolated_home)
    for _ in range(2):  # a resumed subagent keeps its task
        hook("subagent-start", "SubagentStart", project, agent_id="a-1", agent_type="reviewer")
    with Store(_isolated_home) as store:
        [sub] = [c for c in store.cascades(sid) if c.id != parent]
        assert sub.status == "open" and sub.task == "subagent reviewer (a-1)"
        assert sub.result == {"subagent": "reviewer", "agent_id": "a-1", "parent": parent}
        assert store.open_cascade_of(sid).id == sub.id  # its test runs are its outcomes
    hook("subagent-stop", "SubagentStop", project, agent_id="a-1", agent_type="reviewer",
         stop_hook_active=False, last_assistant_message="two problems found")  # fmt: skip
    with Store(_isolated_home) as store:
        sub = store.get_cascade(sub.id)
        assert sub.status == "completed" and sub.result["last_message"] == "two problems found"
        assert store.open_cascade_of(sid).id == parent  # the parent's task goes on


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "event, name, extra, line",
    [
        ("permission-denied", "PermissionDenied",
         {"tool_name": "Bash", "reason": "denied by the user"},
         "Claude Code PermissionDenied (Bash): denied by the user"),
        ("stop-failure", "StopFailure", {"error": "overloaded_error"},
         "Claude Code StopFailure: overloaded_error"),
    ],
)  # fmt: skip
def test_what_the_host_reports_is_an_event_on_the_task_not_an_outcome(
    project, home, _isolated_home, event, name, extra, line
):
    start(project)
    task = open_task(_isolated_home)
    assert hook(event, name, project, **extra) is None
    with Store(_isolated_home) as store:
        view = task_view(store, task)
        assert [x.split(": ", 1)[1] for x in view.host_events] == [line]
        assert list_outcomes(store) == []


@pytest.mark.subprocess
def test_task_completed_asks_for_the_postflight_as_stop_does(project, home, _isolated_home):
    start(project)
    open_task(_isolated_home)
    reply = hook("task-completed", "TaskCompleted", project, task_id="1", task_subject="x")
    assert reply["decision"] == "block" and "POSTFLIGHT" in reply["reason"]
    assert hook("stop", "Stop", project, stop_hook_active=False) is None  # asked once per task


@pytest.mark.subprocess
def test_setup_installs_the_new_events(project, home, _isolated_home):
    cli_json("setup", "claude-code")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    for event in ("SubagentStart", "SubagentStop", "TaskCompleted", "PermissionDenied",
                  "StopFailure"):  # fmt: skip
        assert event in settings["hooks"], event


@pytest.mark.subprocess
def test_doctor_checks_every_hook_url(project, home, tmp_path, _isolated_home):
    """A typo'd event and a server of another project's store are both named."""
    _isolated_home.mkdir(parents=True)
    other = tmp_path / "other-store"
    other.mkdir()
    with serving(other) as url:
        base = url.rstrip("/")
        settings = {
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "http", "url": f"{base}/hooks/pre-tool-usee"}]}],
                "Stop": [{"hooks": [{"type": "http", "url": f"{base}/hooks/stop"}]}],
            }
        }  # fmt: skip
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text(json.dumps(settings))
        report = cli_json("doctor", code=1)
    checks = [c for c in report["checks"] if c["name"] == "claude-code hook urls (project)"]
    failed = next(c for c in checks if c["status"] == "fail")
    assert f"{base}/hooks/pre-tool-usee" in failed["detail"]
    split = next(c for c in checks if c["status"] == "warn")
    assert str(other) in split["detail"] and str(_isolated_home) in split["detail"]
