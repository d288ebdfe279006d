"""A loopback stand-in for the Anthropic Messages API that accepts whatever a client sends,
records each request body, and answers with one short text reply (streamed when asked).

Given ``tool_calls``, the agent's main requests (those offering a ``Bash`` tool) are answered
first with those tool calls, one per request, in order; every other request, and the main
requests after them, get the text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Stub:
    def __init__(self, text: str, tool_calls: list[dict[str, Any]] | None = None) -> None:
        self.text = text
        self.tool_calls = list(tool_calls or [])
        self.requests: list[dict[str, Any]] = []
        self.url = ""

    def next_call(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The tool call to answer ``body`` with, if it is a main request and one is left."""
        tools = body.get("tools") or []
        offered = any(isinstance(t, dict) and t.get("name") == "Bash" for t in tools)
        if not offered or not self.tool_calls:
            return None
        return self.tool_calls.pop(0)

    def reply(self, model: str, call: dict[str, Any] | None = None) -> dict[str, Any]:
        if call is None:
            content: list[dict[str, Any]] = [{"type": "text", "text": self.text}]
            stop = "end_turn"
        else:
            content = [{"type": "tool_use", "id": call["id"], "name": call["name"],
                        "input": call["input"]}]  # fmt: skip
            stop = "tool_use"
        return {
            "id": "msg_stub",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def events(
        self, model: str, call: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        start = {**self.reply(model), "content": [], "stop_reason": None}
        yield "message_start", {"type": "message_start", "message": start}
        if call is None:
            block: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": self.text}
        else:
            block = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        yield (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": delta},
        )
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "end_turn" if call is None else "tool_use",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": 5},
            },
        )
        yield "message_stop", {"type": "message_stop"}


@contextmanager
def running(
    text: str = "Hello from the stub.", tool_calls: list[dict[str, Any]] | None = None
) -> Iterator[Stub]:
    stub = Stub(text, tool_calls)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._json(200, {"data": [], "has_more": False})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                self._json(200, {"input_tokens": 10})
                return
            if not path.endswith("/messages"):
                self._json(404, {"type": "error", "error": {"type": "not_found_error"}})
                return
            stub.requests.append(body)
            model = str(body.get("model", "claude-stub"))
            call = stub.next_call(body)
            if not body.get("stream"):
                self._json(200, stub.reply(model, call))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            for event, data in stub.events(model, call):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
