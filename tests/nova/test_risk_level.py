"""The seed's risk level: asked of every persona, parsed, stored with the run, and shown by the
CLI, the decision log and the dashboard's run page."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.cli import app
from noetic.nova.turns import SHAPES, ExpertBlock, Risk, highest_risk

from ..conftest import serving, uniform
from ..llm.model_server import reply, running
from .panel import said

runner = CliRunner()

LEVELS = list(Risk)


def turn_reply(risk: str) -> str:
    return said(
        "Analysis.",
        know=0.8,
        uncertainty=0.2,
        experts=[{"name": "security", "reason": "tokens"}],
        proposal="OAuth2 with PKCE",
        severity="none",
        recommendation="OAuth2 with PKCE",
        confidence=0.88,
        vectors=uniform(0.8),
        risk_level=risk,
    )


def test_every_persona_is_asked_for_a_risk_level() -> None:
    assert all('"risk_level": "LOW | MEDIUM | HIGH | CRITICAL"' in s for s in SHAPES.values())


@given(st.sampled_from(LEVELS), st.sampled_from([str.lower, str.upper, str.title]))
def test_a_risk_level_is_read_in_any_case(level, case) -> None:
    block = ExpertBlock(know=0.5, uncertainty=0.5, risk_level=f" {case(level.value)} ")
    assert block.risk_level is level


@given(st.one_of(st.text(max_size=20), st.integers(), st.none()))
def test_anything_else_is_unstated_and_never_fails_the_turn(value) -> None:
    if isinstance(value, str) and value.strip().upper() in Risk.__members__:
        return
    assert ExpertBlock(know=0.5, uncertainty=0.5, risk_level=value).risk_level is None


@given(st.lists(st.one_of(st.none(), st.sampled_from(LEVELS))))
def test_the_runs_level_is_the_highest_stated(levels) -> None:
    stated = [level for level in levels if level is not None]
    expected = LEVELS[max(LEVELS.index(level) for level in stated)] if stated else None
    assert highest_risk(levels) is expected


@pytest.mark.subprocess
def test_the_risk_level_is_stored_and_shown_by_the_cli_the_log_and_the_dashboard(tmp_path):
    with running() as server:
        server.default = reply(turn_reply("high"))
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["nova", "Should we use OAuth2?", "--provider", spec, "--json"])
        human = runner.invoke(app, ["nova", "Should we use OAuth2 now?", "--provider", spec])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["risk_level"] == "HIGH"
    assert set(data["risks"].values()) == {"HIGH"} and "cae" in data["risks"]
    assert all(t["block"]["risk_level"] == "HIGH" for t in data["turns"])
    log = Path(data["decision_log"]).read_text()
    assert "- risk level: **HIGH** (" in log and "· risk HIGH ·" in log
    assert human.exit_code == 0, human.output
    assert "risk level HIGH" in human.stdout and "· risk HIGH" in human.stderr

    shown = runner.invoke(app, ["nova", "show", data["id"], "--json"])
    assert json.loads(shown.stdout)["risk_level"] == "HIGH"  # read back from the store
    home = Path(data["decision_log"]).parent.parent
    with serving(home) as url:
        page = httpx.get(f"{url}/runs/{data['id']}").text
    assert "risk level <strong>HIGH</strong>" in page
