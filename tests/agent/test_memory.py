"""Memory: the seed's tables, profiles made in the background, workspaces that survive a kill."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from noetic.agent import Agent, Finished, TextDelta
from noetic.agent.memory import AgentMemory
from noetic.agent.state import State, UserProfile
from noetic.errors import NotFoundError, StoreError, UsageError
from noetic.llm.base import Request
from noetic.llm.scripted import ScriptedProvider
from noetic.store import Store
from noetic.store import agent_memory as tables


def kind(request: Request) -> str:
    system = request.system or ""
    if system.startswith("You triage"):
        return "triage"
    if system.startswith("You keep a short profile"):
        return "profile"
    return "reason"


def test_the_seed_tables_exist_with_their_columns(store) -> None:
    cols = {
        table: [r[1] for r in store.conn.execute(f"PRAGMA table_info({table})")]
        for table in ("user_profiles", "task_workspaces")
    }
    assert cols["user_profiles"] == ["user_id", "profile_data", "updated_at"]
    assert cols["task_workspaces"] == [
        "task_id", "user_id", "query", "status", "workspace_data", "updated_at"
    ]  # fmt: skip


def test_profile_synthesis_runs_in_the_background_and_never_delays_the_answer(tmp_path) -> None:
    gate = asyncio.Event()
    seen: list[str] = []

    async def main() -> None:
        def reply(request: Request):
            seen.append(kind(request))
            if kind(request) == "triage":
                return json.dumps({"safe": True, "tools": [], "mode": "fast",
                                   "answer": "Use Python."})  # fmt: skip
            return json.dumps({"preferences": {"language": "Python"}, "goals": ["ship v2"]})

        class Slow(ScriptedProvider):
            async def complete(self, request: Request):
                if kind(request) == "profile":
                    seen.append("waiting")
                    await gate.wait()  # the synthesis waits until the test has the answer
                return await super().complete(request)

        agent = Agent(provider=Slow(reply), workspace=tmp_path, home=tmp_path / ".noetic",
                      memory=True, tools=[])  # fmt: skip
        memory = agent.memory_for(agent.context().store)
        memory.every = 1  # fire on every interaction
        items = []
        async for item in agent.stream("I prefer Python and I'm shipping v2. What should I use?"):
            items.append(item)
        texts = [i.text for i in items if isinstance(i, TextDelta)]
        assert texts == ["Use Python."]
        assert isinstance(items[-1], Finished)
        # the answer is out; the synthesis is still waiting in the background
        await asyncio.sleep(0.05)
        assert agent.background and not any(t.done() for t in agent.background)
        assert seen[-1] == "waiting"
        profile = memory.profile("default")
        assert profile.preferences == {}
        gate.set()
        await agent.settle()
        profile = memory.profile("default")
        assert profile.preferences == {"language": "Python"}
        assert profile.goals == ["ship v2"] and profile.interaction_count == 1

    asyncio.run(main())


def test_triggers_every_n_session_change_and_high_value(store) -> None:
    memory = AgentMemory(store, every=3)
    profile = UserProfile(user_id="u", interaction_count=3, last_session="s1")
    state = State(query="q")
    assert memory.triggers(profile, "s1", state) == ["every"]
    profile.interaction_count = 4
    assert memory.triggers(profile, "s1", state) == []
    assert memory.triggers(profile, "s2", state) == ["session"]
    state.execution.completed_calls = [{}, {}, {}]
    assert memory.triggers(profile, "s1", state) == ["high-value"]
    state.execution.completed_calls = []
    state.execution.depth = "deep"
    assert memory.triggers(profile, None, state) == ["high-value"]


def test_a_failed_synthesis_keeps_the_profile_and_says_so(tmp_path) -> None:
    def reply(request: Request):
        if kind(request) == "triage":
            return json.dumps({"safe": True, "tools": [], "answer": "ok"})
        return "not json at all"

    agent = Agent(provider=ScriptedProvider(reply), workspace=tmp_path,
                  home=tmp_path / ".noetic", memory=True, tools=[])  # fmt: skip
    store = agent.context().store
    tables.save_profile(store, "default", {"user_id": "default", "goals": ["keep me"]})
    agent.memory_for(store).every = 1
    agent.run("hello")
    profile = agent.memory_for(store).profile("default")
    assert profile.goals == ["keep me"] and profile.interaction_count == 1


def test_memory_off_keeps_no_profile_but_still_saves_the_workspace(tmp_path) -> None:
    def reply(request: Request):
        return json.dumps({"safe": True, "tools": [], "answer": "ok"})

    agent = Agent(provider=ScriptedProvider(reply), workspace=tmp_path,
                  home=tmp_path / ".noetic", memory=False, tools=[])  # fmt: skip
    result = agent.run("hello")
    store = agent.context().store
    assert tables.load_profile(store, "default") == {"user_id": "default"}
    task, user, query, status, _ = tables.load_workspace(store, result.task_id)
    assert (task, user, query, status) == (result.task_id, "default", "hello", "direct")


def test_a_corrupt_or_unknown_task_is_named(store) -> None:
    with pytest.raises(NotFoundError, match="no agent task"):
        tables.load_workspace(store, "t_missing")
    tables.save_workspace(store, "t_1", "u", "q", "running", {"objective": "q"})
    with store.transaction() as conn:
        conn.execute("UPDATE task_workspaces SET workspace_data = '{broken' WHERE task_id = 't_1'")
    with pytest.raises(StoreError, match="corrupt"):
        tables.load_workspace(store, "t_1")
    tables.save_workspace(store, "t_2", "u", "q", "running", {})
    tables.save_workspace(store, "t_3", "u", "q", "running", {})
    with pytest.raises(NotFoundError, match="ambiguous"):
        tables.load_workspace(store, "t_")


_KILLED_RUN = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from pathlib import Path
    from noetic.agent import Agent
    from noetic.llm.scripted import ScriptedProvider, calling
    from noetic.tools.base import tool

    ws, home = Path(sys.argv[1]), Path(sys.argv[2])

    def step(name: str) -> str:
        \"\"\"Do one step of the job.

        Args:
            name: the step
        \"\"\"
        if name == "second":
            (ws / "ready").write_text("1")
            time.sleep(60)  # killed here
        return f"{name} done: found the config in settings.toml"

    def reply(request):
        if (request.system or "").startswith("You triage"):
            return json.dumps({"safe": True, "tools": ["step"], "mode": "deep"})
        if len(request.messages) == 1:
            return calling(("step", {"name": "first"}))
        return calling(("step", {"name": "second"}))

    agent = Agent(provider=ScriptedProvider(reply), workspace=ws, home=home, tools=[tool(step)])
    agent.run("migrate the config")
    """
)


@pytest.mark.subprocess
def test_a_task_killed_mid_run_resumes_from_its_saved_workspace(tmp_path) -> None:
    ws, home = tmp_path / "ws", tmp_path / ".noetic"
    ws.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RUN, str(ws), str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not (ws / "ready").exists():
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline, "the run never reached its second step"
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    child.stderr.close()

    with Store(home) as store:
        (task,) = tables.list_workspaces(store)
        assert task["status"] == "running"
        _, _, _, _, saved = tables.load_workspace(store, task["task_id"])
        assert any("first done" in o for o in saved["observations"])

    asked: list[Request] = []

    def reply(request: Request):
        if kind(request) == "triage":
            return json.dumps({"safe": True, "tools": [], "mode": "fast", "answer": "skip"})
        asked.append(request)
        return "resumed and finished"

    agent = Agent(provider=ScriptedProvider(reply), workspace=ws, home=home, tools=[])
    result = asyncio.run(agent.aresume(task["task_id"][:8]))
    assert result.task_id == task["task_id"]
    assert result.answer == "resumed and finished"  # a resumed task is not answered in triage
    assert "being resumed" in asked[0].system and "first done" in asked[0].system
    with Store(home) as store:
        assert tables.load_workspace(store, task["task_id"])[3] == "answered"
    with pytest.raises(UsageError, match="not interrupted"):
        asyncio.run(agent.aresume(task["task_id"]))


@pytest.mark.subprocess
def test_concurrent_writers_lose_nothing(tmp_path) -> None:
    """Two processes' agents saving workspaces and profiles into one store at once."""
    code = textwrap.dedent(
        """
        import sys
        from noetic.store import Store
        from noetic.store import agent_memory as tables
        home, me = sys.argv[1], sys.argv[2]
        with Store(home) as store:
            for i in range(40):
                tables.save_workspace(store, f"t_{me}_{i}", me, "q", "running", {"i": i})
                tables.save_profile(store, me, {"user_id": me, "interaction_count": i})
        """
    )
    Store(tmp_path / "s").close()
    children = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "s"), who])
        for who in ("ann", "bob")
    ]
    assert [c.wait(timeout=120) for c in children] == [0, 0]
    with Store(tmp_path / "s") as store:
        tasks = tables.list_workspaces(store, limit=1000)
        assert len(tasks) == 80
        for who in ("ann", "bob"):
            assert tables.load_profile(store, who)["interaction_count"] == 39


SECRET = "my-allergy-is-penicillin-7f3a"


def _remembering(tmp_path, user: str) -> Agent:
    """An agent that ran once for ``user`` with memory on: a profile and a workspace kept."""

    def reply(request: Request):
        if kind(request) == "triage":
            return json.dumps({"safe": True, "tools": [], "mode": "fast", "answer": "Noted."})
        return json.dumps({"preferences": {"health": SECRET}, "goals": ["stay well"]})

    agent = Agent(provider=ScriptedProvider(reply), workspace=tmp_path, home=tmp_path / ".noetic",
                  memory=True, tools=[], user_id=user)  # fmt: skip
    agent.memory_for(agent.context().store).every = 1
    agent.run(f"Remember {SECRET} for me")
    return agent


def _file_bytes(home) -> bytes:
    return b"".join(p.read_bytes() for p in home.glob("noetic.db*"))


def test_forgetting_a_user_deletes_their_profile_and_tasks_and_leaves_no_copy(tmp_path) -> None:
    agent = _remembering(tmp_path, "ada")
    _remembering(tmp_path, "bob")
    store = agent.context().store
    assert SECRET in json.dumps(tables.load_profile(store, "ada"))
    ada_tasks = [t["task_id"] for t in tables.list_workspaces(store) if t["user_id"] == "ada"]
    assert len(ada_tasks) == 1
    assert agent.forget() == ada_tasks
    assert tables.load_profile(store, "ada") is None
    assert [t["user_id"] for t in tables.list_workspaces(store)] == ["bob"]
    assert tables.load_profile(store, "bob") is not None  # nobody else forgotten
    with pytest.raises(NotFoundError, match="nothing about user 'ada'"):
        agent.forget("ada")
    tables.delete_user(store, "bob")
    store.close()
    assert SECRET.encode() not in _file_bytes(tmp_path / ".noetic")  # overwritten, not freed


@pytest.mark.slow
def test_the_cli_forgets_a_user_or_one_task(tmp_path) -> None:
    from typer.testing import CliRunner

    from noetic.cli import app

    runner = CliRunner()
    agent = _remembering(tmp_path, "ada")
    second = agent.run("and one more thing")
    home = ["--store", str(tmp_path / ".noetic")]
    one = runner.invoke(app, ["agent", "forget", "--task", second.task_id[:10], *home, "--json"])
    assert one.exit_code == 0, one.output
    assert json.loads(one.stdout)["tasks"] == [second.task_id]
    everything = runner.invoke(app, ["agent", "forget", "--user", "ada", *home])
    assert everything.exit_code == 0, everything.output
    assert "forgot user 'ada': their profile and 1 task workspace(s)" in everything.stdout
    listed = runner.invoke(app, ["agent", "tasks", *home, "--json"])
    assert json.loads(listed.stdout) == []
    again = runner.invoke(app, ["agent", "forget", "--user", "ada", *home])
    assert again.exit_code != 0 and "nothing about user 'ada'" in again.output
    neither = runner.invoke(app, ["agent", "forget", *home])
    assert neither.exit_code != 0 and "--user NAME or --task ID" in neither.output
