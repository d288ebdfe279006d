"""The seed's records: a session's totals (tasks, turns, average confidence, drift detected) in
`sessions list/show`, the export and the dashboard; the session type kept and shown;
`converged` in `observe --json`; `noetic observe` without a model says what it needs."""

from __future__ import annotations

import json
import statistics
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.cli.exits import EXIT_USER_ERROR

from ..conftest import serving, uniform
from ..llm.model_server import reply, running
from .test_drift_gate import _tasks

runner = CliRunner()


def _ok(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _one_task_session() -> str:
    boot = _ok("bootstrap", "--ai-id", "ada", "--session-type", "review")
    _ok("preflight", "review the billing module", "--vectors", json.dumps(uniform(0.6)),
        "--ai-id", "ada")  # fmt: skip
    _ok("check", "--vectors", json.dumps(uniform(0.7)), "--ai-id", "ada")
    _ok("postflight", "--vectors", json.dumps(uniform(0.85)), "--ai-id", "ada")
    return boot["session"]["id"]


@pytest.mark.slow
def test_a_sessions_totals_and_type_in_list_show_and_export(_isolated_home) -> None:
    sid = _one_task_session()
    shown = _ok("sessions", "show", sid)
    assert shown["session"]["session_type"] == "review"
    confidences = [a["decision"]["confidence"] for a in shown["assessments"]]
    assert shown["totals"] == {
        "tasks": 1,
        "turns": 3,
        "average_confidence": round(statistics.fmean(confidences), 4),
        "drift_detected": False,
    }
    (listed,) = _ok("sessions", "list")
    assert listed["totals"] == shown["totals"] and listed["session_type"] == "review"
    exported = json.loads(runner.invoke(app, ["sessions", "export", sid]).stdout)
    assert exported["totals"] == shown["totals"]

    human = runner.invoke(app, ["sessions", "show", sid])
    assert "type review" in human.stdout
    assert "tasks 1 · turns 3 · average confidence" in human.stdout
    assert "drift detected: no" in human.stdout
    table = runner.invoke(app, ["sessions", "list"]).stdout
    assert "review" in table and "turns" in table and "drift" in table

    boot = runner.invoke(app, ["bootstrap", "--ai-id", "bo", "--session-type", "development"])
    assert "type development" in boot.stdout

    with serving(_isolated_home) as url:
        page = httpx.get(f"{url}/sessions/{sid}").text
    assert "<dt>Type</dt><dd>review</dd>" in page
    assert "1 task, 3 turns, average confidence" in page and "drift detected: no" in page


@pytest.mark.slow
@pytest.mark.subprocess
def test_drift_detected_marks_the_session_whose_task_raised_the_alarm(_isolated_home) -> None:
    _tasks(_isolated_home, 40, bias=0.0, seed=1)
    _tasks(_isolated_home, 40, bias=0.45, seed=2)
    report = _ok("calibration", "drift", "--ai-id", "sim", "--window", "40")
    assert report["alarms"], "the simulation no longer drifts: the test proves nothing"
    steady, drifted = sorted(_ok("sessions", "list"), key=lambda s: s["created_at"])
    assert steady["totals"]["drift_detected"] is False
    assert drifted["totals"]["drift_detected"] is True
    assert drifted["totals"]["tasks"] == 40 and drifted["totals"]["turns"] == 80


@pytest.mark.subprocess
def test_the_mcp_bootstrap_keeps_the_session_type(_isolated_home) -> None:
    import asyncio

    from noetic.mcp.state import ServerState
    from noetic.mcp.tools import bootstrap_session

    state = ServerState(_isolated_home, embed_at_start=False)
    boot = asyncio.run(bootstrap_session(state, ai_id="seed", session_type="development"))
    assert boot.session.session_type == "development"
    shown = _ok("sessions", "show", boot.session.id)
    assert shown["session"]["session_type"] == "development"


@pytest.mark.slow
def test_observe_json_says_whether_the_chain_converged() -> None:
    with running() as server:
        server.enqueue(
            reply("CONFIDENCE: 0.6\nLAYERS: C01,C02\nCONTENT: exploring"),
            reply("CONFIDENCE: 0.97\nLAYERS: C02\nCONTENT: the answer"),
        )
        spec = f"openai-compatible:{server.url}/v1#m"
        early = _ok("observe", "why is the sky blue?", "--provider", spec, "--no-cache")
        server.enqueue(*(  # no check fires: confidence and layers move at every stage
            reply(f"CONFIDENCE: {c}\nLAYERS: {layers}\nCONTENT: unsure")
            for c, layers in [(0.3, "C01,C02,C03"), (0.6, "C04,C05,C06"), (0.35, "C07,C08,C09"),
                              (0.7, "C10,C11,C12")]
        ))  # fmt: skip
        late = _ok("observe", "what is dark matter made of?", "--provider", spec, "--no-cache")
    assert (early["converged"], early["reason"]) == (True, "HighConfidence")
    assert (late["converged"], late["reason"]) == (False, "MaxStagesReached")


def test_observe_without_a_model_says_what_it_needs(monkeypatch) -> None:
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    result = runner.invoke(app, ["observe", "why is the sky blue?"])
    assert result.exit_code == EXIT_USER_ERROR
    assert "noetic observe needs a model" in result.stderr and "up to 4 stages" in result.stderr
    assert "--provider" in result.stderr


@pytest.mark.postgres
def test_totals_and_the_session_type_on_postgresql(postgres_url, monkeypatch) -> None:
    monkeypatch.setenv("NOETIC_STORE_URL", postgres_url)
    sid = _one_task_session()
    shown = _ok("sessions", "show", sid)
    assert shown["session"]["session_type"] == "review"
    assert (shown["totals"]["tasks"], shown["totals"]["turns"]) == (1, 3)
    assert shown["totals"]["average_confidence"] is not None
    (listed,) = _ok("sessions", "list")
    assert listed["totals"] == shown["totals"] and listed["session_type"] == "review"
