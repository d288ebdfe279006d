"""HTTP hooks trust only their project: real HTTP against a loopback `noetic serve` app, with the
JSON Claude Code posts. The workspace is the server's project, never the request's `cwd`, and
`/hooks` answers only requests addressed to loopback from no web page or a loopback one."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from noetic.store.current import read_current_session

from ..conftest import serving
from .test_hooks import CLAUDE_SESSION, payload


def send(
    url: str,
    path: str,
    body: str | None = None,
    *,
    headers: dict[str, str] | None = None,
    token: str | None = None,
) -> tuple[int, str]:
    request = urllib.request.Request(
        f"{url}{path}", data=body.encode() if body is not None else None
    )
    if body is not None:
        request.add_header("content-type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def bash(cwd: str, command: str) -> str:
    return json.dumps(
        {
            "session_id": CLAUDE_SESSION,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_01",
        }
    )


def decision(text: str) -> tuple[str, str] | None:
    if not text:
        return None
    out = json.loads(text)["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


@pytest.mark.subprocess
def test_the_workspace_is_the_servers_project_not_the_requests_cwd(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    with serving(_isolated_home) as url:  # started in the project
        status, text = send(url, "/hooks/pre-tool-use", bash("/", "echo x > /etc/x"))
        assert status == 200
        kind, reason = decision(text)
        assert kind == "deny"
        assert f"the request's cwd / is outside this server's project {project}" in reason
        for cwd in (str(project.parent), "/tmp", "relative/path"):
            kind, _ = decision(send(url, "/hooks/pre-tool-use", bash(cwd, "ls"))[1])
            assert kind == "deny", cwd
        # inside the project, the gate judges as ever, with the project as the workspace
        (project / "sub").mkdir()
        assert send(url, "/hooks/pre-tool-use", bash(str(project / "sub"), "ls"))[1] == ""
        kind, reason = decision(
            send(url, "/hooks/pre-tool-use", bash(str(project), "echo x > /etc/x"))[1]
        )
        assert kind == "deny" and "write-outside-workspace" in reason
        # another event from outside is refused too: nothing recorded, the reason logged
        start = payload("SessionStart", Path("/"), source="startup")
        assert send(url, "/hooks/session-start", start) == (200, "")
        assert read_current_session(_isolated_home, f"claude-code:{CLAUDE_SESSION}") is None
    log = (_isolated_home / "hooks.log").read_text()
    assert "session-start ValidationError: the request's cwd / is outside this server's " in log


@pytest.mark.subprocess
def test_a_broken_pre_tool_use_request_is_denied(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    with serving(_isolated_home) as url:
        kind, reason = decision(send(url, "/hooks/pre-tool-use", "{not json")[1])
        assert kind == "deny" and "not valid JSON" in reason
        (_isolated_home / "config.toml").write_text("not toml [\n")
        kind, reason = decision(send(url, "/hooks/pre-tool-use", bash(str(project), "ls"))[1])
        assert kind == "deny" and f"{_isolated_home / 'config.toml'}: not valid TOML" in reason


@pytest.mark.parametrize("token", [None, "s3cret-token"])
@pytest.mark.subprocess
def test_hooks_check_host_and_origin_as_mcp_does(project, home, _isolated_home, token):
    _isolated_home.mkdir(parents=True)
    body = bash(str(project), "rm -rf /")
    with serving(_isolated_home, token=token) as url:
        port = url.rsplit(":", 1)[1]
        for path in ("/hooks/pre-tool-use", "/mcp"):
            # a page elsewhere reaching the server through DNS rebinding
            status, _ = send(url, path, body, headers={"Host": f"evil.example:{port}"}, token=token)
            assert status == 421, path
            # a page elsewhere posting to it from the user's browser
            origin = {"Origin": "https://evil.example"}
            assert send(url, path, body, headers=origin, token=token)[0] == 403, path
        assert send(url, "/hooks", headers={"Host": f"evil.example:{port}"}, token=token)[0] == 421
        # Claude Code (no Origin) and a loopback page are answered
        status, text = send(url, "/hooks/pre-tool-use", body, token=token)
        assert status == 200 and decision(text)[0] == "deny"
        local = {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"}
        assert send(url, "/hooks/pre-tool-use", body, headers=local, token=token)[0] == 200
        listing = json.loads(send(url, "/hooks", token=token)[1])
    assert listing["project"] == str(project.resolve())
