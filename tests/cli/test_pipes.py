"""Output for machines and pipes: nothing wrapped, stdin read only when it has something, every
export as one JSON document."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform

NOETIC = str(Path(sys.executable).with_name("noetic"))
runner = CliRunner()


def ok(*args, input=None):
    result = runner.invoke(app, list(args), input=input)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.subprocess
def test_an_open_stdin_that_never_delivers_does_not_block_preflight():
    ok("bootstrap", "--json")
    proc = subprocess.Popen(
        [NOETIC, "preflight", "a task"],
        stdin=subprocess.PIPE,  # open, and never written or closed
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = _wait_output(proc)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == 0, err
    assert "TASK: a task" in out


def _wait_output(proc):
    """Read stdout and stderr to the end while keeping stdin open."""
    import threading

    chunks = {"out": "", "err": ""}

    def pump(name, stream):
        chunks[name] = stream.read()

    threads = [threading.Thread(target=pump, args=(n, s), daemon=True)
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "preflight blocked on its open stdin"
    return chunks["out"], chunks["err"]


@pytest.mark.subprocess
def test_scores_piped_into_check_are_still_read():
    ok("bootstrap", "--json")
    ok("preflight", "a task", "--vectors", json.dumps(uniform(0.5)))
    done = subprocess.run(
        ["bash", "-c", f"echo '{json.dumps({'know': 0.9})}' | {NOETIC} check --json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assessment"]["assessment"]["vectors"]["know"] == 0.9


@pytest.mark.subprocess
def test_vectors_file_dash_reads_stdin():
    ok("bootstrap", "--json")
    result = ok("preflight", "a task", "--vectors-file", "-", "--json",
                input=json.dumps(uniform(0.8)))  # fmt: skip
    assert json.loads(result.stdout)["decision"]["confidence"] > 0.7


@pytest.mark.slow
def test_sessions_export_and_profile_export_take_json(tmp_path):
    sid = json.loads(ok("bootstrap", "--json").stdout)["session"]["id"]
    doc = json.loads(ok("sessions", "export", sid, "--json").stdout)
    assert doc["session"]["id"] == sid
    target = tmp_path / "out.json"
    written = json.loads(ok("sessions", "export", sid, "-o", str(target), "--json").stdout)
    assert written == {"session_id": sid, "path": str(target)}
    assert json.loads(target.read_text())["session"]["id"] == sid
    profile = json.loads(ok("profile", "export", "balanced", "--json").stdout)
    assert profile["name"] == "balanced" and "confidence_threshold" in profile["yaml"]
    yaml_file = tmp_path / "p.yaml"
    assert json.loads(ok("profile", "export", "balanced", str(yaml_file), "--json").stdout) == {
        "name": "balanced",
        "path": str(yaml_file),
    }
    missing = runner.invoke(app, ["sessions", "export", "s_nope", "--json"])
    assert missing.exit_code == 1 and "error" in json.loads(missing.stdout)
    unwritable = runner.invoke(
        app, ["profile", "export", "balanced", str(tmp_path / "no" / "dir" / "p.yaml"), "--json"]
    )
    assert unwritable.exit_code == 1
    assert "cannot write" in json.loads(unwritable.stdout)["error"]["message"]


@pytest.mark.subprocess
def test_text_for_an_agent_is_never_wrapped_in_a_pipe():
    ok("bootstrap", "--json")
    prompt = ok("preflight", "a task " + "with many words " * 20).stdout
    assert "TASK: a task " + "with many words " * 19 in prompt
    ok("preflight", "x", "--vectors", json.dumps(uniform(0.55)), "--abandon-open", "--json")
    goals = json.loads(ok("goals", "generate", "--json").stdout)
    shown = ok("goals", "show", str(goals[0]["id"])).stdout
    assert json.loads(shown)["description"] == goals[0]["description"]
    loaded = ok("checkpoint", "load").stdout
    checkpoints = [json.loads(line) for line in loaded.splitlines() if line.startswith("{")]
    assert checkpoints and all(c["p"] == "preflight" for c in checkpoints)  # whole, parseable
    shown = ok("checkpoint", "show", checkpoints[0]["s"]).stdout.splitlines()
    assert shown and all(len(line) > 80 for line in shown)  # one checkpoint a line, not cut
    assert json.loads(ok("checkpoint", "load", "--json").stdout)["context"].strip() in loaded


@pytest.mark.slow
def test_recall_with_qdrant_down_is_a_clear_runtime_error():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again when the block ends: nothing listens
    url = f"http://127.0.0.1:{port}"
    result = runner.invoke(app, ["recall", "a task", "--qdrant", url, "--json"])
    assert result.exit_code == 3
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "StoreError" and url in error["message"]
    assert "--qdrant ./qdrant-data" in error["fix"]
    human = runner.invoke(app, ["recall", "a task", "--qdrant", url])
    assert human.exit_code == 3 and "Traceback" not in human.stderr
    assert f"Qdrant at {url} did not answer" in human.stderr
