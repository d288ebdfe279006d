"""`noetic eval` on the command line: one JSON object per problem and a summary, the exit
codes of the one table, clear errors, a run killed with SIGKILL resumed with each problem run
once, and Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.store import Store, evals

from ..llm.model_server import error
from .conftest import spec
from .standin import StandIn
from .test_run import right_unless_three

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.subprocess


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_json_gives_one_object_per_problem_then_the_summary(model_server, problems):
    model_server.responder = StandIn(problems, right_unless_three)
    result = CliRunner().invoke(app, ["eval", "humaneval", "--provider", spec(model_server),
                                      "--tasks-matching", "HumanEval/6?", "--limit", "4",
                                      "--concurrency", "2", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    out = lines(result.stdout)
    assert [o["kind"] for o in out] == ["task"] * 4 + ["summary"]
    tasks, summary = out[:4], out[4]
    assert sorted(t["task_id"] for t in tasks) == [f"HumanEval/6{i}" for i in range(4)]
    assert all(t["passed"] is (t["task_id"] not in ("HumanEval/60", "HumanEval/63")) for t in tasks)
    assert (summary["done"], summary["passed"], summary["status"]) == (4, 2, "completed")
    report = CliRunner().invoke(app, ["eval", "report", summary["run_id"], "--json"])
    assert report.exit_code == 0
    timing = json.loads(report.stdout)["timing"]
    assert json.loads(report.stdout)["by_phase"]["preflight"]["n"] == 4
    # the time Noetic added to a problem is part of its own time, and said with it
    assert all(t["ms_added"] is not None and 0 <= t["ms_added"] <= t["ms_other"] for t in tasks)
    assert timing["added_ms"] == pytest.approx(sum(t["ms_added"] for t in tasks) / 4, abs=1e-3)
    shown = CliRunner().invoke(app, ["eval", "report", summary["run_id"]])
    assert "preflight" in shown.stdout and "0.80" in shown.stdout
    said = " ".join(shown.stdout.split())  # however the terminal wrapped it
    assert re.search(r"ms the rest \(\d+ ms of it not behind the tests\)", said)
    listed = CliRunner().invoke(app, ["eval", "list", "--json"])
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [summary["run_id"]]


def test_test_memory_sets_the_limit_the_tests_run_under(model_server, problems):
    model_server.responder = StandIn(problems, lambda p: "hungry")
    result = CliRunner().invoke(app, ["eval", "humaneval", "--provider", spec(model_server),
                                      "--tasks-matching", "HumanEval/7", "--limit", "1",
                                      "--test-memory", "128",
                                      "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    task, summary = lines(result.stdout)
    assert task["passed"] is False and task["reason"].startswith(
        "stopped at the memory limit (128 MiB): the tests ran out of memory"
    )
    assert summary["failed"] == 1
    refused = CliRunner().invoke(app, ["eval", "humaneval", "--test-memory", "8"])
    assert refused.exit_code == 2 and "--test-memory" in refused.output


def test_compare_sets_two_runs_side_by_side(model_server, problems):
    standin = StandIn(problems, right_unless_three)
    model_server.responder = standin
    ids = []
    for review in ("standard", "adversarial"):
        result = CliRunner().invoke(app, ["eval", "humaneval", "--provider", spec(model_server),
                                          "--tasks-matching", "HumanEval/7?", "--review", review,
                                          "--json"])  # fmt: skip
        ids.append(lines(result.stdout)[-1]["run_id"])
    compared = CliRunner().invoke(app, ["eval", "compare", *ids, "--json"])
    assert compared.exit_code == 0, compared.output
    data = json.loads(compared.stdout)
    post = {d["phase"]: d for d in data["differences"]}
    # the same outcomes, stated 0.7 then 0.5: the first's gap is 0.2 larger
    assert post["postflight"]["gap_difference"]["value"] is None  # the second has no standard
    assert data["first"]["by_phase"]["postflight"]["mean_stated"] == pytest.approx(0.7)
    assert data["second"]["by_phase"]["adversarial_review"]["mean_stated"] == pytest.approx(0.5)
    assert post["preflight"]["gap_difference"]["value"] == pytest.approx(0.0)
    text = CliRunner().invoke(app, ["eval", "compare", *ids])
    assert "adversarial_review" in text.stdout


def test_a_malformed_task_file_exits_1_naming_the_line(tmp_path):
    bad = tmp_path / "mine.jsonl"
    bad.write_text('{"task_id": "a", "prompt": "p", "test": "t", "entry_point": "f"}\n{oops\n')
    provider = "openai-compatible:http://127.0.0.1:9/v1#m"
    result = CliRunner().invoke(
        app, ["eval", "run", "--tasks", str(bad), "--provider", provider, "--json"]
    )
    assert result.exit_code == 1
    assert "mine.jsonl line 2: not JSON" in json.loads(result.stdout)["error"]["message"]
    with Store(Path(os.environ["NOETIC_HOME"])) as store:
        assert evals.runs(store) == []  # nothing recorded before the input was checked


def test_a_provider_that_keeps_failing_exits_3_and_keeps_what_finished(model_server, problems):
    standin = StandIn(problems, right_unless_three)

    def failing_after_two(body):
        behaviour = standin(body)
        codes = sum(1 for _, what in standin.asked if what == "code")
        return error(401, text="invalid api key") if codes > 2 else behaviour

    model_server.responder = failing_after_two
    result = CliRunner().invoke(app, ["eval", "humaneval", "--provider", spec(model_server),
                                      "--tasks-matching", "HumanEval/8?", "--concurrency", "1",
                                      "--json"])  # fmt: skip
    assert result.exit_code == 3
    summary = lines(result.stdout)[-1]
    assert (summary["status"], summary["done"], summary["pending"]) == ("failed", 2, 8)
    assert "invalid api key" in summary["detail"] and "noetic eval resume" in summary["detail"]


def _child(home: str, provider: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "noetic", "eval", "humaneval", "--provider", provider,
         "--tasks-matching", "HumanEval/9?", "--concurrency", "2", "--json", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "NOETIC_HOME": home},
    )  # fmt: skip


def _wait_for_tasks(child: subprocess.Popen[str], n: int) -> list[dict]:
    seen = []
    assert child.stdout is not None
    while len(seen) < n:
        line = child.stdout.readline()
        assert line, child.stderr.read() if child.stderr else "the run ended early"
        seen.append(json.loads(line))
    return seen


@pytest.mark.parametrize("concurrency", ["2", "1"])  # 1: the map refitted on a thread
def test_a_killed_run_resumes_and_runs_each_problem_once(model_server, problems, concurrency):
    home = os.environ["NOETIC_HOME"]
    standin = StandIn(problems, right_unless_three)
    standin.delay = 0.3
    model_server.responder = standin
    child = _child(home, spec(model_server), "--concurrency", concurrency)
    try:
        before = _wait_for_tasks(child, 3)
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    with Store(Path(home)) as store:
        (run,) = evals.runs(store)
        assert run.status == "running"  # killed: it never said otherwise
        assert run.settings["engine"]["concurrency"] == int(concurrency)
        states = {t.task_id: t.state for t in evals.tasks(store, run.id)}
    finished = {t["task_id"] for t in before}
    assert finished <= {k for k, v in states.items() if v == "done"}
    asked_before = len(standin.asked)
    standin.delay = 0.0
    resumed = CliRunner().invoke(app, ["eval", "resume", run.id[:6], "--json"])
    assert resumed.exit_code == 0, resumed.output
    out = lines(resumed.stdout)
    assert out[-1]["status"] == "completed" and out[-1]["done"] == 10
    assert sorted(o["task_id"] for o in out[:-1]) == [f"HumanEval/9{i}" for i in range(10)]
    after = standin.asked[asked_before:]
    done_at_kill = {k for k, v in states.items() if v == "done"}
    assert not done_at_kill & {t for t, _ in after}  # nothing judged before is asked again
    answered = {k for k, v in states.items() if v == "answered"}
    assert not answered & {t for t, what in after if what == "code"}  # its tests run, only
    with Store(Path(home)) as store:
        tasks = evals.tasks(store, run.id)
        for t in tasks:
            scores = store.conn.execute(
                "SELECT o.score FROM outcomes o JOIN eval_tasks e ON e.cascade_id = o.cascade_id "
                "WHERE e.run_id = ? AND e.task_id = ?", (run.id, t.task_id),
            ).fetchall()  # fmt: skip
            assert [s[0] for s in scores] == [float(t.passed)], t.task_id  # judged once
        statuses = [store.get_cascade(c).status for c in _cascades(store, run.id)]
        started = sum(1 for v in states.values() if v == "started")
        assert statuses.count("abandoned") == started  # a half-done task closed, not judged
        assert statuses.count("completed") == 10


def _cascades(store, run_id: str) -> list[str]:
    sessions = {t.session_id for t in evals.tasks(store, run_id)}
    return [c.id for s in sessions if s for c in store.cascades(s)]


@pytest.mark.parametrize("concurrency", ["2", "1"])  # 1: the map refitted on a thread
def test_ctrl_c_stops_the_run_with_130_and_a_resume_goes_on(model_server, problems, concurrency):
    home = os.environ["NOETIC_HOME"]
    standin = StandIn(problems, right_unless_three)
    standin.delay = 0.3
    model_server.responder = standin
    child = _child(home, spec(model_server), "--concurrency", concurrency)
    try:
        _wait_for_tasks(child, 2)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130
    last = json.loads(out.splitlines()[-1])
    assert (
        last["kind"] == "interrupted" and f"noetic eval resume {last['run_id']}" in last["detail"]
    )
    with Store(Path(home)) as store:
        assert evals.get_run(store, last["run_id"]).status == "interrupted"
    standin.delay = 0.0
    resumed = CliRunner().invoke(app, ["eval", "resume", last["run_id"], "--json"])
    assert resumed.exit_code == 0 and lines(resumed.stdout)[-1]["done"] == 10


def test_a_run_going_on_in_another_process_is_not_resumed_beside_it(model_server, problems):
    home = os.environ["NOETIC_HOME"]
    standin = StandIn(problems, right_unless_three)
    standin.delay = 0.5
    model_server.responder = standin
    child = _child(home, spec(model_server))
    try:
        (first,) = _wait_for_tasks(child, 1)
        refused = CliRunner().invoke(app, ["eval", "resume", first["run_id"], "--json"])
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    assert refused.exit_code == 1
    error = json.loads(refused.stdout)["error"]
    assert error["message"] == f"eval run {first['run_id']} is running in process {child.pid} " \
        "on this machine"  # fmt: skip
    standin.delay = 0.0
    resumed = CliRunner().invoke(app, ["eval", "resume", first["run_id"], "--json"])
    assert resumed.exit_code == 0 and lines(resumed.stdout)[-1]["done"] == 10  # once it is gone
