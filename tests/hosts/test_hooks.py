"""`noetic hook EVENT`: each fed the JSON Claude Code sends, checking the reply and the store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from noetic.assessment import Assessment
from noetic.calibration import list_outcomes as outcomes
from noetic.hosts.hooks.answer import estimate_tokens
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store.checkpoints import list_checkpoints
from noetic.store.current import read_current_session

from ..conftest import uniform
from .conftest import cli

CLAUDE_SESSION = "9f1c2d3e-0000-4000-8000-000000000001"


def payload(event: str, project: Path, **extra) -> str:
    data = {
        "session_id": CLAUDE_SESSION,
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": event,
        **extra,
    }
    return json.dumps(data)


def hook(name: str, event: str, project: Path, **extra):
    result = cli("hook", name, input=payload(event, project, **extra))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if result.stdout.strip() else None


def start(project: Path, **extra) -> dict:
    reply = hook("session-start", "SessionStart", project, source="startup", **extra)
    assert reply is not None
    return reply


def session_of(home: Path, claude_session: str = CLAUDE_SESSION) -> str:
    sid = read_current_session(home, f"claude-code:{claude_session}")
    assert sid is not None
    return sid


def tracker(home: Path) -> Tracker:
    return Tracker(Store(home), ProfileRegistry(home / "profiles"))


def open_task(home: Path, task: str = "fix the flaky test") -> str:
    t = tracker(home)
    try:
        recorded = t.preflight(
            session_of(home), task, Assessment.from_input("preflight", uniform(0.7))
        )
        return recorded.cascade.id
    finally:
        t.store.close()


def finish_task(home: Path, task: str, sid: str) -> None:
    t = tracker(home)
    try:
        t.preflight(sid, task, Assessment.from_input("preflight", uniform(0.6)))
        t.postflight(sid, Assessment.from_input("postflight", uniform(0.8)))
    finally:
        t.store.close()


@pytest.mark.subprocess
def test_session_start_opens_a_session_and_answers_the_context(project, home, _isolated_home):
    reply = start(project)
    out = reply["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    sid = session_of(_isolated_home)
    assert f'session_id="{sid}"' in out["additionalContext"]
    with Store(_isolated_home) as store:
        session = store.get_session(sid)
    assert session.ai_id == "claude-code" and session.project == "project"
    assert session.status == "active"


@pytest.mark.subprocess
def test_resume_keeps_the_session_and_another_claude_session_gets_its_own(
    project, home, _isolated_home
):
    start(project)
    first = session_of(_isolated_home)
    open_task(_isolated_home, "migrate the schema")
    reply = hook("session-start", "SessionStart", project, source="resume")
    assert session_of(_isolated_home) == first
    assert "Open task: migrate the schema" in reply["hookSpecificOutput"]["additionalContext"]
    other = "9f1c2d3e-0000-4000-8000-000000000002"
    result = cli(
        "hook",
        "session-start",
        input=json.dumps({"session_id": other, "cwd": str(project), "source": "startup"}),
    )
    assert result.exit_code == 0
    assert session_of(_isolated_home, other) != first


@pytest.mark.subprocess
def test_session_start_recalls_the_projects_earlier_tasks_within_the_budget(
    project, home, _isolated_home
):
    start(project)
    sid = session_of(_isolated_home)
    for i in range(12):
        finish_task(_isolated_home, f"task number {i} " + "with a long description " * 5, sid)
    context = start(project)["hookSpecificOutput"]["additionalContext"]
    assert "## Earlier tasks in project" in context
    assert context.index("task number 11") < context.index("task number 10")  # newest first
    assert "no outcome" in context
    (_isolated_home / "config.toml").write_text("[hooks]\ncontext_tokens = 200\n")
    small = start(project)["hookSpecificOutput"]["additionalContext"]
    assert estimate_tokens(small) <= 200
    assert small.count("\n- ") < context.count("\n- ")


@pytest.mark.subprocess
def test_session_start_pins_the_session_for_shell_commands(
    project, home, _isolated_home, monkeypatch
):
    env_file = project / "claude-env"
    monkeypatch.setenv("CLAUDE_ENV_FILE", str(env_file))
    start(project)
    assert env_file.read_text() == f"export NOETIC_SESSION={session_of(_isolated_home)}\n"


@pytest.mark.subprocess
def test_a_bad_budget_is_logged_and_the_agent_goes_on(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    (_isolated_home / "config.toml").write_text("[hooks]\ncontext_tokens = 3\n")
    result = cli("hook", "session-start", input=payload("SessionStart", project))
    assert result.exit_code == 0 and result.stdout == ""
    assert "context_tokens" in (_isolated_home / "hooks.log").read_text()


@pytest.mark.subprocess
def test_pre_compact_checkpoints_the_open_task(project, home, _isolated_home):
    start(project)
    assert hook("pre-compact", "PreCompact", project, trigger="auto") is None
    cascade = open_task(_isolated_home)
    assert (
        hook("pre-compact", "PreCompact", project, trigger="manual", custom_instructions="") is None
    )
    with Store(_isolated_home) as store:
        found = [cp for _, cp in list_checkpoints(store, project) if cp.phase == "compact"]
    assert len(found) == 1
    assert found[0].cascade == cascade and found[0].note.startswith("before manual compaction")


@pytest.mark.subprocess
def test_stop_asks_for_the_postflight_once_per_task(project, home, _isolated_home):
    start(project)
    assert hook("stop", "Stop", project, stop_hook_active=False) is None  # no task open
    open_task(_isolated_home, "rename the module")
    reply = hook("stop", "Stop", project, stop_hook_active=False)
    assert reply["decision"] == "block"
    assert "rename the module" in reply["reason"] and "POSTFLIGHT" in reply["reason"]
    assert hook("stop", "Stop", project, stop_hook_active=True) is None
    assert hook("stop", "Stop", project, stop_hook_active=False) is None  # asked already
    open_task_id = open_task  # a new task is asked about again
    t = tracker(_isolated_home)
    t.end_task(session_of(_isolated_home), "abandoned", {})
    t.store.close()
    open_task_id(_isolated_home, "second task")
    assert hook("stop", "Stop", project, stop_hook_active=False)["decision"] == "block"


@pytest.mark.subprocess
def test_stop_hook_active_never_blocks_even_on_a_new_task(project, home, _isolated_home):
    start(project)
    open_task(_isolated_home)
    assert hook("stop", "Stop", project, stop_hook_active=True) is None


def bash(project: Path, command: str, *, failed: bool = False, **extra):
    if failed:
        return hook(
            "post-tool-use",
            "PostToolUseFailure",
            project,
            tool_name=extra.pop("tool_name", "Bash"),
            tool_input={"command": command},
            tool_use_id="toolu_1",
            error=extra.pop("error", "Exit code 2\n1 failed, 3 passed"),
            **extra,
        )
    return hook(
        "post-tool-use",
        "PostToolUse",
        project,
        tool_name=extra.pop("tool_name", "Bash"),
        tool_input={"command": command, "description": "run the tests"},
        tool_response=extra.pop(
            "tool_response",
            {"stdout": "4 passed", "stderr": "", "interrupted": False, "isImage": False},
        ),
        **extra,
    )


def recorded(home: Path) -> list:
    with Store(home) as store:
        return outcomes(store)


@pytest.mark.subprocess
def test_a_configured_test_command_records_its_exit_status(project, home, _isolated_home):
    start(project)
    (_isolated_home / "config.toml").write_text(
        '[outcomes]\ntest_commands = ["pytest", "npm test"]\n'
    )
    (project / "package.json").write_text(json.dumps({"scripts": {"test": "jest"}}))
    bash(project, "pytest -q")  # no task open yet: nothing to record
    assert recorded(_isolated_home) == []
    cascade = open_task(_isolated_home)
    assert bash(project, "cd . && python -m pytest -q tests/unit") is None  # prints nothing
    bash(project, "CI=1 npm test", failed=True, error="Exit code 2\n1 failed")
    bash(project, "ls -la")  # not a test command
    bash(project, "pytest | tail -3")  # the pipe hides pytest's status
    bash(project, "pytest", tool_response={"stdout": "", "interrupted": True})
    bash(project, "pytest", tool_name="Read")  # not Bash
    rows = recorded(_isolated_home)
    assert [(r.cascade_id, r.score, r.source) for r in rows] == [
        (cascade, 1.0, "test"),
        (cascade, 0.0, "test"),
    ]
    assert (
        rows[0].evidence == "`cd . && python -m pytest -q tests/unit` exited 0 (Claude Code Bash)"
    )
    assert rows[1].evidence == "`CI=1 npm test` exited 2 (Claude Code Bash)"
    log = (_isolated_home / "hooks.log").read_text()
    assert "`pytest -q` not recorded: session " in log and "has no open task" in log
    assert "`pytest | tail -3` not recorded: a pipe into `tail -3` hides" in log
    assert "`pytest` not recorded: interrupted before it finished" in log
    assert "ls -la" not in log  # a command that is no test run is not logged


@pytest.mark.subprocess
def test_a_usage_error_is_not_an_outcome_and_keeps_the_pass(project, home, _isolated_home):
    start(project)
    (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
    open_task(_isolated_home)
    bash(project, "pytest -q")
    bash(project, "pytest -q tests/nonexist.py", failed=True, error="Exit code 4\nERROR: not found")
    bash(project, "pytest -q -k nothing", failed=True, error="Exit code 5")
    assert [r.score for r in recorded(_isolated_home)] == [1.0]
    log = (_isolated_home / "hooks.log").read_text()
    assert "pytest exit 4 means a usage error (bad option or path)" in log
    assert "pytest exit 5 means no tests collected" in log


@pytest.mark.subprocess
def test_a_cd_that_fails_before_pytest_is_not_a_failed_outcome(project, home, _isolated_home):
    import subprocess

    start(project)
    (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
    open_task(_isolated_home)
    bash(project, "pytest -q")
    line = "cd gone && pytest -q"
    done = subprocess.run(["bash", "-c", line], cwd=project, capture_output=True, text=True)
    bash(project, line, failed=True, error=f"Exit code {done.returncode}\n{done.stderr}")
    (project / "sub").mkdir()  # the same line where the cd works and the tests fail
    bash(project, "cd sub && pytest -q", failed=True, error="Exit code 1\n1 failed in 0.1s")
    assert [r.score for r in recorded(_isolated_home)] == [1.0, 0.0]
    log = (_isolated_home / "hooks.log").read_text()
    assert "`cd gone && pytest -q` not recorded: `cd` failed before the test run started" in log


@pytest.mark.subprocess
def test_npm_test_without_a_test_script_records_nothing(project, home, _isolated_home):
    start(project)
    (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["npm test"]\n')
    (project / "package.json").write_text(json.dumps({"name": "x"}))
    open_task(_isolated_home)
    bash(project, "npm test", failed=True, error="Exit code 1\nMissing script: test")
    assert recorded(_isolated_home) == []
    assert "package.json has no test script" in (_isolated_home / "hooks.log").read_text()


@pytest.mark.subprocess
def test_the_outcome_goes_to_this_claude_sessions_task_only(project, home, _isolated_home):
    other = "9f1c2d3e-0000-4000-8000-000000000002"
    start(project)
    open_task(_isolated_home, "the other session's task")  # opened in CLAUDE_SESSION
    result = cli(
        "hook",
        "session-start",
        input=json.dumps({"session_id": other, "cwd": str(project), "source": "startup"}),
    )
    assert result.exit_code == 0
    (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
    result = cli(
        "hook",
        "post-tool-use",
        input=json.dumps(
            {
                "session_id": other,
                "cwd": str(project),
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "pytest"},
                "tool_response": {"stdout": "1 passed", "interrupted": False},
            }
        ),
    )
    assert result.exit_code == 0
    assert recorded(_isolated_home) == []  # never the task of another Claude session
    assert (
        f"session {session_of(_isolated_home, other)} has no open task"
        in (_isolated_home / "hooks.log").read_text()
    )


@pytest.mark.subprocess
def test_session_end_ends_the_session_and_a_new_start_opens_another(project, home, _isolated_home):
    start(project)
    sid = session_of(_isolated_home)
    assert hook("session-end", "SessionEnd", project, reason="logout") is None
    with Store(_isolated_home) as store:
        ended = store.get_session(sid)
    assert ended.status == "ended" and ended.ended_at is not None
    start(project)
    assert session_of(_isolated_home) != sid


@pytest.mark.subprocess
def test_hooks_in_a_project_without_a_store_do_nothing(project, home, _isolated_home):
    for name, event in [
        ("stop", "Stop"),
        ("pre-compact", "PreCompact"),
        ("session-end", "SessionEnd"),
    ]:
        assert hook(name, event, project) is None
    assert not _isolated_home.exists()


@pytest.mark.subprocess
def test_a_broken_store_exits_cleanly_and_logs(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    (_isolated_home / "noetic.db").write_bytes(b"this is not a database" * 100)
    for name, event in [("session-start", "SessionStart"), ("stop", "Stop")]:
        result = cli("hook", name, input=payload(event, project))
        assert result.exit_code == 0
        assert result.stdout == ""
        assert "hooks.log" in result.stderr
    log = (_isolated_home / "hooks.log").read_text().splitlines()
    assert len(log) == 2
    assert " session-start StoreError: " in log[0] and " stop StoreError: " in log[1]


@pytest.mark.parametrize(
    ("stdin", "error"),
    [
        ("{not json", "ValidationError: the hook's stdin is not valid JSON"),
        ("[1, 2]", "ValidationError: the hook's stdin is not a JSON object"),
        ("\xff\xfe", "ValidationError"),
        ('{"session_id": ' * 300 + "1", "LimitExceeded: the hook's stdin"),
    ],
)
@pytest.mark.subprocess
def test_malformed_input_exits_cleanly(project, home, _isolated_home, stdin, error):
    _isolated_home.mkdir(parents=True)
    result = cli("hook", "stop", input=stdin)
    assert result.exit_code == 0 and result.stdout == ""
    assert f"stop {error}" in (_isolated_home / "hooks.log").read_text()


@pytest.mark.subprocess
def test_an_unknown_event_exits_cleanly(project, home, _isolated_home):
    result = cli("hook", "post-everything", input=payload("PostEverything", project))
    assert result.exit_code == 0 and result.stdout == ""
    assert "unknown hook event 'post-everything'" in result.stderr


@pytest.mark.subprocess
def test_the_real_command_prints_only_the_json_the_host_reads(project, home, _isolated_home):
    """A separate process, as Claude Code runs it: stdout is one JSON document."""
    env = {**os.environ, "NOETIC_HOME": str(_isolated_home), "HOME": str(home)}
    exe = Path(sys.executable).parent / "noetic"
    done = subprocess.run(
        [str(exe), "hook", "session-start"],
        input=payload("SessionStart", project, source="startup"),
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


@pytest.mark.subprocess
@pytest.mark.parametrize("event", ["stop", "post-tool-use", "session-start", "pre-tool-use"])
def test_a_hook_loads_no_heavy_module(project, home, _isolated_home, event):
    """Hooks run on every turn of the agent: no model SDK, server, HTTP client, numpy, Rich or
    tokenizer is imported (bench/hooks.py measures the time)."""
    heavy = ("numpy", "rich", "mcp", "tokenizers", "httpx", "anthropic", "openai", "wordllama")
    start(project)
    code = (
        "import sys\n"
        f"sys.argv = ['noetic', 'hook', {event!r}]\n"
        "from noetic.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {heavy!r} if m in sys.modules], file=sys.stderr)\n"
    )
    env = {**os.environ, "NOETIC_HOME": str(_isolated_home)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=payload("Stop", project, stop_hook_active=False),
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"
