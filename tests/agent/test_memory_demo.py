"""The seed's memory demo over a real HTTP model server: a preference stated in the first
interaction is in the profile and in the next run's requests, through Python and the CLI, on
both store backends; consolidation loses none of the interactions before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.agent import Agent
from noetic.cli import app
from noetic.store import agent_memory as tables
from noetic.store import locate_store, open_store

from ..llm.model_server import reply, running, structured

runner = CliRunner()

STATED = {"preferences": {"language": "Python", "employer": "Google"}}


def triage(**fields) -> dict:
    base = {"safe": True, "safety_reason": "", "tools": [], "mode": "fast", "answer": None}
    return {**base, **fields}


def _system(body: dict) -> str:
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), "")


def _demo_replies(server) -> None:
    server.enqueue(
        structured(triage(answer="Noted.")),  # run 1: triage answers directly
        structured(STATED),  # run 1: what the user stated, as the model reads it
        structured(triage(answer="Python.")),  # run 2
        structured({}),  # run 2: nothing new stated
    )


def _check_demo(server) -> None:
    learn = server.requests[1]
    assert _system(learn).startswith("You keep a short profile")
    assert "I prefer Python and I work at Google" in learn["messages"][-1]["content"]
    second_triage = server.requests[2]
    assert "What language should I use?" in second_triage["messages"][-1]["content"]
    assert "language: Python" in _system(second_triage)
    assert "employer: Google" in _system(second_triage)


@pytest.mark.subprocess
def test_the_seeds_demo_through_python_remembers_from_the_first_interaction(tmp_path) -> None:
    with running() as server:
        _demo_replies(server)
        agent = Agent(
            provider=f"openai-compatible:{server.url}/v1#m",
            workspace=tmp_path,
            home=tmp_path / ".noetic",
            memory=True,
            tools=[],
        )
        agent.run("I prefer Python and I work at Google")
        profile = agent.memory_for(agent.context().store).profile("default")
        assert profile.preferences == STATED["preferences"]
        assert profile.interaction_count == 1
        answer = agent.run("What language should I use?")
        agent.close()
        _check_demo(server)
    assert answer.answer == "Python."
    assert len(server.requests) == 4  # one memory call per interaction, no more


def _cli_demo(tmp_path: Path, server) -> dict:
    spec = f"openai-compatible:{server.url}/v1#m"
    for query in ("I prefer Python and I work at Google", "What language should I use?"):
        done = runner.invoke(
            app, ["agent", query, "--provider", spec, "--workspace", str(tmp_path), "--json"]
        )
        assert done.exit_code == 0, done.output
    _check_demo(server)
    with open_store(locate_store(None).home) as store:
        return tables.load_profile(store, "default") or {}


@pytest.mark.subprocess
def test_the_seeds_demo_through_the_cli_on_sqlite(tmp_path) -> None:
    with running() as server:
        _demo_replies(server)
        profile = _cli_demo(tmp_path, server)
    assert profile["preferences"] == STATED["preferences"]
    assert profile["interaction_count"] == 2


@pytest.mark.postgres
def test_the_seeds_demo_through_the_cli_on_postgresql(tmp_path, postgres_url, monkeypatch):
    monkeypatch.setenv("NOETIC_STORE_URL", postgres_url)
    with running() as server:
        _demo_replies(server)
        profile = _cli_demo(tmp_path, server)
    assert profile["preferences"] == STATED["preferences"]
    assert profile["interaction_count"] == 2


@pytest.mark.subprocess
def test_consolidation_reads_every_interaction_since_the_last_and_keeps_what_was_learned(
    tmp_path,
) -> None:
    rewritten = {"preferences": {"language": "Python"}, "goals": ["goal 4"]}
    with running() as server:
        for i in range(1, 5):  # runs 1-4 learn, run 5 consolidates (every 5)
            server.enqueue(
                structured(triage(answer=f"ok {i}")),
                structured({"goals": [f"goal {i}"]}),
            )
        server.enqueue(structured(triage(answer="ok 5")), structured(rewritten))
        agent = Agent(
            provider=f"openai-compatible:{server.url}/v1#m",
            workspace=tmp_path,
            home=tmp_path / ".noetic",
            memory=True,
            tools=[],
        )
        memory = agent.memory_for(agent.context().store)
        for i in range(1, 5):
            agent.run(f"question {i}")
        assert memory.profile("default").goals == ["goal 1", "goal 2", "goal 3", "goal 4"]
        agent.run("question 5")
        consolidation = server.requests[-1]
        profile = memory.profile("default")
        agent.close()
    assert "Consolidate the profile" in _system(consolidation)
    sent = consolidation["messages"][-1]["content"]
    assert all(f"question {i}" in sent for i in range(1, 6))  # runs 1-4 not forgotten
    assert '"goal 3"' in sent  # the profile learned so far rides along
    assert profile.goals == ["goal 4"] and profile.preferences == {"language": "Python"}
    assert profile.unconsolidated == [] and profile.interaction_count == 5


@pytest.mark.subprocess
def test_a_failed_consolidation_keeps_what_each_interaction_taught(tmp_path) -> None:
    with running() as server:
        server.enqueue(structured(triage(answer="Noted.")), structured(STATED))
        # the second interaction consolidates; the reply and its repair are unusable
        server.enqueue(structured(triage(answer="ok")), reply("not json"), reply("still not"))
        # the provider now asks for the schema in the prompt: the replies come as text
        shipping = {"goals": ["ship"]}
        server.enqueue(reply(json.dumps(triage(answer="ok"))), reply(json.dumps(shipping)))
        agent = Agent(
            provider=f"openai-compatible:{server.url}/v1#m",
            workspace=tmp_path,
            home=tmp_path / ".noetic",
            memory=True,
            tools=[],
        )
        memory = agent.memory_for(agent.context().store)
        agent.run("I prefer Python and I work at Google")
        memory.every = 2
        agent.run("hello")
        profile = memory.profile("default")
        assert profile.preferences == STATED["preferences"]
        assert len(profile.unconsolidated) == 2  # both wait for the next consolidation
        memory.every = 100
        agent.run("I am shipping")
        profile = memory.profile("default")
        decided = [e.data["action"] for e in memory.store.events(kind="decision")]
        agent.close()
    assert profile.preferences == STATED["preferences"] and profile.goals == ["ship"]
    assert len(profile.unconsolidated) == 3
    assert [a for a in decided if a.startswith("memory:")] == [
        "memory:learn", "memory:learned", "memory:consolidate", "memory:failed",
        "memory:learn", "memory:learned",
    ]  # fmt: skip
