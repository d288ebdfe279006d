"""The seed's LLM goal mode beside threshold mode: `noetic goals generate --provider P` and the
MCP `generate_goals(mode="llm")` ask a model over HTTP; plain code keeps what it returns."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform
from ..llm.model_server import running, structured

runner = CliRunner()

PROPOSED = {
    "goals": [
        {"description": "Find where the billing totals are rounded", "target_vector": "know",
         "priority": 0.9},
        {"description": "Run the billing tests once", "target_vector": "not-a-vector",
         "priority": 0.4},
        {"description": "find where the billing totals are rounded ", "priority": 0.2},
    ]
}  # fmt: skip


def _ok(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _session() -> str:
    sid = _ok("bootstrap", "--ai-id", "ada")["session"]["id"]
    _ok("preflight", "fix the rounding in billing totals", "--ai-id", "ada",
        "--vectors", json.dumps(uniform(0.8, know=0.3)))  # fmt: skip
    return sid


@pytest.mark.subprocess
def test_goals_generate_with_a_provider_asks_the_model_and_keeps_its_goals() -> None:
    sid = _session()
    with running() as server:
        server.enqueue(structured(PROPOSED), structured(PROPOSED))
        spec = f"openai-compatible:{server.url}/v1#m"
        created = _ok("goals", "generate", "--provider", spec, "--ai-id", "ada")
        again = _ok("goals", "generate", "--mode", "llm", "--provider", spec, "--ai-id", "ada")
        asked = server.requests[0]["messages"][-1]["content"]
    assert [(g["description"], g["source"], g["target_vector"]) for g in created] == [
        ("Find where the billing totals are rounded", "llm", "know"),
        ("Run the billing tests once", "llm", None),  # an unknown vector is not kept
    ]  # the same goal twice is kept once
    assert created[0]["priority"] == 0.9
    assert again == []  # both are open already
    assert "fix the rounding in billing totals" in asked and "know 0.30" in asked
    assert "Goals already open: none" in asked
    second = server.requests[1]["messages"][-1]["content"]
    assert "Find where the billing totals are rounded" in second
    listed = _ok("goals", "list", "--ai-id", "ada")
    assert len(listed) == 2 and {g["session_id"] for g in listed} == {sid}


@pytest.mark.slow
def test_threshold_mode_stays_the_default_and_takes_no_model() -> None:
    _session()
    created = _ok("goals", "generate", "--ai-id", "ada")
    assert [g["source"] for g in created] == ["threshold"]
    mixed = runner.invoke(
        app, ["goals", "generate", "--mode", "threshold", "--provider", "ollama:m", "--json"]
    )
    assert mixed.exit_code == 1 and "threshold mode asks no model" in mixed.stdout
    unknown = runner.invoke(app, ["goals", "generate", "--mode", "dream", "--json"])
    assert unknown.exit_code == 1 and "unknown goal mode" in unknown.stdout


@pytest.mark.subprocess
def test_the_mcp_tool_offers_the_llm_mode(_isolated_home) -> None:
    from noetic.mcp.state import ServerState
    from noetic.mcp.tools import generate_goals

    sid = _session()
    state = ServerState(_isolated_home, embed_at_start=False)
    with running() as server:
        server.enqueue(structured(PROPOSED))
        spec = f"openai-compatible:{server.url}/v1#m"
        result = asyncio.run(generate_goals(state, sid, mode="llm", provider=spec))
    assert [g.source for g in result.goals] == ["llm", "llm"]
    threshold = asyncio.run(generate_goals(state, sid))  # the gap in know has a goal already
    assert [g.source for g in threshold.goals] == ["llm", "llm"]
