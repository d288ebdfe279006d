"""Several clients of one store or one server: each has its own current session. And the seed's
own calls, exactly as seed 000 lists them."""

import asyncio
import sys
from pathlib import Path

import pytest

from mcp import Client, StdioServerParameters
from noetic.store import Store
from noetic.store.current import agents_with_current_sessions

from ..conftest import serving, uniform
from ._client import call, err, ok, stdio_env

NOETIC = str(Path(sys.executable).with_name("noetic"))
LOW = uniform(0.5, engagement=0.9, coherence=0.9)
GOOD = uniform(0.85, engagement=0.9, coherence=0.9)
ROUNDS = 3


async def _work(client, name, rounds=ROUNDS):
    """Bootstrap, then tasks without ever passing a session_id; the session ids each reply
    names. Awaits between calls, so two clients' calls interleave."""
    boot = await client.call_tool("bootstrap_session", {"ai_id": name})
    used = [ok(boot)["session"]["id"]]
    for i in range(rounds):
        for tool, args in (
            ("submit_preflight_assessment", {"task": f"{name} {i}", "vectors": LOW}),
            ("submit_check_assessment", {"vectors": {"know": 0.9}}),
            ("submit_postflight_assessment", {"vectors": GOOD}),
        ):
            used.append(ok(await client.call_tool(tool, args))["session_id"])
            await asyncio.sleep(0)
    state = ok(await client.call_tool("get_epistemic_state", {}))
    return used, state


def _assert_apart(results, home, names):
    sessions = {}
    for name, (used, state) in zip(names, results, strict=True):
        assert len(set(used)) == 1, name  # every reply named the session it bootstrapped
        sessions[name] = used[0]
        assert state["session"]["ai_id"] == name
    assert len(set(sessions.values())) == len(names)
    with Store(home) as store:
        for name, sid in sessions.items():
            tasks = store.cascades(sid)
            assert [c.task for c in tasks] == [f"{name} {i}" for i in range(ROUNDS)]
            assert {c.status for c in tasks} == {"completed"}
            assert len(store.assessments(session_id=sid)) == 3 * ROUNDS
    assert agents_with_current_sessions(home) == {}  # the CLI's current sessions untouched


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_stdio_processes_on_one_store_each_have_their_own_session(tmp_path):
    home = tmp_path / "store"
    params = StdioServerParameters(
        command=NOETIC, args=["mcp", "--store", str(home)], env=stdio_env()
    )

    async def go():
        async with (
            Client(params, mode="legacy") as one,
            Client(params, mode="legacy") as two,
        ):
            return await asyncio.gather(_work(one, "one"), _work(two, "two"))

    _assert_apart(asyncio.run(go()), home, ["one", "two"])


@pytest.fixture
def plain_http(tmp_path):
    home = tmp_path / "store"
    with serving(home) as url:
        yield url + "/mcp", home


@pytest.mark.subprocess
def test_two_http_sessions_on_one_server_each_have_their_own_session(plain_http):
    url, home = plain_http

    async def go():
        async with Client(url, mode="legacy") as one, Client(url, mode="legacy") as two:
            return await asyncio.gather(_work(one, "one"), _work(two, "two"))

    _assert_apart(asyncio.run(go()), home, ["one", "two"])


@pytest.mark.slow
def test_an_http_client_without_an_mcp_session_must_name_its_session(plain_http):
    url, _ = plain_http

    async def go():
        async with Client(url, mode="legacy") as stateful:
            await stateful.call_tool("bootstrap_session", {"ai_id": "someone"})
            async with Client(url) as stateless:  # the sessionless protocol: no Mcp-Session-Id
                boot = ok(await stateless.call_tool("bootstrap_session", {"ai_id": "sl"}))
                unnamed = await stateless.call_tool("get_epistemic_state", {})
                named = await stateless.call_tool(
                    "get_epistemic_state", {"session_id": boot["session"]["id"]}
                )
                return boot, unnamed, named

    boot, unnamed, named = asyncio.run(go())
    assert "no MCP session" in err(unnamed) and "pass the session_id" in err(unnamed)
    assert ok(named)["session"]["id"] == boot["session"]["id"]


@pytest.mark.subprocess
def test_the_seeds_calls_exactly_as_written(server):
    (boot,) = call(server, ("bootstrap_session", {"ai_id": "seed", "session_type": "development"}))
    sid = ok(boot)["session"]["id"]
    prompt, submitted, state = call(
        server,
        ("execute_preflight", {"session_id": sid, "prompt": "Refactor the billing module"}),
        ("submit_preflight_assessment", {"session_id": sid, "vectors": LOW}),
        ("get_epistemic_state", {"session_id": sid}),
    )
    assert "TASK: Refactor the billing module" in ok(prompt)["prompt"]
    receipt = ok(submitted)
    assert receipt["task"] == "Refactor the billing module" and receipt["phase"] == "preflight"
    assert ok(state)["open_cascade"]["task"] == "Refactor the billing module"


@pytest.mark.subprocess
def test_the_task_comes_from_the_preceding_preflight_or_is_given(server):
    results = call(
        server,
        ("bootstrap_session", {}),
        ("submit_preflight_assessment", {"vectors": LOW}),
        ("execute_preflight", {"prompt": "a", "task": "b"}),
        ("execute_preflight", {}),
        ("execute_preflight", {"task": "old name"}),
        ("submit_preflight_assessment", {"vectors": {"know": 2}}),
        ("submit_preflight_assessment", {"vectors": LOW}),
        ("submit_postflight_assessment", {"vectors": GOOD}),
        ("submit_preflight_assessment", {"vectors": LOW}),
        ("submit_preflight_assessment", {"task": "given", "vectors": LOW}),
    )
    assert "no execute_preflight before" in err(results[1])
    assert "prompt and task disagree" in err(results[2])
    assert "needs the task" in err(results[3])
    assert ok(results[4])["prompt"]
    err(results[5])  # a rejected submission keeps the task for the retry
    assert ok(results[6])["task"] == "old name"
    ok(results[7])
    assert "no execute_preflight before" in err(results[8])  # used once, then forgotten
    assert ok(results[9])["task"] == "given"


def test_a_long_running_server_remembers_a_bounded_number_of_clients(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from noetic.mcp import state as state_module
    from noetic.mcp.state import ServerState

    monkeypatch.setattr(state_module, "REMEMBERED", 3)
    n = ServerState(tmp_path / "store", workspace=tmp_path, per_connection=True)
    sessions = [n.store.create_session(ai_id=f"c{i}", profile="balanced").id for i in range(5)]
    clients = [SimpleNamespace(headers={"mcp-session-id": f"m{i}"}) for i in range(5)]
    for client, sid in zip(clients[:3], sessions[:3], strict=True):
        n.set_current(client, sid)
    assert n.session_id(None, clients[0]) == sessions[0]  # still there, and now used last
    n.set_current(clients[0], sessions[0])
    for client, sid in zip(clients[3:], sessions[3:], strict=True):
        n.set_current(client, sid)
    assert [n.current(c) for c in clients] == [sessions[0], None, None, sessions[3], sessions[4]]
