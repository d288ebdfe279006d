"""`evaluate` through a real MCP client, and the eval reports through execute_cli_command."""

from __future__ import annotations

import pytest

from ..mcp._client import call, err, ok
from .conftest import spec
from .standin import StandIn
from .test_run import right_unless_three

pytestmark = pytest.mark.subprocess


@pytest.fixture
def server(_isolated_home, monkeypatch):
    from noetic.mcp.server import build_server

    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    return build_server(_isolated_home)


def test_evaluate_runs_then_the_report_is_read_and_a_resume_of_a_finished_run_is_its_result(
    server, model_server, problems
):
    model_server.responder = StandIn(problems, right_unless_three)
    (ran,) = call(server, ("evaluate", {"provider": spec(model_server), "limit": 4}))
    body = ok(ran)
    assert (body["status"], body["done"], body["passed"]) == ("completed", 4, 2)
    assert [t["task_id"] for t in body["tasks"]] == [f"HumanEval/{i}" for i in range(4)]
    run_id = body["run_id"]
    report, again = call(
        server,
        ("execute_cli_command", {"command": f"eval report {run_id}"}),
        ("evaluate", {"run_id": run_id}),
    )
    data = ok(report)["data"]
    assert data["by_phase"]["preflight"]["n"] == 4
    assert data["by_phase"]["preflight"]["success_rate"]["value"] == 0.5
    assert ok(again)["run_id"] == run_id and len(model_server.requests) == 12  # nothing re-run


def test_evaluate_refuses_a_bad_task_file_naming_it(server, tmp_path):
    provider = "openai-compatible:http://127.0.0.1:9#m"
    args = {"tasks": str(tmp_path / "absent.jsonl"), "provider": provider}
    (result,) = call(server, ("evaluate", args))
    assert "no task file" in err(result)
