"""Hooks at server speed: `noetic serve` answers `POST /hooks/{event}` with the JSON the command
hooks print, on real HTTP over loopback; `noetic setup claude-code --hooks http` installs them
and `noetic doctor` says whether their server answers."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from noetic.hosts.setup import claude_code

from ..conftest import serving
from .conftest import cli, cli_json
from .test_hooks import open_task, payload, session_of


def post(url: str, event: str, body: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"{url}/hooks/{event}", data=body.encode(), method="POST")
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def command(event: str, body: str) -> str:
    result = cli("hook", event, input=body)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def both(url: str, event: str, body: str) -> tuple[dict | None, dict | None]:
    status, text = post(url, event, body)
    assert status == 200
    by_command = command(event, body)
    return (json.loads(text) if text else None), (json.loads(by_command) if by_command else None)


def bash(project: Path, command_line: str, event: str = "PreToolUse") -> str:
    return payload(
        event, project, tool_name="Bash", tool_input={"command": command_line},
        tool_response={"stdout": "", "interrupted": False},
    )  # fmt: skip


@pytest.mark.subprocess
def test_http_and_command_hooks_give_the_same_answers(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    with serving(_isolated_home) as url:
        status, text = post(
            url, "session-start", payload("SessionStart", project, source="startup")
        )
        assert status == 200
        started = json.loads(text)["hookSpecificOutput"]
        sid = session_of(_isolated_home)
        assert f'session_id="{sid}"' in started["additionalContext"]
        resumed = payload("SessionStart", project, source="resume")
        by_http, by_command = both(url, "session-start", resumed)
        assert by_http == by_command and by_http is not None
        assert session_of(_isolated_home) == sid  # both kept the Claude session's own

        for line in ("rm -rf /", "git push origin main", "ls -la", "echo 'open"):
            by_http, by_command = both(url, "pre-tool-use", bash(project, line))
            assert by_http == by_command, line
        assert by_http["hookSpecificOutput"]["permissionDecision"] == "deny"

        (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
        task = open_task(_isolated_home)
        status, text = post(url, "post-tool-use", bash(project, "pytest -q", "PostToolUse"))
        assert (status, text) == (200, "")
        assert command("post-tool-use", bash(project, "pytest -q", "PostToolUse")) == ""
        from noetic.calibration import list_outcomes
        from noetic.store import Store

        with Store(_isolated_home) as store:
            assert [(o.cascade_id, o.score) for o in list_outcomes(store)] == [
                (task, 1.0),
                (task, 1.0),
            ]

        stop = payload("Stop", project, stop_hook_active=False)
        status, text = post(url, "stop", stop)
        assert json.loads(text)["decision"] == "block"
        assert command("stop", stop) == ""  # asked once per task, whichever kind asked

        by_http, by_command = both(url, "session-end", payload("SessionEnd", project))
        assert by_http is None and by_command is None


@pytest.mark.subprocess
def test_what_is_no_hook_is_refused_and_a_failing_hook_answers_200_empty_and_logs(
    project, home, _isolated_home
):
    """A typo in settings.json (an unknown event) or a body that is not a JSON object is a
    client error Claude Code shows; a real hook that fails stays out of the agent's way."""
    _isolated_home.mkdir(parents=True)
    (_isolated_home / "config.toml").write_text("[hooks]\ncontext_tokens = 3\n")
    with serving(_isolated_home) as url:
        status, text = post(url, "post-everything", "{}")
        assert status == 404
        error = json.loads(text)["error"]
        assert error["message"] == "unknown hook event 'post-everything'"
        assert "pre-tool-use" in error["fix"]
        for body in ("{not json", "[1]", "\xff"):
            status, text = post(url, "stop", body)
            assert status == 400, body
            assert "the hook's request body" in json.loads(text)["error"]["message"]
        assert post(url, "session-start", payload("SessionStart", project)) == (200, "")
        with urllib.request.urlopen(f"{url}/hooks", timeout=10) as response:
            listing = json.loads(response.read())
    assert "pre-tool-use" in listing["events"]
    assert "context_tokens" in (_isolated_home / "hooks.log").read_text()


@pytest.mark.subprocess
def test_the_token_rule_holds_for_hooks(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    with serving(_isolated_home, token="s3cret-token") as url:
        body = bash(project, "rm -rf /")
        assert post(url, "pre-tool-use", body)[0] == 401
        assert post(url, "pre-tool-use", body, token="wrong")[0] == 401
        status, text = post(url, "pre-tool-use", body, token="s3cret-token")
    assert status == 200
    assert json.loads(text)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.subprocess
def test_setup_installs_http_hooks_and_switches_back(project, home, _isolated_home):
    settings_path = project / ".claude" / "settings.json"
    cli_json("setup", "claude-code", "--hooks", "http")
    settings = json.loads(settings_path.read_text())
    for event, (name, matcher) in claude_code.HOOKS.items():
        [group] = settings["hooks"][event]
        assert group.get("matcher") == matcher
        [hook] = group["hooks"]
        if event == "SessionStart":  # Claude Code runs no http hook for it
            assert hook["type"] == "command" and hook["command"].endswith("hook session-start")
        else:
            assert hook == {
                "type": "http",
                "url": f"http://127.0.0.1:8765/hooks/{name}",
                "timeout": 30,
            }
    cli_json("setup", "claude-code", "--hooks", "http", "--url", "https://noetic.example:9000/mcp")
    entry = json.loads(settings_path.read_text())["hooks"]["Stop"][0]["hooks"][0]
    assert entry["url"] == "https://noetic.example:9000/hooks/stop"
    assert entry["headers"] == {"Authorization": "Bearer $NOETIC_TOKEN"}
    assert entry["allowedEnvVars"] == ["NOETIC_TOKEN"]
    cli_json("setup", "claude-code")  # back to command hooks: the http ones go
    settings = json.loads(settings_path.read_text())
    kinds = {h["type"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
    assert kinds == {"command"}
    cli_json("setup", "claude-code", "--hooks", "http")
    cli_json("setup", "claude-code", "--uninstall")
    assert not settings_path.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hooks", "smoke"], "unknown hook kind 'smoke'"),
        (["--url", "http://127.0.0.1:9"], "--url is for --hooks http"),
        (["--hooks", "http", "--url", "ftp://x"], "is not the address of a server"),
    ],
)
@pytest.mark.subprocess
def test_bad_hook_options_are_refused(project, home, _isolated_home, args, message):
    result = cli("setup", "claude-code", *args)
    assert result.exit_code != 0
    assert message in result.output
    assert not (project / ".claude").exists()


def doctor() -> list[dict]:
    result = cli("doctor", "--json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["checks"]


@pytest.mark.subprocess
def test_doctor_says_which_hooks_and_whether_the_server_answers(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    cli_json("setup", "claude-code")
    checks = {c["name"]: c for c in doctor()}
    assert checks["claude-code hooks (project)"]["status"] == "ok"
    assert "command hooks" in checks["claude-code hooks (project)"]["detail"]
    with serving(_isolated_home) as url:
        cli_json("setup", "claude-code", "--hooks", "http", "--url", url)
        checks = {c["name"]: c for c in doctor()}
        assert checks["claude-code hooks (project)"]["status"] == "ok"
        assert "the server answers" in checks["claude-code hooks (project)"]["detail"]
    checks = {c["name"]: c for c in doctor()}
    down = checks["claude-code hooks (project)"]
    assert down["status"] == "fail" and "does not answer" in down["detail"]
    assert "non-blocking error" in down["detail"] and "noetic serve" in down["fix"]


@pytest.mark.subprocess
def test_hooks_posted_with_a_store_token_write_as_it(project, home, _isolated_home):
    """The session a SessionStart hook opens and the outcome a test run's PostToolUse records
    name the token the hooks were posted with."""
    from noetic.calibration import list_outcomes
    from noetic.operations.access_tokens import create_token
    from noetic.store import Store

    with Store(_isolated_home) as store:
        alice = create_token(store, "alice")["token"]
    (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
    with serving(_isolated_home) as url:
        start = payload("SessionStart", project, source="startup")
        assert post(url, "session-start", start)[0] == 401  # alice's token makes it required
        assert post(url, "session-start", start, token=alice)[0] == 200
        task = open_task(_isolated_home)  # through the CLI's code: no token
        ran = bash(project, "pytest -q", "PostToolUse")
        assert post(url, "post-tool-use", ran, token=alice) == (200, "")
    with Store(_isolated_home) as store:
        sid = session_of(_isolated_home)
        assert (
            store.conn.execute("SELECT written_by FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
            == "alice"
        )
        assert store.get_cascade(task).written_by is None
        [outcome] = list_outcomes(store)
        by = store.conn.execute("SELECT written_by FROM outcomes WHERE id = ?", (outcome.id,))
        assert by.fetchone()[0] == "alice"
