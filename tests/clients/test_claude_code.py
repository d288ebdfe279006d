"""The real Claude Code, headless (`claude -p`), against a loopback stand-in for the model API:
after `noetic setup claude-code`, the SessionStart hook's context reaches the model request and
`claude mcp list` reports Noetic's server connected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
