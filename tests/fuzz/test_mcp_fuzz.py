"""Every MCP tool, called through the real client with arbitrary JSON arguments.

A call either succeeds or returns a tool error with a message (a Noetic error, or the SDK's
report that the arguments do not match the schema) — never a crash, which the SDK reports as
the bare ``Error executing tool NAME`` — and the server answers the next call."""

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp import Client
from noetic.mcp.server import build_server

FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.text(max_size=16),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@pytest.fixture
def tools(_isolated_home):
    server = build_server(_isolated_home)

    async def listing():
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            return {t.name: list(t.input_schema.get("properties", {})) for t in listed}

    return server, asyncio.run(listing())


@st.composite
def calls(draw, names):
    name = draw(st.sampled_from(sorted(names)))
    params = names[name]
    args = {}
    for param in params:
        if draw(st.booleans()):
            args[param] = draw(json_values)
    if draw(st.integers(0, 5)) == 0:
        args[draw(st.text(max_size=8))] = draw(json_values)
    return name, args


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_arbitrary_arguments_never_crash_a_tool(tools, data):
    server, names = tools
    steps = data.draw(st.lists(calls(names), min_size=1, max_size=3))

    async def go():
        async with Client(server) as client:
            results = [(name, await client.call_tool(name, args)) for name, args in steps]
            alive = await client.call_tool("get_workflow_guidance", {})
            return results, alive

    results, alive = asyncio.run(go())
    for name, result in results:
        if result.is_error:
            text = result.content[0].text
            assert text.strip() != f"Error executing tool {name}", (name, steps)
            assert text
    assert not alive.is_error
