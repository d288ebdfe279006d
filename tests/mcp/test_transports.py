"""Real transports: a subprocess over stdio, and streamable HTTP with and without a token."""

import asyncio
import json
import socket
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from mcp import Client, StdioServerParameters
from noetic.cli import app
from noetic.mcp.http import http_app

from ..conftest import uniform

NOETIC = str(Path(sys.executable).with_name("noetic"))
SCORES = uniform(0.8, engagement=0.9, coherence=0.9)


def test_stdio_subprocess_initialises_lists_tools_and_runs_a_transaction(tmp_path):
    params = StdioServerParameters(command=NOETIC, args=["mcp", "--store", str(tmp_path / "s")])

    async def go():
        async with Client(params) as client:
            tools = await client.list_tools()
            boot = await client.call_tool("bootstrap_session", {"ai_id": "stdio"})
            pre = await client.call_tool(
                "submit_preflight_assessment", {"task": "t", "vectors": SCORES}
            )
            post = await client.call_tool("submit_postflight_assessment", {"vectors": SCORES})
            return tools, boot, pre, post

    tools, boot, pre, post = asyncio.run(go())
    assert len(tools.tools) == 23
    assert boot.structured_content["session"]["ai_id"] == "stdio"
    assert pre.structured_content["decision"]["action"] == "PROCEED"
    assert post.structured_content["calibration"]["classification"] == "well_calibrated"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    asgi = http_app(tmp_path / "s", token="s3cret")
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(timeout=10)


def test_http_refuses_requests_without_the_right_token(http_server):
    init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx2.post(http_server, json=init).status_code == 401
    wrong = httpx2.post(http_server, json=init, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert json.loads(wrong.text) == {"error": "missing or wrong bearer token"}


def test_http_with_the_token_serves_the_tools(http_server):
    async def go():
        headers = {"Authorization": "Bearer s3cret"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(http_server, http_client=http)) as client,
        ):
            tools = await client.list_tools()
            boot = await client.call_tool("bootstrap_session", {"ai_id": "http"})
            return tools, boot

    tools, boot = asyncio.run(go())
    assert len(tools.tools) == 23
    assert boot.structured_content["session"]["ai_id"] == "http"


def test_binding_beyond_loopback_needs_a_token():
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "needs a token" in result.stderr
