"""Tools through MCP sampling: a real MCP client and server session, with and without the
client's ``sampling.tools`` capability."""

import asyncio

import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    CreateMessageResult,
    CreateMessageResultWithTools,
    SamplingCapability,
    SamplingToolsCapability,
    TextContent,
    ToolUseContent,
)

from mcp import Client
from noetic.llm.base import Message, Request, ToolCall, ToolCallResult, ToolSpec
from noetic.llm.sampling import SamplingProvider

GREP = ToolSpec(
    name="grep",
    description="Search the code",
    parameters={"type": "object", "properties": {"pattern": {"type": "string"}}},
)
READ = ToolSpec(name="read_file", parameters={"type": "object", "properties": {}})


def serve(requests):
    """An MCP server whose one tool sends each request through sampling; what came back (or
    the error) is the tool's answer, and the provider itself is kept for inspection."""
    app = MCPServer("sampling-test")
    seen = {}

    @app.tool()
    async def ask(ctx: Context) -> str:
        provider = SamplingProvider(ctx.session, model="host", related_request_id=ctx.request_id)
        seen["provider"] = provider
        out = []
        for request in requests:
            try:
                done = await provider.complete(request)
            except Exception as exc:
                out.append(f"{type(exc).__name__}: {exc}")
                continue
            calls = [(c.id, c.name, c.arguments, c.error) for c in done.tool_calls]
            out.append(repr((done.text, calls, done.stop_reason)))
        return "\n".join(out)

    return app, seen


def run_client(app, sampler, **kw):
    async def go():
        async with Client(app, sampling_callback=sampler, mode="legacy", **kw) as client:
            result = await client.call_tool("ask", {})
            return result.content[0].text

    return asyncio.run(go())


def test_tools_and_results_travel_when_the_client_declares_them():
    params = []

    async def sampler(context, p):
        params.append(p)
        if len(params) == 1:
            return CreateMessageResultWithTools(
                role="assistant",
                content=[
                    TextContent(type="text", text="Looking."),
                    ToolUseContent(type="tool_use", id="u1", name="grep", input={"pattern": "x"}),
                    ToolUseContent(type="tool_use", id="u2", name="rm", input={}),
                ],
                model="host",
                stop_reason="toolUse",
            )
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="Found it."), model="host"
        )

    first = Request.of("find x", tools=(GREP, READ), tool_choice="grep")
    follow = Request(
        messages=(
            *first.messages,
            Message(role="assistant", content="Looking.",
                    tool_calls=(ToolCall(id="u1", name="grep", arguments={"pattern": "x"}),)),
            Message.results(ToolCallResult(call_id="u1", content="a.py:3", is_error=False),
                            text="Anything else?"),
        ),
        tools=(GREP,),
    )  # fmt: skip
    app, seen = serve([first, follow])
    answer = run_client(
        app, sampler, sampling_capabilities=SamplingCapability(tools=SamplingToolsCapability())
    )
    assert seen["provider"].native_tools
    lines = answer.splitlines()
    assert lines[0] == repr(
        (
            "Looking.",
            [("u1", "grep", {"pattern": "x"}, None),
             ("u2", "rm", {}, "there is no tool 'rm'; the tools are: grep, read_file")],
            "tool_use",
        )
    )  # fmt: skip
    assert lines[1] == repr(("Found it.", [], "end"))
    # a named tool choice: only that tool, required
    assert [t.name for t in params[0].tools] == ["grep"]
    assert params[0].tool_choice.mode == "required"
    assert params[0].tools[0].input_schema == GREP.parameters
    # the follow-up: tool_use in the assistant turn, the result alone, then the text
    sent = params[1].messages
    assert [b.type for b in sent[1].content_as_list] == ["text", "tool_use"]
    (result,) = sent[2].content_as_list
    assert (result.type, result.tool_use_id, result.content[0].text) == ("tool_result", "u1",
                                                                           "a.py:3")  # fmt: skip
    assert sent[3].content.text == "Anything else?"
    assert params[1].tool_choice is None


def test_without_the_capability_tools_are_refused_clearly_and_text_still_works():
    async def sampler(context, p):
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="plain"), model="host"
        )

    app, seen = serve([Request.of("go", tools=(GREP,)), Request.of("go")])
    lines = run_client(app, sampler).splitlines()
    assert not seen["provider"].native_tools
    assert lines[0].startswith("ProviderError: the MCP client did not declare the sampling.tools")
    assert lines[1] == repr(("plain", [], "end"))


@pytest.mark.parametrize("choice", ["auto", "none", None])
def test_tool_choice_words_pass_through(choice):
    modes = []

    async def sampler(context, p):
        modes.append(p.tool_choice.mode if p.tool_choice else None)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="ok"), model="host"
        )

    app, _ = serve([Request.of("go", tools=(GREP, READ), tool_choice=choice)])
    run_client(
        app, sampler, sampling_capabilities=SamplingCapability(tools=SamplingToolsCapability())
    )
    assert modes == [choice]
