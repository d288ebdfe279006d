"""OpenTelemetry out: a CASCADE run on scripted replies, exported as OTLP/HTTP traces to a
receiver on loopback, decoded with OpenTelemetry's own protobuf types; and nothing imported
or sent when the endpoint is not set."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from noetic.cascade.engine import RunStatus, run_cascade
from noetic.events import EventKind
from noetic.llm.scripted import ScriptedProvider
from noetic.profiles import ProfileRegistry
from noetic.runtime import telemetry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.tools.discovery import discover

from .._otlp import attributes, spans
from ..cascade.test_engine import call, scores, step, think
from ..conftest import free_port


@pytest.mark.subprocess
def test_a_cascade_run_is_exported_as_a_trace_of_its_phases_tools_and_model_calls(
    collector, store, tmp_path
):
    (tmp_path / "app.py").write_text("def parse(x):\n    return int(x)\n")
    tracker = Tracker(store, ProfileRegistry(store.home / "profiles"))
    session, _ = tracker.bootstrap(ai_id="m", profile="balanced")
    replies = [
        scores(0.5), think(), step(call("read_file", path="app.py")), scores(0.9),
        "Guard the empty string.", scores(0.9),
    ]  # fmt: skip
    provider = ScriptedProvider(replies, native_tools=False)
    ctx = build_context(
        "cascade", tracker=tracker, provider=provider, session_id=session.id,
        tools=discover(tmp_path),
    )  # fmt: skip
    run = asyncio.run(run_cascade(ctx, "fix the parser"))
    assert run.status is RunStatus.COMPLETED
    assert telemetry.flush()
    found = spans(collector)
    by_id = {s.span_id: s for s in found}
    [root] = [s for s in found if s.name == "invoke_agent cascade"]
    assert attributes(root)["gen_ai.operation.name"] == "invoke_agent"
    assert attributes(root)["noetic.cascade_id"] == run.cascade_id
    assert attributes(root)["noetic.status"] == "completed"
    assert all(s.trace_id == root.trace_id for s in found)
    phases = [s for s in found if s.name.startswith("phase ")]
    assert {s.name for s in phases} >= {"phase PREFLIGHT", "phase THINK", "phase POSTFLIGHT"}
    assert all(by_id[s.parent_span_id] is root for s in phases)
    [tool] = [s for s in found if s.name == "execute_tool read_file"]
    assert attributes(tool)["gen_ai.tool.name"] == "read_file"
    assert by_id[tool.parent_span_id].name.startswith("phase ")  # inside the phase it ran in
    chats = [s for s in found if s.name.startswith("chat ")]
    assert len(chats) == len(provider.calls) == len(replies)
    first = attributes(chats[0])
    assert first["gen_ai.operation.name"] == "chat"
    assert {c.kind for c in chats} == {Span.SPAN_KIND_CLIENT}
    assert {s.kind for s in found if s not in chats} == {Span.SPAN_KIND_INTERNAL}
    reasons = {r for c in chats for r in attributes(c).get("gen_ai.response.finish_reasons", [])}
    assert reasons and reasons <= {"stop", "tool_calls", "length", "content_filter"}, reasons
    recorded = store.events(session_id=session.id, kind=EventKind.LLM_CALL)[0].data
    assert first["gen_ai.request.model"] == recorded["model"]
    assert first["gen_ai.provider.name"] == recorded["provider"]
    assert first["gen_ai.usage.input_tokens"] == recorded["tokens_in"] > 0
    assert first["gen_ai.usage.output_tokens"] == recorded["tokens_out"] > 0
    for span in found:  # every span ends after it starts, within its run
        assert root.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano
        assert span.end_time_unix_nano <= root.end_time_unix_nano


@pytest.mark.subprocess
def test_nothing_of_opentelemetry_is_imported_when_the_endpoint_is_not_set(tmp_path):
    code = (
        "import sys\n"
        "from noetic.profiles import ProfileRegistry\n"
        "from noetic.runtime.tracker import Tracker\n"
        "from noetic.store import Store\n"
        f"s = Store({str(tmp_path / 's')!r})\n"
        "t = Tracker(s, ProfileRegistry(s.home / 'profiles'))\n"
        "t.bootstrap(ai_id='a', profile='balanced')\n"
        "s.close()\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(done.stdout.strip().replace("'", '"')) == []


@pytest.mark.subprocess
def test_a_collector_that_is_down_costs_one_line_and_no_tracebacks():
    """Nothing listens on the endpoint: the spans are dropped after one try, with one line on
    stderr naming where they were going, not the exporter's retries and tracebacks."""
    code = (
        "from noetic.runtime import telemetry\n"
        "tracer = telemetry.tracer()\n"
        "for i in range(3):\n"
        "    tracer.start_span(f's{i}').end()\n"
        "telemetry.flush()\n"
    )
    endpoint = f"http://127.0.0.1:{free_port()}"
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    env.pop("OTEL_EXPORTER_OTLP_TIMEOUT", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines == [f"noetic: 3 trace span(s) not sent to {endpoint}/v1/traces: it did not "
                     "answer or refused them"], done.stderr  # fmt: skip
