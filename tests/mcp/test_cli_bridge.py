"""`execute_cli_command` and `cli_help`: allow-listed noetic commands, in-process, no shell."""

import json
import shlex

import click
import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st

from noetic.cli import app
from noetic.errors import ValidationError
from noetic.mcp.cli_bridge import ALLOWED, BLOCKED_OPTIONS, parse_command
from noetic.mcp.server import build_server

from ..conftest import uniform
from ._client import call, err, ok


@pytest.mark.subprocess
def test_cli_commands_act_on_the_servers_store_and_the_clients_session(server):
    scores = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))
    results = call(
        server,
        ("bootstrap_session", {"ai_id": "cli"}),
        ("execute_cli_command", {"command": f"noetic preflight 'a task' --vectors {scores!r}"}),
        ("get_epistemic_state", {}),
        ("execute_cli_command", {"command": "sessions list --json"}),
        ("execute_cli_command", {"command": "calibration drift --json"}),
    )
    boot, pre, state, listed, drift = map(ok, results)
    assert pre["exit_code"] == 0
    command = pre["command"]
    assert command[command.index("--session") + 1] == boot["session"]["id"]
    assert state["open_cascade"]["task"] == "a task"  # the MCP tools see what the CLI wrote
    assert [s["ai_id"] for s in json.loads(listed["stdout"])] == ["cli"]
    assert "insufficient data" in json.loads(drift["stdout"])["reason"]


@pytest.mark.subprocess
def test_session_commands_need_the_clients_own_session(server, _isolated_home, monkeypatch):
    # Neither a session the CLI's default agent started nor the server's environment leaks in.
    from noetic.store.current import write_current_session

    (boot,) = call(server, ("bootstrap_session", {"ai_id": "other"}))
    sid = ok(boot)["session"]["id"]
    write_current_session(_isolated_home, sid)
    monkeypatch.setenv("NOETIC_SESSION", sid)
    (fresh,) = call(server, ("execute_cli_command", {"command": "state"}))
    assert ok(fresh)["exit_code"] == 0  # the in-process server is one client: its own session
    for command, message in (
        ("bootstrap --ai-id x", "bootstrap_session"),
        ("state --json", "acts on a session and this client has none"),
    ):
        other = build_server(_isolated_home)
        (result,) = call(other, ("execute_cli_command", {"command": command}))
        assert message in err(result)
    other = build_server(_isolated_home)
    (named,) = call(other, ("execute_cli_command", {"command": f"state --session {sid} --json"}))
    assert json.loads(ok(named)["stdout"])["session"]["id"] == sid


@pytest.mark.subprocess
def test_a_command_that_would_read_stdin_gets_an_empty_one(server):
    # Without scores `preflight` prints the prompt; it must not read the protocol's stdin.
    results = call(
        server,
        ("bootstrap_session", {}),
        ("execute_cli_command", {"command": "preflight 'the task'"}),
    )
    out = ok(results[1])
    assert out["exit_code"] == 0 and "TASK: the task" in out["stdout"]


@pytest.mark.subprocess
def test_a_failing_command_reports_its_exit_code_and_message(server):
    (result,) = call(server, ("execute_cli_command", {"command": "sessions show s_nope"}))
    out = ok(result)
    assert out["exit_code"] == 1 and "unknown session" in out["data"]["error"]["message"]
    (text,) = call(
        server, ("execute_cli_command", {"command": "sessions show s_nope", "output": "text"})
    )
    out = ok(text)
    assert out["exit_code"] == 1 and "unknown session" in out["stderr"] and out["data"] is None


@pytest.mark.subprocess
def test_the_agent_gets_json_or_plain_text_never_box_drawing(server):
    results = call(
        server,
        ("bootstrap_session", {"ai_id": "reader"}),
        ("execute_cli_command", {"command": "sessions list"}),
        ("execute_cli_command", {"command": "profile list", "output": "text"}),
    )
    listed, profiles = ok(results[1]), ok(results[2])
    assert [s["ai_id"] for s in listed["data"]] == ["reader"]
    assert listed["command"][-1] == "--json"
    text = profiles["stdout"]
    assert "balanced" in text and not set("┏┃━│└┡") & set(text)
    assert text.splitlines()[0].split()[:2] == ["name", "threshold"]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("rm -rf /", "not an allowed"),
        ("noetic serve", "not an allowed"),
        ("cascade run 'task'", "not an allowed"),
        ("sessions export x -o /tmp/y", "allows only"),
        ("profile import /etc/passwd", "allows only"),
        ("sessions", "allows only"),
        ("state --store /etc", "--store cannot"),
        ("state --store=/etc", "--store cannot"),
        ("preflight t --vectors-file /etc/passwd", "--vectors-file cannot"),
        ("calibration report --plot /tmp/x.png", "--plot cannot"),
        ("recall task --qdrant http://elsewhere", "--qdrant cannot"),
        ("preflight t --provider ollama:x", "--provider cannot"),
        ("state 'unclosed", "cannot parse"),
        ("", "empty command"),
        ("noetic", "empty command"),
        ("state; rm -rf /", "not an allowed"),
    ],
)
def test_commands_off_the_allow_list_are_refused(server, command, message):
    (result,) = call(server, ("execute_cli_command", {"command": command}))
    assert message in err(result)


@pytest.mark.subprocess
def test_shell_syntax_is_never_interpreted(server, tmp_path):
    target = tmp_path / "pwned"
    _, result = call(
        server,
        ("bootstrap_session", {}),
        ("execute_cli_command", {"command": f"state && touch {target}"}),
    )
    out = ok(result)
    assert out["exit_code"] == 2  # typer rejects the stray arguments; no shell ran them
    assert not target.exists()


def _command(path):
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return cmd


@pytest.mark.parametrize(
    "path",
    [(c,) if subs is None else (c, s) for c, subs in ALLOWED.items() for s in sorted(subs or ())],
)
def test_every_allowed_command_exists_and_takes_store(path):
    cmd = _command(path)
    assert not isinstance(cmd, click.Group), path
    assert any("--store" in p.opts for p in cmd.params), path


@given(st.text(max_size=80))
def test_parse_command_returns_only_allowed_commands_or_refuses(text):
    try:
        args = parse_command(text)
    except ValidationError:
        return
    assert args[0] in ALLOWED
    assert not any(a.split("=", 1)[0] in BLOCKED_OPTIONS for a in args)
    words = shlex.split(text)
    assert args == (words[1:] if words[0] == "noetic" else words)


@pytest.mark.slow
def test_cli_help(server):
    results = call(
        server,
        ("cli_help", {}),
        ("cli_help", {"command": "noetic preflight"}),
        ("cli_help", {"command": "no-such-command"}),
        ("cli_help", {"command": "'unclosed"}),
    )
    assert "bootstrap" in ok(results[0])["text"]
    assert "--vectors" in ok(results[1])["text"]
    assert "no help for 'no-such-command'" in err(results[2])
    assert "cannot parse" in err(results[3])
