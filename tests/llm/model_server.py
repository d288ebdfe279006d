"""A local HTTP server speaking the Anthropic Messages and OpenAI Chat Completions wire formats.

Tests queue *behaviours* (a reply, an HTTP error, a hang, a truncated body); each request takes
the next one. It binds 127.0.0.1 on a free port and records every request body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    text: str = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False
    input_tokens: int = 11
    output_tokens: int = 7


def reply(text: str, **kw: Any) -> Behaviour:
    return Behaviour(text=text, **kw)


def error(status: int, **kw: Any) -> Behaviour:
    return Behaviour(status=status, **kw)


def hang(seconds: float) -> Behaviour:
    return Behaviour(delay=seconds)


def truncated() -> Behaviour:
    return Behaviour(truncate=True)


class ModelServer:
    def __init__(self) -> None:
        self.queue: list[Behaviour] = []
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.default: Behaviour | None = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.paths.append(self.path)
                    behaviour = server.queue.pop(0) if server.queue else server.default
                if behaviour is None:
                    behaviour = error(599, text="the test queued no reply")
                if behaviour.delay:
                    time.sleep(behaviour.delay)
                payload = server._payload(self.path, body, behaviour)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(behaviour.status)
                    self.send_header("content-type", "application/json")
                    for k, v in behaviour.headers.items():
                        self.send_header(k, v)
                    if behaviour.truncate:
                        self.send_header("content-length", str(len(data) + 500))
                        self.end_headers()
                        self.wfile.write(data[: len(data) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.queue.extend(behaviours)

    def _payload(self, path: str, body: dict[str, Any], b: Behaviour) -> dict[str, Any]:
        anthropic = path.endswith("/messages")
        if b.status >= 400:
            if anthropic:
                return {"type": "error", "error": {"type": "api_error", "message": b.text}}
            return {"error": {"message": b.text, "type": "server_error", "code": None}}
        model = body.get("model", "unknown")
        if anthropic:
            return {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": b.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": b.input_tokens, "output_tokens": b.output_tokens},
            }
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": b.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": b.input_tokens,
                "completion_tokens": b.output_tokens,
                "total_tokens": b.input_tokens + b.output_tokens,
            },
        }

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def running() -> Iterator[ModelServer]:
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()
