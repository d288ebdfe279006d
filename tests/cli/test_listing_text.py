"""What `noetic where` and `noetic agent tasks` print for a person."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..agent.test_memory import _remembering

runner = CliRunner()


@pytest.mark.slow
def test_where_names_the_agent_whose_session_it_is():
    runner.invoke(app, ["bootstrap"])
    text = runner.invoke(app, ["where"]).stdout
    assert "(the current session of agent agent)" in text and "''s" not in text
    assert "current sessions here, by agent:\n  agent: s_" in text
    other = runner.invoke(app, ["where", "--ai-id", "bob"]).stdout
    assert "session none (agent bob has no current session here: `noetic bootstrap`" in other


def test_agent_tasks_has_a_header(tmp_path):
    agent = _remembering(tmp_path, "ada")
    listed = runner.invoke(app, ["agent", "tasks", "--store", str(agent.home)])
    assert listed.exit_code == 0, listed.output
    header, row = listed.stdout.splitlines()[:2]
    assert header.split() == ["task", "status", "updated", "user", "query"]
    assert row.split()[3] == "ada" and "Remember" in row
