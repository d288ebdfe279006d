"""Recall means one thing: `noetic recall` and `bootstrap --recall` search every agent's tasks in
the project, `--own` narrows both to the caller's, and every message names what was searched."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform

runner = CliRunner()


def _ok(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def claudes_task() -> None:
    """Agent claude finished a task in project web."""
    _ok("bootstrap", "--ai-id", "claude", "--project", "web")
    env = ("--ai-id", "claude")
    _ok("preflight", "add a login page with a password form", "--vectors",
        json.dumps(uniform(0.5)), *env)  # fmt: skip
    _ok("postflight", "--vectors", json.dumps(uniform(0.8)), *env)


@pytest.mark.slow
def test_bootstrap_recall_finds_another_agents_task_in_the_project(claudes_task) -> None:
    found = _ok("bootstrap", "--ai-id", "gpt", "--project", "web", "--recall", "the login form")
    assert found["recall"]["scope"] == "project web, every agent's tasks"
    assert found["recall"]["considered"] == 1
    assert not any("cold start" in w for w in found["recall"]["warnings"])

    own = _ok("bootstrap", "--ai-id", "gpt", "--project", "web", "--recall", "the login form",
              "--own")  # fmt: skip
    assert own["recall"]["scope"] == "project web, agent 'gpt''s tasks only"
    (cold,) = own["recall"]["warnings"]
    assert cold.startswith("cold start: no finished tasks in project web, agent 'gpt''s tasks")
    assert "without --own every agent's tasks are searched" in cold


@pytest.mark.slow
def test_noetic_recall_has_the_same_rule_and_the_same_option(claudes_task) -> None:
    _ok("bootstrap", "--ai-id", "gpt", "--project", "web")
    found = _ok("recall", "the login form", "--ai-id", "gpt")
    assert found["scope"] == "project web, every agent's tasks" and found["considered"] == 1
    own = _ok("recall", "the login form", "--ai-id", "gpt", "--own")
    assert own["scope"] == "project web, agent 'gpt''s tasks only" and own["considered"] == 0
    mine = _ok("recall", "the login form", "--ai-id", "claude", "--own", "--project", "web")
    assert mine["considered"] == 1


@pytest.mark.slow
def test_the_human_output_names_the_scope_searched(claudes_task) -> None:
    shown = runner.invoke(
        app, ["bootstrap", "--ai-id", "gpt", "--project", "web", "--recall", "login", "--own"]
    )
    assert shown.exit_code == 0, shown.output
    assert "recall searched project web, agent 'gpt''s tasks only" in shown.stdout
    plain = runner.invoke(app, ["recall", "login", "--ai-id", "gpt"])
    assert "project web, every agent's tasks" in plain.stdout
