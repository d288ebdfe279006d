"""Per-person tokens on ``noetic serve``'s app, over real HTTP on loopback with the SDK's
client: a store token is accepted as the admin token is, a revoked or wrong one refused, a
read-only one reads (tools, dashboard) and writes nothing, and every write names its token."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from mcp import Client
from noetic.cli import app
from noetic.store import open_store

from ..conftest import serving, uniform
from .test_transports import Served

pytestmark = pytest.mark.subprocess  # a server on loopback
ADMIN = "admin-s3cret"


def cli(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def team(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A store (SQLite, or PostgreSQL through ``$NOETIC_STORE_URL``) with tokens alice
    (read-write), reader (read-only) and gone (revoked), served with an admin token as well;
    yields (base URL, store directory, tokens by name)."""
    if request.param == "postgresql":
        monkeypatch.setenv("NOETIC_STORE_URL", request.getfixturevalue("postgres_url"))
    home = tmp_path / "store"
    tokens = {
        "alice": cli("token", "create", "alice", "--store", str(home))["token"],
        "reader": cli("token", "create", "reader", "--read-only", "--store", str(home))["token"],
        "gone": cli("token", "create", "gone", "--store", str(home))["token"],
    }
    cli("token", "revoke", "gone", "--store", str(home))
    with serving(home, token=ADMIN) as url:
        yield url, home, tokens


def calls(url: str, token: str | None, *steps: tuple[str, dict]) -> list:
    """Each tool call's result, over one MCP session with ``token`` (None: without one)."""

    async def go() -> list:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url + "/mcp", http_client=http), mode="legacy") as c,
        ):
            return [await c.call_tool(name, args) for name, args in steps]

    return asyncio.run(go())


def rows(home: Path, sql: str) -> list[tuple]:
    """The rows of a query on the server's store, whichever backend it is on."""
    with open_store(home, create=True, write_files=False) as store:
        return [tuple(r) for r in store.conn.execute(sql).fetchall()]


def written_by(home: Path, table: str) -> list[str | None]:
    return [r[0] for r in rows(home, f"SELECT written_by FROM {table} ORDER BY id")]


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def test_a_revoked_wrong_or_missing_token_is_refused(team):
    url, _, tokens = team
    for headers in ({}, {"Authorization": "Bearer nope"},
                    {"Authorization": f"Bearer {tokens['gone']}"}):  # fmt: skip
        r = httpx2.post(url + "/mcp", json=PING, headers=headers)
        assert r.status_code == 401, headers
        assert json.loads(r.text) == {"error": "missing or wrong bearer token"}
        assert httpx2.post(url + "/hooks/stop", json={}, headers=headers).status_code == 401


def test_a_store_tokens_writes_record_its_name_and_the_admins_none(team):
    url, home, tokens = team
    scores = uniform(0.8)
    steps = (
        ("bootstrap_session", {"ai_id": "alice-agent"}),
        ("submit_preflight_assessment", {"task": "t", "vectors": scores}),
        ("submit_postflight_assessment", {"vectors": scores}),
        ("record_outcome", {"score": 1.0}),
    )
    results = calls(url, tokens["alice"], *steps)
    assert [r.is_error for r in results] == [False] * 4, [r.content for r in results]
    assert written_by(home, "assessments") == ["alice", "alice"]
    assert written_by(home, "outcomes") == ["alice"]
    events = written_by(home, "events")
    assert events and set(events) == {"alice"}
    calls(url, ADMIN, ("bootstrap_session", {"ai_id": "admin-agent"}),
          ("submit_preflight_assessment", {"task": "t2", "vectors": scores}))  # fmt: skip
    assert written_by(home, "assessments") == ["alice", "alice", None]


def test_a_read_only_token_reads_and_cannot_write(team):
    url, home, tokens = team
    boot = calls(url, tokens["alice"], ("bootstrap_session", {"ai_id": "a"}))[0]
    sid = boot.structured_content["session"]["id"]
    read, summary, write, outcome, cli_call = calls(
        url, tokens["reader"],
        ("get_calibration_report", {}),
        ("get_session_summary", {"session_id": sid}),
        ("bootstrap_session", {"ai_id": "sneaky"}),
        ("record_outcome", {"score": 1.0, "target": sid}),
        ("execute_cli_command", {"command": "sessions list"}),
    )  # fmt: skip
    assert not read.is_error and not summary.is_error, (read.content, summary.content)
    for refused, name in ((write, "bootstrap_session"), (outcome, "record_outcome"),
                          (cli_call, "execute_cli_command")):  # fmt: skip
        assert refused.is_error
        text = refused.content[0].text
        assert f"{name} writes to the store and token 'reader' is read-only" in text
    assert rows(home, "SELECT ai_id FROM sessions") == [("a",)]
    assert written_by(home, "outcomes") == []
    hook = httpx2.post(url + "/hooks/session-start", json={},
                       headers={"Authorization": f"Bearer {tokens['reader']}"})  # fmt: skip
    assert hook.status_code == 403
    assert "token 'reader' is read-only" in hook.json()["error"]
    allowed = httpx2.post(url + "/hooks/stop", json={},
                          headers={"Authorization": f"Bearer {tokens['alice']}"})  # fmt: skip
    assert allowed.status_code == 200


def test_the_dashboard_takes_a_store_token_and_its_login_until_it_is_revoked(team):
    url, home, tokens = team
    assert httpx2.get(url + "/sessions").status_code == 303  # to the login form
    bearer = {"Authorization": f"Bearer {tokens['reader']}"}
    assert httpx2.get(url + "/sessions", headers=bearer).status_code == 200
    refused = httpx2.post(url + "/login", data={"token": tokens["gone"], "next": "/sessions"})
    assert refused.status_code == 401
    login = httpx2.post(url + "/login", data={"token": tokens["reader"], "next": "/sessions"})
    assert login.status_code == 303
    cookie = login.cookies["noetic_dashboard"]
    assert tokens["reader"] not in cookie  # a login session id, never the token
    page = httpx2.get(url + "/sessions", cookies={"noetic_dashboard": cookie})
    assert page.status_code == 200
    cli("token", "revoke", "reader", "--store", str(home))
    after = httpx2.get(url + "/sessions", cookies={"noetic_dashboard": cookie})
    assert after.status_code == 303
    assert httpx2.get(url + "/sessions", headers=bearer).status_code == 303
    assert httpx2.post(url + "/mcp", json=PING, headers=bearer).status_code == 401


def test_serve_over_a_store_with_tokens_requires_one_without_an_admin_token(tmp_path):
    home = tmp_path / "store"
    token = cli("token", "create", "alice", "--store", str(home))["token"]
    served = Served(["--port", "0", "--store", str(home)], os.environ)
    try:
        banner = served.banner(until='"command"')
        url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", banner).group(1)
        assert '--header "Authorization: Bearer YOUR_TOKEN"' in banner
        assert token not in banner
        assert httpx2.post(url, json=PING).status_code == 401
        report = calls(url.removesuffix("/mcp"), token, ("get_calibration_report", {}))[0]
        assert not report.is_error, report.content
    finally:
        assert served.stop() == 130


@pytest.mark.slow
def test_every_kind_of_row_a_tool_writes_names_the_token(team):
    """Sessions, tasks, assessments, checkpoints, investigations (written by the command
    ``execute_cli_command`` runs in a child process), goals, outcomes, events and model calls."""
    from ..llm.model_server import reply, running

    url, home, tokens = team
    scores = uniform(0.8, know=0.3)
    with running() as model:
        model.enqueue(reply("Paris."))
        spec = f"openai-compatible:{model.url}/v1#tiny"
        results = calls(
            url, tokens["alice"],
            ("bootstrap_session", {"ai_id": "alice-agent"}),
            ("submit_preflight_assessment", {"task": "t", "vectors": scores}),
            ("execute_cli_command", {"command": "investigate --note 'read the code'"}),
            ("generate_goals", {}),
            ("query_ai", {"question": "Capital of France?", "provider": spec}),
            ("submit_postflight_assessment", {"vectors": uniform(0.8)}),
            ("record_outcome", {"score": 1.0}),
        )  # fmt: skip
    assert [r.is_error for r in results] == [False] * len(results), [r.content for r in results]
    assert results[2].structured_content["exit_code"] == 0, results[2].structured_content
    for table in ("sessions", "cascades", "assessments", "checkpoints", "investigations",
                  "goals", "outcomes", "events", "llm_calls"):  # fmt: skip
        found = [r[0] for r in rows(home, f"SELECT written_by FROM {table}")]
        assert found and set(found) == {"alice"}, (table, found)
    calls(url, ADMIN, ("bootstrap_session", {"ai_id": "admin-agent"}))
    assert sorted(r[0] or "" for r in rows(home, "SELECT written_by FROM sessions")) == [
        "",
        "alice",
    ]


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_a_loopback_server_started_without_tokens_requires_one_from_the_first_on(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """No restart: the request after ``noetic token create`` needs a token, read-only rules
    apply, and once every token is revoked the loopback server is open again."""
    if backend == "postgresql":
        monkeypatch.setenv("NOETIC_STORE_URL", request.getfixturevalue("postgres_url"))
    home = tmp_path / "store"
    served = Served(["--port", "0", "--store", str(home)], os.environ)
    try:
        banner = served.banner(until='"command"')
        url = re.search(r"at (http://127\.0\.0\.1:\d+)/mcp", banner).group(1)
        assert "Authorization" not in banner  # nothing required when it started
        assert httpx2.get(url + "/sessions").status_code == 200
        opened = calls(url, None, ("bootstrap_session", {"ai_id": "before"}))[0]
        assert not opened.is_error, opened.content

        alice = cli("token", "create", "alice", "--store", str(home))["token"]
        reader = cli("token", "create", "reader", "--read-only", "--store", str(home))["token"]
        assert httpx2.post(url + "/mcp", json=PING).status_code == 401
        assert httpx2.post(url + "/hooks/stop", json={}).status_code == 401
        assert httpx2.get(url + "/sessions").status_code == 303  # to the login form
        bearer = {"Authorization": f"Bearer {reader}"}
        assert httpx2.get(url + "/sessions", headers=bearer).status_code == 200
        wrote = calls(url, alice, ("bootstrap_session", {"ai_id": "alice-agent"}))[0]
        assert not wrote.is_error, wrote.content
        sessions = rows(home, "SELECT ai_id, written_by FROM sessions ORDER BY created_at")
        assert sessions == [("before", None), ("alice-agent", "alice")]
        read, write = calls(url, reader, ("get_calibration_report", {}),
                            ("bootstrap_session", {"ai_id": "sneaky"}))  # fmt: skip
        assert not read.is_error and write.is_error
        assert "token 'reader' is read-only" in write.content[0].text
        hook = httpx2.post(url + "/hooks/session-start", json={}, headers=bearer)
        assert hook.status_code == 403

        cli("token", "revoke", "alice", "--store", str(home))
        assert httpx2.post(url + "/mcp", json=PING).status_code == 401  # reader is live
        cli("token", "revoke", "reader", "--store", str(home))
        assert httpx2.get(url + "/sessions").status_code == 200
        again = calls(url, None, ("bootstrap_session", {"ai_id": "after"}))[0]
        assert not again.is_error, again.content
        assert rows(home, "SELECT written_by FROM sessions WHERE ai_id = 'after'") == [(None,)]
    finally:
        assert served.stop() == 130


@pytest.mark.slow
def test_the_engines_a_token_runs_write_as_it(team):
    """``observe`` and ``nova_process`` on a provider over real HTTP: their runs, stages,
    turns, model calls and the task a Nova run records all name the token."""
    from ..llm.model_server import reply, running
    from ..nova.test_cli import ANY_TURN

    url, home, tokens = team
    with running() as model:
        model.enqueue(
            reply("CONFIDENCE: 0.6\nLAYERS: C01,C02,C03,C04\nCONTENT: exploring"),
            reply("CONFIDENCE: 0.97\nLAYERS: C02\nCONTENT: the answer"),
            *[reply(ANY_TURN)] * 8,
        )
        spec = f"openai-compatible:{model.url}/v1#tiny"
        results = calls(
            url, tokens["alice"],
            ("observe", {"query": "why is the sky blue?", "provider": spec}),
            ("nova_process", {"question": "OAuth2?", "experts": ["security"], "provider": spec}),
        )  # fmt: skip
    assert [r.is_error for r in results] == [False, False], [r.content for r in results]
    assert results[1].structured_content["status"] == "completed"
    for table in ("observer_runs", "observations", "nova_runs", "nova_turns", "llm_calls",
                  "sessions", "cascades", "assessments", "events"):  # fmt: skip
        found = [r[0] for r in rows(home, f"SELECT written_by FROM {table}")]
        assert found and set(found) == {"alice"}, (table, found)
