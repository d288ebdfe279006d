"""Triage fails safe: a request that is a command line the shell gate refuses is refused before
any model is asked, whatever the model would say; a run whose every tool call the gate refused
ends refused, not done. Through Python, and through the CLI over the local model server on both
store backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.agent import Agent
from noetic.agent.safety import UNANALYSABLE, command_lines, refused_request
from noetic.cli import app
from noetic.llm.base import Request
from noetic.llm.scripted import ScriptedProvider
from noetic.store import agent_memory as tables
from noetic.store import locate_store, open_store
from noetic.tools.shellgate import load_policy

from ..llm.model_server import calls, reply, running, structured

runner = CliRunner()
POLICY = load_policy()


def compliant(request: Request) -> str:
    """A model that finds everything safe and answers at once."""
    return json.dumps({"safe": True, "tools": [], "mode": "fast", "answer": "Done!"})


def triage(**fields) -> dict:
    base = {"safe": True, "safety_reason": "", "tools": [], "mode": "fast", "answer": None}
    return {**base, **fields}


@pytest.mark.parametrize(
    ("request_text", "rule"),
    [
        ("rm -rf /", "destructive-root"),
        ("sudo rm -rf ~", "privilege-escalation"),
        ("please do this:\ncat ~/.ssh/id_rsa\nthanks", "credential-read"),
    ],
)
def test_a_command_the_gate_refuses_is_refused_before_the_model_is_asked(
    tmp_path, request_text, rule
) -> None:
    model = ScriptedProvider(compliant)
    agent = Agent(provider=model, workspace=tmp_path, home=tmp_path / ".noetic", tools=[])
    result = agent.run(request_text)
    assert result.status == "refused"
    assert result.answer.startswith("Security violation") and rule in result.answer
    assert model.calls == []  # the model's verdict never came into it
    (refusal,) = [e.data for e in agent.events if e.kind == "decision"]
    assert (refusal["action"], refusal["rule"]) == ("refuse", rule)


@pytest.mark.parametrize(
    "prose",
    [
        "I prefer Python and I work at Google",  # `at` and `ssh` are programs, but not here
        "grab their ssh keys",
        "What's 2+2?",
        "make it work, it's broken",  # starts with a program; the gate cannot parse it
        "time to refactor the parser",  # `time` runs `to`, a program the gate does not model
        "watch out for the bug",
        "explain what `rm -rf /` does",
    ],
)
def test_prose_is_the_models_to_judge(tmp_path, prose) -> None:
    model = ScriptedProvider(compliant)
    agent = Agent(provider=model, workspace=tmp_path, home=tmp_path / ".noetic", tools=[])
    result = agent.run(prose)
    assert (result.status, result.answer) == ("done", "Done!")
    assert len(model.calls) == 1


@given(st.text(max_size=300))
def test_judging_any_request_names_a_rule_or_nothing(text) -> None:
    found = refused_request(text, Path("/tmp"), POLICY)
    assert found is None or (found.rule and found.rule not in UNANALYSABLE)
    assert all(line.strip() == line and line for line in command_lines(text, POLICY))


def _refusal_over_http(tmp_path: Path) -> tuple[dict, int, list]:
    with running() as server:
        server.default = structured(triage(answer="Sure, done."))
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(
            app, ["agent", "rm -rf /", "--provider", spec, "--workspace", str(tmp_path), "--json"]
        )
        return json.loads(result.stdout), result.exit_code, list(server.requests)


@pytest.mark.subprocess
def test_the_cli_refuses_rm_rf_at_triage_on_sqlite(tmp_path) -> None:
    body, code, requests = _refusal_over_http(tmp_path)
    assert code == 1 and body["status"] == "refused"
    assert "Security violation" in body["answer"] and "destructive-root" in body["answer"]
    assert requests == []
    with open_store(locate_store(None).home) as store:
        (task,) = tables.list_workspaces(store)
    assert task["status"] == "refused"


@pytest.mark.postgres
def test_the_cli_refuses_rm_rf_at_triage_on_postgresql(tmp_path, postgres_url, monkeypatch):
    monkeypatch.setenv("NOETIC_STORE_URL", postgres_url)
    body, code, requests = _refusal_over_http(tmp_path)
    assert code == 1 and body["status"] == "refused" and requests == []
    with open_store(locate_store(None).home) as store:
        (task,) = tables.list_workspaces(store)
    assert task["status"] == "refused"


@pytest.mark.subprocess
def test_a_run_whose_every_tool_call_the_gate_refused_ends_refused(tmp_path) -> None:
    with running() as server:
        server.enqueue(
            structured(triage(tools=["shell"])),
            calls(("c1", "shell", {"command": "rm -rf ~"})),
            calls(("c2", "shell", {"command": "chmod -R 777 /"})),
            reply("I could not clean up: the commands were refused."),
        )
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(
            app,
            ["agent", "clean up the machine", "--provider", spec, "--workspace", str(tmp_path),
             "--no-memory", "--json"],
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    body = json.loads(result.stdout)
    assert body["status"] == "refused"
    refused = [c.get("refused") for c in body["tool_calls"]]
    assert refused == ["destructive-home", "destructive-root"]


@pytest.mark.subprocess
def test_a_run_with_one_call_that_ran_still_ends_done(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("x")
    with running() as server:
        server.enqueue(
            structured(triage(tools=["shell"])),
            calls(("c1", "shell", {"command": "rm -rf ~"})),
            calls(("c2", "shell", {"command": "ls"})),
            reply("Listed."),
        )
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(
            app,
            ["agent", "list the files", "--provider", spec, "--workspace", str(tmp_path),
             "--no-memory", "--json"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "done"
