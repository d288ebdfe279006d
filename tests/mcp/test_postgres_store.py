"""Two MCP servers on two machines' worth of local directories, one PostgreSQL store: what one
server's client writes, the other's reads. Both are the real ``noetic mcp`` over stdio, driven
by the SDK's client."""

import asyncio
import sys
from pathlib import Path

import pytest

from mcp import Client, StdioServerParameters

from ..conftest import uniform
from ._client import stdio_env

pytest.importorskip("psycopg")
NOETIC = str(Path(sys.executable).with_name("noetic"))
SCORES = uniform(0.8, engagement=0.9, coherence=0.9)


@pytest.mark.postgres
@pytest.mark.subprocess
def test_two_servers_on_one_postgresql_store_see_each_others_writes(tmp_path, postgres_url):
    def server(machine: str) -> StdioServerParameters:
        env = {**stdio_env(), "NOETIC_HOME": str(tmp_path / machine)}
        return StdioServerParameters(command=NOETIC, args=["mcp", "--store", postgres_url], env=env)

    async def write() -> str:
        async with Client(server("laptop"), mode="legacy") as client:
            boot = await client.call_tool("bootstrap_session", {"ai_id": "laptop"})
            await client.call_tool("submit_preflight_assessment", {"task": "t", "vectors": SCORES})
            await client.call_tool("submit_postflight_assessment", {"vectors": SCORES})
            return str(boot.structured_content["session"]["id"])

    async def read(session_id: str) -> dict:
        async with Client(server("ci"), mode="legacy") as client:
            result = await client.call_tool("get_session_summary", {"session_id": session_id})
            assert not result.is_error, result.content[0].text
            return dict(result.structured_content)

    sid = asyncio.run(write())
    summary = asyncio.run(read(sid))
    assert sid in str(summary) and "laptop" in str(summary)
    assert not (tmp_path / "laptop" / "noetic.db").exists()
    assert not (tmp_path / "ci" / "noetic.db").exists()
