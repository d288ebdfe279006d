"""The real Claude Code, headless (`claude -p`), against a loopback stand-in for the model API:
after `noetic setup claude-code`, the SessionStart hook's context reaches the model request,
`claude mcp list` reports Noetic's server connected, a command the shell gate refuses is denied
(it never runs, and the reason reaches the model's next request), a pytest run records the open
task's outcome, and http hooks served by `noetic serve` answer SessionStart."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from noetic.store import Store
from noetic.store.current import read_current_session

from .anthropic_stub import running

CLAUDE = Path(os.environ.get("NOETIC_CLIENTS", "")) / "node_modules" / ".bin" / "claude"


@pytest.fixture
def env(tmp_path: Path, _isolated_home: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "NOETIC_HOME": str(_isolated_home),
        "ANTHROPIC_API_KEY": "sk-loopback",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    done = subprocess.run(
        ["noetic", "setup", "claude-code", "--json"], env=env, cwd=path, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return path


def test_the_session_start_context_reaches_the_model(project, env, _isolated_home):
    with running("Hello from the stub.") as stub:
        done = subprocess.run(
            [str(CLAUDE), "-p", "say hi", "--output-format", "json"],
            env={**env, "ANTHROPIC_BASE_URL": stub.url},
            cwd=project, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        result = json.loads(done.stdout)
        assert result["result"] == "Hello from the stub."
        claude_session = result["session_id"]
        sid = read_current_session(_isolated_home, f"claude-code:{claude_session}")
        assert sid is not None
        sent = [json.dumps(r) for r in stub.requests]
        assert any(f'session_id=\\"{sid}\\"' in body for body in sent)
    with Store(_isolated_home) as store:
        session = store.get_session(sid)
    assert session.ai_id == "claude-code" and session.project == "project"
    assert session.status == "ended"  # the SessionEnd hook ran when `claude -p` finished


def test_claude_mcp_list_reports_the_server_connected(project, env):
    # Claude Code asks before it starts a project's servers; this is the answer it records.
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledMcpjsonServers": ["noetic"]})
    )
    done = subprocess.run(
        [str(CLAUDE), "mcp", "list"], env=env, cwd=project, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("noetic:")]
    assert "Connected" in line, done.stdout


def bash_call(command: str, call_id: str) -> dict:
    return {"id": call_id, "name": "Bash", "input": {"command": command, "description": "run it"}}


def tool_results(stub, call_id: str) -> list[dict]:
    """The tool_result blocks Claude Code sent back to the model for ``call_id``."""
    return [
        block
        for request in stub.requests
        for message in request.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and block.get("tool_use_id") == call_id
    ]


def claude(prompt: str, env: dict[str, str], cwd: Path, *extra: str):
    return subprocess.run(
        [str(CLAUDE), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash", *extra],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_refused_command_is_denied_and_the_reason_reaches_the_model(project, env, tmp_path):
    outside = tmp_path / "outside" / "written-by-the-agent"
    outside.parent.mkdir()
    call = bash_call(f"echo pwned > {outside}", "toolu_gate_1")
    with running("I could not do that.", [call]) as stub:
        done = claude("write the file", {**env, "ANTHROPIC_BASE_URL": stub.url}, project)
        assert done.returncode == 0, done.stdout + done.stderr
        result = tool_results(stub, "toolu_gate_1")[-1]
    assert not outside.exists()  # the command never ran
    text = json.dumps(result)
    assert "Noetic's shell gate refused this command" in text
    assert "write-outside-workspace" in text and str(outside) in text


def test_a_pytest_run_records_the_open_tasks_outcome(project, env, _isolated_home):
    from noetic.assessment import Assessment
    from noetic.calibration import list_outcomes
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.vectors import VECTOR_NAMES

    (project / "tests").mkdir()
    (project / "tests" / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    done = subprocess.run(
        ["noetic", "setup", "claude-code", "--json"], env=env, cwd=project, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert json.loads(done.stdout)["test_commands"]["configured"] == ["pytest"]
    claude_session = str(uuid.uuid4())
    start = json.dumps({"session_id": claude_session, "cwd": str(project), "source": "startup"})
    subprocess.run(["noetic", "hook", "session-start"], input=start, env=env, cwd=project,
                   capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    sid = read_current_session(_isolated_home, f"claude-code:{claude_session}")
    assert sid is not None
    with Store(_isolated_home) as store:
        tracker = Tracker(store, ProfileRegistry(_isolated_home / "profiles"))
        vectors = {v: 0.7 for v in VECTOR_NAMES}
        task = tracker.preflight(
            sid, "make the tests pass", Assessment.from_input("preflight", vectors)
        ).cascade.id
    command = "pytest -q -p no:cacheprovider tests"
    with running("The tests pass.", [bash_call(command, "toolu_pytest_1")]) as stub:
        done = claude(
            "run the tests", {**env, "ANTHROPIC_BASE_URL": stub.url}, project,
            "--session-id", claude_session,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        result = tool_results(stub, "toolu_pytest_1")[-1]
    assert "1 passed" in json.dumps(result)
    with Store(_isolated_home) as store:
        rows = list_outcomes(store)
    assert [(r.cascade_id, r.score, r.source) for r in rows] == [(task, 1.0, "test")]
    assert rows[0].evidence == f"`{command}` exited 0 (Claude Code Bash)"


def test_http_hooks_answer_beside_the_session_start_command(project, env, _isolated_home, tmp_path):
    """Claude Code runs no http hook for SessionStart (it skips one, saying so in its debug
    log), so `--hooks http` keeps that one a command; the others post to `noetic serve`."""
    server = subprocess.Popen(
        ["noetic", "serve", "--port", "0"], env=env, cwd=project, stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            found = re.search(r"(http://127\.0\.0\.1:\d+)/mcp", server.stderr.readline())
            url = found.group(1) if found else None
        assert url is not None, "noetic serve did not start"
        done = subprocess.run(
            ["noetic", "setup", "claude-code", "--hooks", "http", "--url", url, "--json"],
            env=env, cwd=project, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        [hook] = settings["hooks"]["PreToolUse"][0]["hooks"]
        assert hook == {"type": "http", "url": f"{url}/hooks/pre-tool-use", "timeout": 30}
        outside = tmp_path / "outside" / "written-over-http"
        outside.parent.mkdir()
        call = bash_call(f"echo pwned > {outside}", "toolu_http_1")
        with running("Refused, as it should be.", [call]) as stub:
            done = claude("write the file", {**env, "ANTHROPIC_BASE_URL": stub.url}, project)
            assert done.returncode == 0, done.stdout + done.stderr
            claude_session = json.loads(done.stdout)["session_id"]
            result = tool_results(stub, "toolu_http_1")[-1]
            sid = read_current_session(_isolated_home, f"claude-code:{claude_session}")
            assert sid is not None
            sent = [json.dumps(r) for r in stub.requests]
            assert any(f'session_id=\\"{sid}\\"' in body for body in sent)
        assert not outside.exists()
        assert "write-outside-workspace" in json.dumps(result)  # PreToolUse, answered over http
        with Store(_isolated_home) as store:
            assert store.get_session(sid).status == "ended"  # SessionEnd, over http
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()


def test_the_agents_record_reaches_the_model_once_it_has_outcomes(project, env, _isolated_home):
    """Claude Code's earlier tasks in this store stated P(success) 0.8 and 14 of 40 succeeded:
    the SessionStart context the model receives carries that record, calibrated."""
    from noetic.assessment import Assessment
    from noetic.calibration import record_outcome
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    from ..conftest import uniform

    with Store(_isolated_home) as store:
        tracker = Tracker(store, ProfileRegistry(_isolated_home / "profiles"))
        session, _ = tracker.bootstrap(ai_id="claude-code")
        sure = {"vectors": uniform(0.95), "p_success": 0.8}
        for i in range(40):
            r = tracker.preflight(session.id, f"task {i}", Assessment.from_input("preflight", sure))
            tracker.postflight(session.id, Assessment.from_input("postflight", sure))
            ok = int((i + 1) * 14 / 40) > int(i * 14 / 40)
            record_outcome(store, r.cascade.id, score=float(ok), source="test")
    with running("Noted.") as stub:
        done = subprocess.run(
            [str(CLAUDE), "-p", "say hi", "--output-format", "json"],
            env={**env, "ANTHROPIC_BASE_URL": stub.url},
            cwd=project, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        sent = " ".join(json.dumps(r) for r in stub.requests)
    assert "your last 40 PREFLIGHT statements averaged 0.80" in sent
    assert "35% of those tasks succeeded" in sent
    assert "calibrated, your 0.80 has meant 0.3" in sent
