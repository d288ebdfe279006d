"""An OTLP/HTTP trace receiver on loopback, and the spans it got, decoded with OpenTelemetry's
own protobuf types (the ``collector`` fixture in ``tests/conftest.py`` starts one)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Receiver(BaseHTTPRequestHandler):
    requests: list[tuple[str, bytes]]

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.requests.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def receiving() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A receiver on a free loopback port: its endpoint and the (path, body) of each request."""
    received: list[tuple[str, bytes]] = []
    handler = type("Handler", (_Receiver,), {"requests": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", received
    finally:
        server.shutdown()
        server.server_close()


def spans(received: list[tuple[str, bytes]], service: str = "noetic-test") -> list[Any]:
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    out = []
    for path, body in received:
        assert path == "/v1/traces"
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            names = {a.key: a.value.string_value for a in resource.resource.attributes}
            assert names["service.name"] == service
            for scope in resource.scope_spans:
                out.extend(scope.spans)
    return out


def attributes(item: Any) -> dict[str, Any]:
    """A span's (or a span event's) attributes as plain values."""
    found: dict[str, Any] = {}
    for a in item.attributes:
        value = a.value
        kind = value.WhichOneof("value")
        found[a.key] = (
            [v.string_value for v in value.array_value.values]
            if kind == "array_value"
            else getattr(value, kind)
        )
    return found
