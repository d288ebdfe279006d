"""Native tool calls through the real SDK clients, in both wire formats."""

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError as PydanticValidationError

from noetic.errors import ProviderError
from noetic.llm.base import (
    Message,
    Request,
    ToolCall,
    ToolCallResult,
    ToolSpec,
    parse_tool_call,
    supports_tools,
)
from noetic.llm.resilience import ResilientProvider
from noetic.llm.scripted import ScriptedProvider, calling

from .model_server import calls, reply

READ = ToolSpec(
    name="read_file",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
GREP = ToolSpec(
    name="grep",
    description="Search files",
    parameters={"type": "object", "properties": {"pattern": {"type": "string"}}},
)


def run(coro):
    return asyncio.run(coro)


@pytest.mark.slow
def test_tool_definitions_and_choice_in_each_wire_format(provider, model_server):
    model_server.enqueue(reply("no tools needed"))
    request = Request.of("look", tools=(READ, GREP), tool_choice="grep")
    result = run(provider.complete(request))
    assert result.tool_calls == () and result.stop_reason == "end"
    body = model_server.requests[0]
    assert model_server.refused == []
    if provider.name == "anthropic":
        assert body["tools"][0] == {
            "name": "read_file",
            "description": "Read a file",
            "input_schema": READ.parameters,
        }
        assert body["tool_choice"] == {"type": "tool", "name": "grep"}
    else:
        assert body["tools"][1]["function"] == {
            "name": "grep",
            "description": "Search files",
            "parameters": GREP.parameters,
        }
        assert body["tool_choice"] == {"type": "function", "function": {"name": "grep"}}


@pytest.mark.parametrize(
    ("choice", "anthropic", "openai"),
    [("auto", {"type": "auto"}, "auto"), ("required", {"type": "any"}, "required")],
)
@pytest.mark.slow
def test_tool_choice_words(
    anthropic_provider, openai_provider, model_server, choice, anthropic, openai
):
    model_server.enqueue(reply("a"), reply("b"))
    request = Request.of("look", tools=(READ,), tool_choice=choice)
    run(anthropic_provider.complete(request))
    run(openai_provider.complete(request))
    assert model_server.requests[0]["tool_choice"] == anthropic
    assert model_server.requests[1]["tool_choice"] == openai


@pytest.mark.slow
def test_parallel_tool_calls_and_their_results_round_trip(provider, model_server):
    model_server.enqueue(
        calls(("c1", "read_file", {"path": "a.py"}), ("c2", "grep", {"pattern": "TODO"}),
              text="Let me look."),
        reply("a.py has two TODOs."),
    )  # fmt: skip
    first = Request.of("What is left to do in a.py?", tools=(READ, GREP))
    result = run(provider.complete(first))
    assert result.stop_reason == "tool_use"
    assert [(c.id, c.name, c.arguments, c.error) for c in result.tool_calls] == [
        ("c1", "read_file", {"path": "a.py"}, None),
        ("c2", "grep", {"pattern": "TODO"}, None),
    ]
    assert result.text == "Let me look."
    follow = first.model_copy(
        update={
            "messages": (
                *first.messages,
                result.message(),
                Message.results(
                    ToolCallResult(call_id="c1", content="# TODO one\n# TODO two"),
                    ToolCallResult(call_id="c2", content="no such directory", is_error=True),
                ),
            )
        }
    )
    final = run(provider.complete(follow))
    assert final.text == "a.py has two TODOs." and final.stop_reason == "end"
    assert model_server.refused == []
    sent = model_server.requests[1]["messages"]
    if provider.name == "anthropic":
        assert sent[1]["content"][1] == {
            "type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.py"}
        }  # fmt: skip
        assert sent[2]["content"] == [
            {"type": "tool_result", "tool_use_id": "c1", "content": "# TODO one\n# TODO two"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "no such directory",
             "is_error": True},
        ]  # fmt: skip
    else:
        assert sent[1]["tool_calls"][1]["function"] == {
            "name": "grep", "arguments": json.dumps({"pattern": "TODO"})
        }  # fmt: skip
        assert sent[2] == {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "# TODO one\n# TODO two",
        }
        assert sent[3] == {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "error: no such directory",
        }


@pytest.mark.slow
def test_a_result_for_no_call_is_refused_by_the_server(provider, model_server):
    request = Request(
        messages=(
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=(ToolCall(id="c1", name="grep", arguments={}),)),
            Message.results(ToolCallResult(call_id="c9", content="?")),
        ),
        tools=(GREP,),
    )
    with pytest.raises(ProviderError) as info:
        run(provider.complete(request))
    assert info.value.status == 400 and "c9" in info.value.message


@pytest.mark.slow
def test_malformed_and_unknown_tool_calls_come_back_with_the_problem(openai_provider, model_server):
    model_server.enqueue(
        calls(("c1", "read_file", '{"path": "a.py"'), ("c2", "delete_all", {}),
              ("c3", "grep", "[1, 2]")),
    )  # fmt: skip
    result = run(openai_provider.complete(Request.of("go", tools=(READ, GREP))))
    first, second, third = result.tool_calls
    assert first.arguments == {} and "not valid JSON" in first.error
    assert "no tool 'delete_all'" in second.error and "read_file, grep" in second.error
    assert third.error == "the arguments must be a JSON object, not list"


def test_request_rules():
    with pytest.raises(PydanticValidationError, match="not 'auto'"):
        Request.of("x", tools=(READ,), tool_choice="write_file")
    with pytest.raises(PydanticValidationError, match="offered twice"):
        Request.of("x", tools=(READ, READ))
    with pytest.raises(PydanticValidationError, match="with no tools offered"):
        Request.of("x", tool_choice="required")
    with pytest.raises(PydanticValidationError):
        ToolSpec(name="fs.read", description="dots are not allowed on either wire")
    with pytest.raises(PydanticValidationError, match="only an assistant"):
        Message(role="user", tool_calls=(ToolCall(id="c", name="grep"),))
    with pytest.raises(PydanticValidationError, match="only a user"):
        Message(role="assistant", tool_results=(ToolCallResult(call_id="c", content=""),))


@given(st.text(max_size=300))
def test_tool_arguments_never_raise(raw):
    call = parse_tool_call("c", "grep", raw, (GREP,))
    if call.error is None:
        assert call.arguments == json.loads(raw.strip() or "{}")
    else:
        assert call.arguments == {}


@given(st.dictionaries(st.text(max_size=10), st.integers() | st.text(max_size=10), max_size=5))
def test_tool_arguments_round_trip(args):
    assert parse_tool_call("c", "grep", json.dumps(args), (GREP,)).arguments == args


def test_deeply_nested_arguments_are_refused_with_a_reason():
    call = parse_tool_call("c", "grep", "[" * 5000 + "]" * 5000, (GREP,))
    assert call.arguments == {} and call.error


def test_the_scripted_provider_checks_tool_calls_like_an_adapter():
    script = ScriptedProvider(
        [calling(("grep", {"pattern": "x"}), ("rm", {})), calling(("grep", '{"pattern": ')),
         calling(("grep", {}))],
    )  # fmt: skip
    result = run(script.complete(Request.of("go", tools=(GREP,))))
    assert result.stop_reason == "tool_use" and result.provider == "scripted"
    assert result.tool_calls[0].error is None and result.tool_calls[0].id == "call_1"
    assert "no tool 'rm'" in result.tool_calls[1].error
    assert (
        "not valid JSON"
        in run(script.complete(Request.of("go", tools=(GREP,)))).tool_calls[0].error
    )
    with pytest.raises(ProviderError, match="offered no tools"):
        run(script.complete(Request.of("go")))


def test_a_provider_without_native_tools_refuses_them():
    plain = ScriptedProvider(["fine"], native_tools=False)
    assert not supports_tools(plain) and not supports_tools(ResilientProvider(plain))
    with pytest.raises(ProviderError) as info:
        run(plain.complete(Request.of("go", tools=(GREP,))))
    assert info.value.kind == "unsupported"
    assert supports_tools(ResilientProvider(ScriptedProvider([])))


@pytest.mark.slow
def test_an_endpoint_refusing_tools_stops_being_native(openai_provider, model_server):
    model_server.reject_tools = True
    model_server.enqueue(reply("plain"))
    assert supports_tools(openai_provider)
    with pytest.raises(ProviderError) as info:
        run(openai_provider.complete(Request.of("go", tools=(GREP,))))
    assert info.value.kind == "unsupported" and "--enable-auto-tool-choice" in info.value.fix
    assert not supports_tools(openai_provider)
    assert not supports_tools(ResilientProvider(openai_provider))
    assert run(openai_provider.complete(Request.of("go"))).text == "plain"


def test_argument_keys_given_twice_or_as_broken_text_are_refused():
    assert "give the key 'a' twice" in parse_tool_call("c", "grep", '{"a": 1, "a": 2}', ()).error
    assert parse_tool_call("c", "grep", '{"a": 1, "A": 2}', ()).arguments == {"a": 1, "A": 2}
    assert "lone surrogate" in parse_tool_call("c", "grep", '{"a": "\\ud800"}', ()).error
    assert "number" in parse_tool_call("c", "grep", '{"a": ' + "9" * 500 + "}", ()).error
