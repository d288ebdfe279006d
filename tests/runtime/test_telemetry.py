"""OpenTelemetry out: a CASCADE run on scripted replies, exported as OTLP/HTTP traces to a
receiver on loopback, decoded with OpenTelemetry's own protobuf types; and nothing imported
or sent when the endpoint is not set."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from noetic.cascade.engine import RunStatus, run_cascade
from noetic.events import EventKind
from noetic.llm.scripted import ScriptedProvider
from noetic.profiles import ProfileRegistry
from noetic.runtime import telemetry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.tools.discovery import discover

from ..cascade.test_engine import call, scores, step, think


class _Receiver(BaseHTTPRequestHandler):
    requests: list[tuple[str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.requests.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector(monkeypatch) -> Iterator[list[tuple[str, bytes]]]:
    """An OTLP/HTTP receiver on a free loopback port, and the endpoint pointed at it."""
    received: list[tuple[str, bytes]] = []
    handler = type("Handler", (_Receiver,), {"requests": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "noetic-test")
    monkeypatch.setattr(telemetry, "_PROVIDER", None)
    try:
        yield received
    finally:
        if telemetry._PROVIDER is not None:
            telemetry._PROVIDER.shutdown()
        server.shutdown()
        server.server_close()


def spans(received: list[tuple[str, bytes]]) -> list[Any]:
    out = []
    for path, body in received:
        assert path == "/v1/traces"
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            service = {a.key: a.value.string_value for a in resource.resource.attributes}
            assert service["service.name"] == "noetic-test"
            for scope in resource.scope_spans:
                out.extend(scope.spans)
    return out


def attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for a in span.attributes:
        value = a.value
        kind = value.WhichOneof("value")
        found[a.key] = (
            list(v.string_value for v in value.array_value.values)
            if kind == "array_value"
            else getattr(value, kind)
        )
    return found


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
    [root] = [s for s in found if s.name == "noetic.run cascade"]
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
