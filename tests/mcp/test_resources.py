"""Sessions and profiles as resources; the workflow guidance as a prompt."""

import asyncio
import json

import pytest
from mcp.shared.exceptions import MCPError

from mcp import Client

from ._client import call, ok


def read(server, *uris):
    async def go():
        async with Client(server) as client:
            return [await client.read_resource(uri) for uri in uris]

    return asyncio.run(go())


def test_resources_and_templates_are_listed(server):
    async def go():
        async with Client(server) as client:
            return await client.list_resources(), await client.list_resource_templates()

    resources, templates = asyncio.run(go())
    assert {str(r.uri) for r in resources.resources} == {"noetic://sessions", "noetic://profiles"}
    assert {t.uri_template for t in templates.resource_templates} == {
        "noetic://sessions/{session_id}",
        "noetic://profiles/{name}",
    }


def test_sessions_and_one_session_in_full(server):
    (boot,) = call(server, ("bootstrap_session", {"ai_id": "res"}))
    sid = ok(boot)["session"]["id"]
    sessions, one = read(server, "noetic://sessions", f"noetic://sessions/{sid}")
    assert sessions.contents[0].mime_type == "application/json"
    assert [s["ai_id"] for s in json.loads(sessions.contents[0].text)] == ["res"]
    doc = json.loads(one.contents[0].text)
    assert doc["session"]["id"] == sid and doc["format"] == "noetic.session"


def test_profiles_and_one_profile(server):
    every, one = read(server, "noetic://profiles", "noetic://profiles/critical_domain")
    names = [p["name"] for p in json.loads(every.contents[0].text)]
    assert "critical_domain" in names and len(names) == 5
    profile = json.loads(one.contents[0].text)
    assert profile["name"] == "critical_domain"
    assert profile["investigation"]["confidence_threshold"] == 0.9


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("noetic://sessions/s_nope", "unknown session 's_nope'"),
        ("noetic://profiles/nope", "unknown profile 'nope'"),
    ],
)
def test_an_unknown_id_is_not_found_with_the_fix(server, uri, message):
    async def go():
        async with Client(server) as client:
            with pytest.raises(MCPError, match=message) as caught:
                await client.read_resource(uri)
            return caught.value

    assert asyncio.run(go()).error.code == -32602  # invalid params: no such resource


def test_the_workflow_guidance_prompt(server):
    async def go():
        async with Client(server) as client:
            listed = await client.list_prompts()
            whole = await client.get_prompt("workflow_guidance")
            one = await client.get_prompt("workflow_guidance", {"phase": "postflight"})
            with pytest.raises(MCPError, match="unknown phase 'dance'"):
                await client.get_prompt("workflow_guidance", {"phase": "dance"})
            return listed, whole, one

    listed, whole, one = asyncio.run(go())
    assert [p.name for p in listed.prompts] == ["workflow_guidance"]
    text = whole.messages[0].content.text
    assert "13 vectors" in text and "PREFLIGHT" in text and "record_outcome" in text
    assert one.messages[0].content.text.startswith("POSTFLIGHT")
