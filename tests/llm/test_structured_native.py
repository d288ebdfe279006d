"""Native structured output: the schema on the wire, and the fallback when an endpoint refuses."""

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from noetic.llm.base import Request
from noetic.llm.openai_compat import response_format, strict_allowed
from noetic.llm.resilience import ResilientProvider, RetryPolicy
from noetic.llm.structured import complete_structured, instruction_for
from noetic.store.llm_calls import llm_calls, record_llm_call

from .conftest import make_anthropic, make_openai
from .model_server import reply, running, structured


class Verdict(BaseModel):
    answer: str
    confidence: float


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str


def run(coro):
    return asyncio.run(coro)


@pytest.mark.slow
def test_the_schema_travels_natively_and_one_call_suffices(provider, model_server):
    model_server.enqueue(structured({"answer": "yes", "confidence": 0.7}))
    result = run(complete_structured(provider, Request.of("q", system="be careful"), Verdict))
    assert result == Verdict(answer="yes", confidence=0.7)
    assert len(model_server.requests) == 1 and model_server.refused == []
    body = model_server.requests[0]
    schema = Verdict.model_json_schema()
    if provider.name == "anthropic":
        assert body["tools"] == [
            {"name": "reply", "description": body["tools"][0]["description"],
             "input_schema": schema}
        ]  # fmt: skip
        assert body["tool_choice"] == {"type": "tool", "name": "reply"}
        assert body["system"] == "be careful"
    else:
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "Verdict", "schema": schema, "strict": False},
        }
        assert body["messages"][0] == {"role": "system", "content": "be careful"}


@pytest.mark.slow
def test_a_native_reply_reports_how_it_was_honoured(provider, model_server):
    model_server.enqueue(structured({"answer": "no", "confidence": 0.1}))
    schema = Verdict.model_json_schema()
    done = run(provider.complete(Request.of("q", json_schema=schema)))
    assert done.structured == "native" and done.note is None and done.stop_reason == "end"
    assert Verdict.model_validate_json(done.text).answer == "no"


@pytest.mark.slow
@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_a_refusing_endpoint_falls_back_once_per_process_and_it_is_recorded(wire, store):
    with running(schema_mode="reject") as server:
        inner = make_anthropic(server) if wire == "anthropic" else make_openai(server)
        model = ResilientProvider(
            inner, RetryPolicy(max_attempts=2), record=lambda c: record_llm_call(store, c)
        )
        server.enqueue(
            reply('{"answer": "first", "confidence": 0.5}'),
            reply('{"answer": "second", "confidence": 0.6}'),
        )
        assert run(complete_structured(model, Request.of("q"), Verdict)).answer == "first"
        assert run(complete_structured(model, Request.of("q"), Verdict)).answer == "second"
        bodies = server.requests
        # one 400, then every request carries the schema as an instruction instead
        assert len(bodies) == 3
        field = "tools" if wire == "anthropic" else "response_format"
        assert field in bodies[0] and all(field not in b for b in bodies[1:])
        instruction = instruction_for(Verdict.model_json_schema())
        for body in bodies[1:]:
            system = body["system"] if wire == "anthropic" else body["messages"][0]["content"]
            assert system == instruction
    rows = llm_calls(store)
    assert [r.outcome for r in rows] == ["ok", "ok"]
    assert "refused" in rows[0].note and field in rows[0].note
    assert rows[1].note is None


@pytest.mark.parametrize(
    "first",
    ["Yes, I am fairly sure.", '{"verdict": "yes"}'],  # prose; an object of the wrong shape
)
@pytest.mark.slow
def test_a_server_ignoring_the_schema_is_repaired_with_it_and_remembered(first, store):
    with running(schema_mode="ignore") as server:
        model = ResilientProvider(
            make_openai(server), RetryPolicy(max_attempts=1),
            record=lambda c: record_llm_call(store, c),
        )  # fmt: skip
        server.enqueue(
            reply(first),
            reply('{"answer": "yes", "confidence": 0.9}'),
            reply('{"answer": "again", "confidence": 0.5}'),
        )
        result = run(complete_structured(model, Request.of("q"), Verdict))
        assert result.confidence == 0.9
        first_body, repair = server.requests[:2]
        assert "response_format" in first_body
        # The repair round carries the schema: in its own message and, now that the endpoint
        # is known to ignore the field, in the prompt instead of response_format.
        schema = json.dumps(Verdict.model_json_schema(), separators=(",", ":"))
        assert schema in repair["messages"][-1]["content"]
        assert "response_format" not in repair
        assert repair["messages"][0]["content"] == instruction_for(Verdict.model_json_schema())
        # Remembered for the life of the process: the next request goes the prompt's way at once.
        assert run(complete_structured(model, Request.of("q"), Verdict)).answer == "again"
        later = server.requests[2]
        assert "response_format" not in later and len(server.requests) == 3
    rows = llm_calls(store)
    assert "ignored response_format" in rows[0].note and "from now on" in rows[0].note
    assert [r.note for r in rows[1:]] == [None, None]


@pytest.mark.slow
def test_an_honouring_server_is_not_taken_for_one_that_ignores(openai_provider, model_server):
    from noetic.llm.openai_compat import NO_NATIVE_SCHEMA

    model_server.enqueue(structured({"answer": "yes", "confidence": 0.7}))
    done = run(openai_provider.complete(Request.of("q", json_schema=Verdict.model_json_schema())))
    assert done.note is None and NO_NATIVE_SCHEMA.allows(openai_provider.endpoint)


@pytest.mark.slow
def test_a_400_about_something_else_is_not_a_fallback(openai_provider, model_server):
    from noetic.errors import ProviderError

    from .model_server import error

    model_server.enqueue(error(400, text="max_tokens is too large"))
    with pytest.raises(ProviderError, match="max_tokens"):
        run(complete_structured(openai_provider, Request.of("q"), Verdict))
    assert len(model_server.requests) == 1


def test_a_provider_without_native_schema_gets_the_instruction():
    from noetic.llm.scripted import ScriptedProvider

    script = ScriptedProvider(['{"answer": "a", "confidence": 1}'])
    run(complete_structured(script, Request.of("q", system="sys"), Verdict))
    assert script.calls[0].system == "sys\n\n" + instruction_for(Verdict.model_json_schema())
    assert script.calls[0].json_schema == Verdict.model_json_schema()


def test_strict_only_where_the_schema_allows_it():
    assert not strict_allowed(Verdict.model_json_schema())  # properties not closed
    closed = Closed.model_json_schema()
    assert strict_allowed(closed)
    assert response_format(closed)["json_schema"]["strict"] is True
    nested = {
        "type": "object",
        "properties": {"inner": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "required": ["inner"],
        "additionalProperties": False,
    }
    assert not strict_allowed(nested)  # the inner object is open


@given(st.text(max_size=80))
def test_the_schema_name_always_fits_the_wire(title):
    name = response_format({"type": "object", "title": title})["json_schema"]["name"]
    assert 1 <= len(name) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)


@pytest.mark.slow
def test_assessments_travel_with_their_schema_natively(provider, model_server):
    from noetic.assessment import Phase
    from noetic.llm.assessment_reply import assess_with_model, reply_schema
    from noetic.vectors import VECTOR_NAMES

    vectors = {v: {"score": 0.7, "rationale": "fine"} for v in VECTOR_NAMES}
    vectors["engagement"]["score"] = vectors["coherence"]["score"] = 0.9
    model_server.enqueue(structured({"vectors": vectors, "recommended_action": "PROCEED"}))
    assessment = run(assess_with_model(provider, "tidy the docs", "preflight"))
    assert assessment.vectors["know"] == 0.7 and len(model_server.requests) == 1
    body = model_server.requests[0]
    schema = reply_schema(Phase.PREFLIGHT)
    assert schema["properties"]["vectors"]["required"] == list(VECTOR_NAMES)
    assert reply_schema(Phase.CHECK)["properties"]["vectors"]["required"] == []
    if provider.name == "anthropic":
        assert body["tools"][0]["input_schema"] == schema
    else:
        assert body["response_format"]["json_schema"]["name"] == "assessment"
        assert body["response_format"]["json_schema"]["schema"] == schema
