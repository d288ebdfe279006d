"""Real transports: `noetic mcp` over stdio in a subprocess, streamable HTTP with and without a
token, and `noetic serve` as the user runs it. Every server here stops by itself."""

import asyncio
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

import noetic
from mcp import Client, StdioServerParameters
from noetic.cli import app

from ..conftest import serving, uniform
from ._client import INITIALIZE, host_model, stdio_env
from .test_snapshot import SEED_TOOLS

NOETIC = str(Path(sys.executable).with_name("noetic"))
SCORES = uniform(0.8, engagement=0.9, coherence=0.9)


@pytest.mark.slow
@pytest.mark.subprocess
def test_stdio_subprocess_initialises_lists_tools_and_runs_a_transaction(tmp_path):
    params = StdioServerParameters(
        command=NOETIC, args=["mcp", "--store", str(tmp_path / "s")], env=stdio_env()
    )

    async def go():
        async with Client(params, mode="legacy") as client:
            info = client.session.initialize_result
            tools = await client.list_tools()
            boot = await client.call_tool("bootstrap_session", {"ai_id": "stdio"})
            pre = await client.call_tool(
                "submit_preflight_assessment", {"task": "t", "vectors": SCORES}
            )
            post = await client.call_tool("submit_postflight_assessment", {"vectors": SCORES})
            return info, tools, boot, pre, post

    info, tools, boot, pre, post = asyncio.run(go())
    assert info.server_info.name == "noetic"
    assert info.server_info.version == noetic.__version__ != ""
    assert SEED_TOOLS <= {t.name for t in tools.tools}
    assert boot.structured_content["session"]["ai_id"] == "stdio"
    assert pre.structured_content["decision"]["action"] == "PROCEED"
    assert post.structured_content["calibration"]["classification"] == "well_calibrated"


@pytest.mark.slow
@pytest.mark.subprocess
def test_stdio_line_without_a_store_writes_into_the_project_the_client_starts_it_in(tmp_path):
    """The printed stdio command names no store, so each project keeps its own."""
    env = {k: v for k, v in os.environ.items() if k != "NOETIC_HOME"}
    projects = [tmp_path / "alpha", tmp_path / "beta"]

    async def go(project):
        (project / ".git").mkdir(parents=True)
        params = StdioServerParameters(command=NOETIC, args=["mcp"], cwd=project, env=env)
        async with Client(params, mode="legacy") as client:
            await client.call_tool("bootstrap_session", {"ai_id": project.name})

    for project in projects:
        asyncio.run(go(project))
    for project in projects:
        from noetic.store import Store

        with Store(project / ".noetic") as store:
            assert [s.ai_id for s in store.list_sessions()] == [project.name]


@pytest.mark.subprocess
def test_stdio_stdout_carries_nothing_but_protocol(tmp_path):
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "execute_cli_command",
                "arguments": {"command": "sessions show s_nope"},
            },
        },
    ]
    proc = subprocess.Popen(
        [NOETIC, "mcp", "--store", str(tmp_path / "s")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines = []

    def converse():
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
        while len(lines) < 3 and (line := proc.stdout.readline()):
            lines.append(line)

    talker = threading.Thread(target=converse, daemon=True)
    talker.start()
    talker.join(timeout=60)
    proc.stdin.close()  # end of input: the server exits
    try:
        assert proc.wait(timeout=30) == 0
        lines += proc.stdout.readlines()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    replies = [json.loads(line) for line in lines]
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    assert [r["id"] for r in replies] == [1, 2, 3]
    # The CLI command's own output (an error: no such session) came back inside the result.
    result = replies[2]["result"]["structuredContent"]
    assert result["exit_code"] == 1
    assert "unknown session" in result["data"]["error"]["message"]


@pytest.fixture
def http_server(tmp_path):
    with serving(tmp_path / "s", token="s3cret") as url:
        yield url + "/mcp"


def test_http_refuses_requests_without_the_right_token(http_server):
    init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx2.post(http_server, json=init).status_code == 401
    wrong = httpx2.post(http_server, json=init, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"].startswith("Bearer")
    assert json.loads(wrong.text) == {"error": "missing or wrong bearer token"}


def test_http_with_the_token_serves_the_tools_and_samples_the_clients_model(http_server):
    async def go():
        headers = {"Authorization": "Bearer s3cret"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(
                streamable_http_client(http_server, http_client=http),
                mode="legacy",
                sampling_callback=host_model("over http"),
            ) as client,
        ):
            tools = await client.list_tools()
            boot = await client.call_tool("bootstrap_session", {"ai_id": "http"})
            answer = await client.call_tool("query_ai", {"question": "hi"})
            return tools, boot, answer

    tools, boot, answer = asyncio.run(go())
    assert SEED_TOOLS <= {t.name for t in tools.tools}
    assert boot.structured_content["session"]["ai_id"] == "http"
    assert answer.structured_content["answer"] == "over http"


def test_binding_beyond_loopback_needs_a_token():
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "needs a token" in result.stderr


def test_serve_refuses_a_busy_port_before_printing_anything(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            app, ["serve", "--port", str(port), "--store", str(tmp_path / "s")]
        )
    assert result.exit_code == 1
    assert "cannot listen on 127.0.0.1" in result.stderr and "claude" not in result.stderr


class Served:
    """`noetic serve` in a subprocess; its stderr lines arrive on a queue."""

    def __init__(self, args, env):
        self.proc = subprocess.Popen(
            [NOETIC, "serve", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._pumping = threading.Thread(target=self._pump, daemon=True)
        self._pumping.start()

    def _pump(self):
        for line in self.proc.stderr:
            self.lines.put(line)

    def banner(self, until, timeout=30):
        seen, deadline = [], time.monotonic() + timeout
        while not any(until in line for line in seen):
            seen.append(self.lines.get(timeout=max(0.1, deadline - time.monotonic())))
        return "".join(seen)

    def stop(self):
        """Ctrl-C; the server shuts down cleanly and exits 130, as a terminal expects."""
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            self._pumping.join(timeout=5)
            self.proc.stderr.close()


@pytest.mark.slow
@pytest.mark.subprocess
def test_serve_prints_the_url_and_how_to_connect_and_serves(tmp_path):
    served = Served(["--port", "0", "--store", str(tmp_path / "s")], os.environ)
    try:
        banner = served.banner(until='"command"')
        url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", banner).group(1)
        assert f"claude mcp add --transport http noetic {url}\n" in banner
        assert f"serving the store {tmp_path / 's'} to every client connected over HTTP" in banner
        # The stdio line names no store: it follows the project the client starts it in.
        stdio = re.search(r"claude mcp add noetic -- (.*)\n", banner).group(1)
        assert stdio in (f"{NOETIC} mcp", "noetic mcp")
        # MCP alone records no outcome and gates nothing: the banner names the command that does.
        setup = re.search(r"\n  (.*) setup claude-code\n", banner)
        assert setup is not None and setup.group(1) in (NOETIC, "noetic"), banner
        assert banner.index("setup claude-code") < banner.index("claude mcp add")
        assert "--store" not in banner
        assert json.dumps({"mcpServers": {"noetic": {"type": "http", "url": url}}}) in banner

        async def go():
            async with Client(url, mode="legacy") as client:
                return await client.list_tools()

        assert SEED_TOOLS <= {t.name for t in asyncio.run(go()).tools}
    finally:
        assert served.stop() == 130


@pytest.mark.subprocess
def test_serve_with_a_token_from_the_environment(tmp_path):
    env = {**os.environ, "NOETIC_TOKEN": "from-env"}
    served = Served(["--port", "0", "--store", str(tmp_path / "s")], env)
    try:
        banner = served.banner(until='"command"')
        url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", banner).group(1)
        # The command names the variable rather than echoing the secret into logs.
        assert f'noetic {url} --header "Authorization: Bearer ${{NOETIC_TOKEN}}"' in banner
        assert "from-env" not in banner
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert httpx2.post(url, json=ping).status_code == 401
        authed = httpx2.post(
            url,
            json=ping,
            headers={
                "Authorization": "Bearer from-env",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
            },
        )
        assert authed.status_code != 401
    finally:
        assert served.stop() == 130


@pytest.mark.subprocess
def test_ctrl_c_leaves_the_store_complete(tmp_path):
    """`noetic serve` leaves without the interpreter's teardown (bench/serve_exit.py times
    it); its exit handlers still run, so what a client recorded is in the store's files."""
    store = tmp_path / "s"
    served = Served(["--port", "0", "--store", str(store)], os.environ)
    try:
        banner = served.banner(until='"command"')
        url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", banner).group(1)

        async def go():
            async with Client(url, mode="legacy") as client:
                boot = await client.call_tool("bootstrap_session", {"ai_id": "c"})
                pre = {"task": "t", "vectors": uniform(0.8)}
                await client.call_tool("submit_preflight_assessment", pre)
                return boot.structured_content["session"]["id"]

        session = asyncio.run(go())
    finally:
        code = served.stop()
    assert code == 130
    document = json.loads((store / "sessions" / f"{session}.json").read_text())
    assert [a["assessment"]["phase"] for a in document["assessments"]] == ["preflight"]
    assert list(store.glob(f"reflex_logs/c/*/{session}.jsonl"))
