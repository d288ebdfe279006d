"""Long tools report progress to a client that gives a progress token: a real MCP client, the
client's own model by sampling, and the loopback model server for Nova."""

import asyncio

import pytest

from mcp import Client

from ..llm.model_server import reply, running
from ..nova.test_cli import ANY_TURN
from ._client import host_model, ok

SCORES = (
    '{"vectors": {"engagement": 0.9, "know": 0.9, "do": 0.9, "context": 0.9, "clarity": 0.9, '
    '"coherence": 0.9, "signal": 0.9, "density": 0.1, "state": 0.9, "change": 0.9, '
    '"completion": 0.9, "impact": 0.9, "uncertainty": 0.1}}'
)


def _call(server, tool, args, *, progress=True, **client_kw):
    """Call ``tool``; return its result and the progress notifications received."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value, total, message):
        seen.append((value, total, message))

    async def go():
        async with Client(server, **client_kw) as client:
            return await client.call_tool(
                tool, args, progress_callback=on_progress if progress else None
            )

    return asyncio.run(go()), seen


def _rising(seen):
    values = [v for v, _, _ in seen]
    return values == sorted(values) and len(set(values)) == len(values)


def test_observe_reports_each_stage(server):
    sampler = host_model(
        "CONFIDENCE: 0.7\nLAYERS: C02,C07,C10\nCONTENT: thinking",
        "CONFIDENCE: 0.96\nLAYERS: C02\nCONTENT: crystallized",
    )
    result, seen = _call(server, "observe", {"query": "why?"}, sampling_callback=sampler,
                         mode="legacy")  # fmt: skip
    assert ok(result)["stages"] == 2
    messages = [m for _, _, m in seen]
    assert messages[:2] == [
        "observer: OBSERVE stage 1 Explorer",
        "observer: OBSERVE stage 2 Refiner",
    ]
    assert messages[-1].startswith("observer: finished") and _rising(seen)


@pytest.mark.subprocess
def test_create_cascade_reports_its_phases(server):
    plan = '{"approach": "answer directly", "strategy": "general", "complex": false}'
    result, seen = _call(
        server, "create_cascade", {"task": "say hi"},
        sampling_callback=host_model(SCORES, plan, "The answer.", SCORES), mode="legacy",
    )  # fmt: skip
    assert ok(result)["status"] == "completed"
    phases = [m.split(": ", 1)[1] for _, _, m in seen]
    assert phases[:2] == ["PREFLIGHT", "THINK"] and "ACT" in phases and "POSTFLIGHT" in phases
    assert _rising(seen)


@pytest.mark.subprocess
def test_nova_process_reports_every_turn(server):
    with running() as models:
        models.default = reply(ANY_TURN)
        spec = f"openai-compatible:{models.url}/v1#m"
        result, seen = _call(server, "nova_process", {"question": "OAuth2?", "provider": spec})
    body = ok(result)
    assert body["status"] == "completed"
    assert len(seen) >= len(body["turns"]) and _rising(seen)
    assert any("NOVA_UNPACK" in m for _, _, m in seen)


def test_no_progress_token_no_notifications_and_the_same_result(server):
    sampler = host_model("CONFIDENCE: 0.96\nLAYERS: C02\nCONTENT: sure")
    result, seen = _call(server, "observe", {"query": "why?"}, progress=False,
                         sampling_callback=sampler, mode="legacy")  # fmt: skip
    assert ok(result)["answer"] == "sure" and seen == []
