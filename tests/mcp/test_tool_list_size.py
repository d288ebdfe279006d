"""What a client's model reads on every turn: the tool list's names, descriptions and input
schemas, held to a budget, through a real MCP client."""

import asyncio
import json

from mcp import Client
from noetic.mcp.schemas import lean_schema

# Characters of compact JSON: name, description and input schema of every tool (15,688 with
# p_success, the review kind and the write tools' request_id, optional arguments written as a
# type list rather than an anyOf; 16,407 with `evaluate`, the 25th tool).
BUDGET = 16_500


def test_the_tool_list_a_model_reads_fits_the_budget(server):
    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools

    tools = asyncio.run(go())
    listed = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools
    ]
    size = len(json.dumps(listed, separators=(",", ":")))
    assert len(tools) == 25 and size <= BUDGET, f"{size} characters for {len(tools)} tools"
    assert not any("title" in t.input_schema for t in tools)
    assert all(
        "title" not in p for t in tools for p in t.input_schema.get("properties", {}).values()
    )


def test_a_lean_schema_keeps_names_defaults_and_descriptions():
    schema = {
        "title": "fArguments",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string", "description": "d", "default": "x"},
            "kind": {"anyOf": [{"title": "A", "const": "a"}], "default": {"title": "kept"}},
        },
        "$defs": {"Inner": {"title": "Inner", "type": "object"}},
        "required": ["title"],
    }
    assert lean_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "d", "default": "x"},
            "kind": {"anyOf": [{"const": "a"}], "default": {"title": "kept"}},
        },
        "$defs": {"Inner": {"type": "object"}},
        "required": ["title"],
    }


def test_arguments_are_still_validated_after_the_titles_go(server):
    from ._client import call, err

    (result,) = call(server, ("resume_previous_session", {"limit": 0}))
    assert "between 1 and 100" in err(result)


def test_an_optional_argument_is_one_type_list():
    optional = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert lean_schema(optional) == {"type": ["string", "null"], "default": None}
    bounded = {"anyOf": [{"type": "string", "maxLength": 8}, {"type": "null"}]}
    assert lean_schema(bounded) == bounded  # a member that says more than its type stays
    assert lean_schema({"anyOf": [{"type": "integer"}]}) == {"anyOf": [{"type": "integer"}]}
