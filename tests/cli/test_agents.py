"""Several agents in one store: each acts on its own current session and names no session."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.store import Store

from ..conftest import uniform

AGENT = str(Path(__file__).with_name("_agent.py"))
NOETIC = str(Path(sys.executable).with_name("noetic"))
SCORES = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))
runner = CliRunner()


def ok_json(*args, env=None):
    result = runner.invoke(app, [*args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.subprocess
def test_eight_agents_interleaving_without_naming_a_session(tmp_path):
    home, barrier, rounds = tmp_path / "store", tmp_path / "barrier", 4
    barrier.mkdir()
    names = [f"agent-{i}" for i in range(8)]
    procs = {
        name: subprocess.Popen(
            [sys.executable, AGENT, str(home), str(rounds), str(barrier)],
            env={**os.environ, "NOETIC_AI_ID": name, "NOETIC_SESSION": ""},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    }
    deadline = time.monotonic() + 120
    while not all((barrier / n).exists() for n in names) and time.monotonic() < deadline:
        time.sleep(0.05)
    (barrier / "go").touch()
    logs = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        logs[name] = [json.loads(line) for line in out.splitlines()]

    for name, log in logs.items():
        refused = [entry for entry in log if entry["exit"] != 0]
        assert refused == [], refused[:3]
        boots = [e["reply"]["session"] for e in log if e["args"][0] == "bootstrap"]
        assert [s["ai_id"] for s in boots] == [name, name]
        # Every assessment went into the session this agent had bootstrapped last.
        current = None
        for entry in log:
            if entry["args"][0] == "bootstrap":
                current = entry["reply"]["session"]["id"]
            else:
                assert entry["reply"]["session_id"] == current, (name, entry["args"])

    with Store(home) as store:
        sessions = store.list_sessions(limit=100)
        assert len(sessions) == 16
        for session in sessions:
            cascades = store.cascades(session.id)
            assert len(cascades) == rounds // 2
            assert {c.status for c in cascades} == {"completed"}
            assert all(c.task.startswith(f"{session.ai_id} task ") for c in cascades)
            phases = [a.assessment.phase for a in store.assessments(session_id=session.id)]
            assert phases == ["preflight", "check", "postflight"] * (rounds // 2)
        total = store.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0]
        assert total == len(names) * rounds * 3


@pytest.mark.subprocess
def test_the_export_lines_pin_the_agent_and_session_in_a_shell(tmp_path):
    store = tmp_path / "store"
    script = (
        f'eval "$({NOETIC} bootstrap --ai-id "shell agent" --store {store} | grep ^export)"\n'
        f'{NOETIC} bootstrap --ai-id "shell agent" --store {store} --json > /dev/null\n'
        f"{NOETIC} preflight 'pinned' --vectors '{SCORES}' --store {store} --json\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOETIC_")}
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    recorded = json.loads(done.stdout)
    with Store(store) as opened:
        first, second = sorted(opened.list_sessions(), key=lambda s: s.created_at)
    # The second bootstrap moved the agent's current session, but this shell pinned the first.
    assert recorded["session_id"] == first.id != second.id
    assert first.ai_id == "shell agent"


@pytest.mark.slow
def test_session_overrides_the_agent_and_agents_do_not_see_each_other(monkeypatch):
    a = ok_json("bootstrap", "--ai-id", "a")["session"]["id"]
    b = ok_json("bootstrap", "--ai-id", "b")["session"]["id"]
    assert ok_json("state", "--ai-id", "a")["session"]["id"] == a
    assert ok_json("state", env={"NOETIC_AI_ID": "b"})["session"]["id"] == b
    assert ok_json("state", "--ai-id", "a", env={"NOETIC_SESSION": b})["session"]["id"] == b
    assert (
        ok_json("state", "--ai-id", "a", "--session", a, env={"NOETIC_SESSION": b})["session"]["id"]
        == a
    )
    nobody = runner.invoke(app, ["state", "--json"])
    assert nobody.exit_code == 1
    error = json.loads(nobody.stdout)["error"]
    assert "agent 'agent' has no current session" in error["message"]
    assert "a, b" in error["fix"]
    empty = runner.invoke(app, ["state", "--ai-id", " ", "--json"])
    assert empty.exit_code == 1 and "agent id is empty" in empty.stdout


@pytest.mark.subprocess
def test_every_writing_command_says_which_session_it_used():
    sid = ok_json("bootstrap")["session"]["id"]
    for args in (
        ["preflight", "t", "--vectors", json.dumps(uniform(0.5, engagement=0.9))],
        ["investigate", "--note", "looked"],
        ["check", "--vectors", '{"know": 0.9}'],
        ["goals", "generate"],
        ["postflight", "--vectors", SCORES],
        ["outcome", "--success"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert sid in result.stdout, args


def test_where_says_which_store_and_session_and_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("NOETIC_HOME")
    monkeypatch.chdir(tmp_path)
    before = ok_json("where")
    assert before["exists"] is False and before["rule"] == "cwd"
    assert before["session_id"] is None
    assert not (tmp_path / ".noetic").exists()
    sid = ok_json("bootstrap", "--ai-id", "w")["session"]["id"]
    after = ok_json("where", "--ai-id", "w")
    assert after["exists"] is True and after["home"] == str(tmp_path / ".noetic")
    assert after["session_id"] == sid and after["agents"] == {"w": sid}
    human = runner.invoke(app, ["where", "--ai-id", "w"])
    assert "not inside a git repository" in human.stdout and sid in human.stdout
