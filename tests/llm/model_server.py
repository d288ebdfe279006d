"""A local HTTP server speaking the Anthropic Messages and OpenAI Chat Completions wire formats.

Tests queue *behaviours* (a reply, tool calls, an HTTP error, a hang, a truncated body); each
request takes the next one. It binds 127.0.0.1 on a free port and records every request body.

It checks what arrives as the real services do: a request that breaks its wire format's rules
(a tool result answering no call, a call left unanswered, a tool choice naming no offered tool,
a ``response_format`` without a schema, roles out of order…) is answered with HTTP 400 naming
the problem and kept in ``refused``, so a test sees a malformed request fail the way it would
against the service.

A request with ``"stream": true`` is answered over server-sent events in its wire format's
shape (Anthropic's ``message_start`` … ``message_stop`` events; OpenAI's ``chat.completion.chunk``
objects and ``[DONE]``), the text split into one delta per word, ``token_delay`` seconds
apart (a reply that is not streamed waits ``token_delay`` per word before it is sent, as a
model writes it first); ``cut_after`` drops the connection after that many deltas (0: before
the first).

``schema_mode`` is how the server treats native structured output (``response_format`` on the
OpenAI wire, a forced tool on the Anthropic wire): ``honour`` answers with the behaviour's
``structured`` object in the native shape, ``ignore`` answers with ``text`` as a model that was
not held to the schema would, ``reject`` answers HTTP 400 naming the field, as a server that
does not know it does.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass
class Behaviour:
    text: str = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False
    input_tokens: int = 11
    output_tokens: int = 7
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    # (id, name, arguments): a dict, or a string sent as the raw arguments text
    tool_calls: list[tuple[str, str, Any]] = field(default_factory=list)
    structured: dict[str, Any] | None = None
    stop_reason: str | None = None
    token_delay: float = 0.0
    cut_after: int | None = None


def reply(text: str, **kw: Any) -> Behaviour:
    return Behaviour(text=text, **kw)


def calls(*tool_calls: tuple[str, str, Any], text: str = "", **kw: Any) -> Behaviour:
    return Behaviour(text=text, tool_calls=list(tool_calls), **kw)


def structured(value: dict[str, Any], text: str = "here you are", **kw: Any) -> Behaviour:
    """A reply that is ``value`` when the request asks natively, ``text`` otherwise."""
    return Behaviour(text=text, structured=value, **kw)


def error(status: int, **kw: Any) -> Behaviour:
    return Behaviour(status=status, **kw)


def hang(seconds: float) -> Behaviour:
    return Behaviour(delay=seconds)


def truncated() -> Behaviour:
    return Behaviour(truncate=True)


class ModelServer:
    def __init__(self, schema_mode: Literal["honour", "ignore", "reject"] = "honour") -> None:
        self.queue: list[Behaviour] = []
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.refused: list[str] = []
        self.default: Behaviour | None = None
        # answers a request from its body when the queue is empty (a model that replies to
        # what it is asked, for runs that ask many things at once)
        self.responder: Callable[[dict[str, Any]], Behaviour] | None = None
        self.schema_mode = schema_mode
        self.reject_tools = False  # answer a request with tools as a server without tool support
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # chunked bodies for streams, as real services send

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                anthropic = self.path.endswith("/messages")
                problems = anthropic_problems(body) if anthropic else openai_problems(body)
                with server._lock:
                    server.requests.append(body)
                    server.paths.append(self.path)
                    rejection = server._rejection(anthropic, body)
                    behaviour: Behaviour | None
                    if problems:
                        server.refused.append("; ".join(problems))
                        behaviour = error(400, text="; ".join(problems))
                    elif rejection:  # refused before a model saw it: the queue is untouched
                        behaviour = error(400, text=rejection)
                    else:
                        behaviour = server.queue.pop(0) if server.queue else None
                if behaviour is None and server.responder is not None:
                    behaviour = server.responder(body)
                if behaviour is None:
                    behaviour = server.default
                if behaviour is None:
                    behaviour = error(599, text="the test queued no reply")
                if behaviour.delay:
                    time.sleep(behaviour.delay)
                if behaviour.token_delay and not body.get("stream"):
                    # a model writes the whole reply before a non-streamed answer leaves
                    time.sleep(behaviour.token_delay * len(_words(behaviour.text)))
                payload = server._payload(anthropic, body, behaviour)
                if body.get("stream") and behaviour.status < 400:
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        self._stream(anthropic, payload, behaviour)
                    return
                data = json.dumps(payload).encode()
                self.close_connection = True  # one request per connection: no idle pool
                try:
                    self.send_response(behaviour.status)
                    self.send_header("connection", "close")
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

            def _stream(self, anthropic: bool, payload: dict[str, Any], b: Behaviour) -> None:
                self.close_connection = True
                self.send_response(200)
                self.send_header("connection", "close")
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                events = anthropic_events(payload) if anthropic else openai_chunks(payload)
                sent = 0
                for is_delta, event in events:
                    if is_delta:
                        if b.cut_after is not None and sent >= b.cut_after:
                            self.wfile.flush()
                            self.close_connection = True  # no closing chunk: a dropped stream
                            return
                        if b.token_delay:
                            time.sleep(b.token_delay)
                        sent += 1
                    data = event.encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

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

    def _rejection(self, anthropic: bool, body: dict[str, Any]) -> str | None:
        if self.reject_tools and "tools" in body and not anthropic:
            return (
                '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
                "to be set"
            )
        if self.schema_mode != "reject":
            return None
        if anthropic and "tools" in body:
            return "tools: Extra inputs are not permitted"
        if not anthropic and "response_format" in body:
            return "Unrecognized request argument supplied: response_format"
        return None

    def _payload(self, anthropic: bool, body: dict[str, Any], b: Behaviour) -> dict[str, Any]:
        if b.status >= 400:
            if anthropic:
                return {"type": "error", "error": {"type": "api_error", "message": b.text}}
            return {"error": {"message": b.text, "type": "server_error", "code": None}}
        model = body.get("model", "unknown")
        native = self.schema_mode == "honour" and b.structured is not None
        if anthropic:
            return self._anthropic(model, body, b, native)
        return self._openai(model, body, b, native)

    def _anthropic(self, model: str, body: dict[str, Any], b: Behaviour, native: bool):
        content: list[dict[str, Any]] = []
        stop = "end_turn"
        forced = body.get("tool_choice", {})
        if native and forced.get("type") == "tool":
            content.append(
                {"type": "tool_use", "id": "toolu_reply", "name": forced["name"],
                 "input": b.structured}
            )  # fmt: skip
            stop = "tool_use"
        else:
            if b.text:
                content.append({"type": "text", "text": b.text})
            for call_id, name, args in b.tool_calls:
                content.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
                stop = "tool_use"
        usage: dict[str, Any] = {"input_tokens": b.input_tokens, "output_tokens": b.output_tokens}
        if b.cached_tokens or b.cache_write_tokens:
            usage["cache_read_input_tokens"] = b.cached_tokens
            usage["cache_creation_input_tokens"] = b.cache_write_tokens
        return {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": b.stop_reason or stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def _openai(self, model: str, body: dict[str, Any], b: Behaviour, native: bool):
        message: dict[str, Any] = {"role": "assistant", "content": b.text or None}
        finish = "stop"
        if native and "response_format" in body:
            message["content"] = json.dumps(b.structured)
        elif b.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for call_id, name, args in b.tool_calls
            ]
            finish = "tool_calls"
        usage: dict[str, Any] = {
            "prompt_tokens": b.input_tokens,
            "completion_tokens": b.output_tokens,
            "total_tokens": b.input_tokens + b.output_tokens,
        }
        if b.cached_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": b.cached_tokens}
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": b.stop_reason or finish}],
            "usage": usage,
        }

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def anthropic_events(message: dict[str, Any]) -> Iterator[tuple[bool, str]]:
    """The SSE events of a streamed Messages reply; the flag marks text deltas."""

    def sse(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield False, sse("message_start", {"message": start})
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            yield False, sse("content_block_start", {"index": i, "content_block": opening})
            for word in _words(block["text"]):
                delta = {"type": "text_delta", "text": word}
                yield True, sse("content_block_delta", {"index": i, "delta": delta})
        else:
            opening = {**block, "input": {}}
            yield False, sse("content_block_start", {"index": i, "content_block": opening})
            raw = json.dumps(block["input"])
            for piece in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
                delta = {"type": "input_json_delta", "partial_json": piece}
                yield False, sse("content_block_delta", {"index": i, "delta": delta})
        yield False, sse("content_block_stop", {"index": i})
    ending = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    out = {"output_tokens": usage["output_tokens"]}
    yield False, sse("message_delta", {"delta": ending, "usage": out})
    yield False, sse("message_stop", {})


def openai_chunks(completion: dict[str, Any]) -> Iterator[tuple[bool, str]]:
    """The SSE chunks of a streamed chat completion; the flag marks text deltas."""
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"

    message = completion["choices"][0]["message"]
    yield False, chunk({"role": "assistant", "content": ""})
    for word in _words(message.get("content") or ""):
        yield True, chunk({"content": word})
    for i, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        function = {"name": call["function"]["name"], "arguments": ""}
        opening = {"index": i, "id": call["id"], "type": "function", "function": function}
        yield False, chunk({"tool_calls": [opening]})
        for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
            yield False, chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield False, chunk({}, completion["choices"][0]["finish_reason"])
    usage = {**base, "choices": [], "usage": completion["usage"]}
    yield False, f"data: {json.dumps(usage)}\n\n"
    yield False, "data: [DONE]\n\n"


def openai_problems(body: dict[str, Any]) -> list[str]:
    """What breaks the Chat Completions rules in ``body``."""
    out: list[str] = []
    messages = body.get("messages")
    if not isinstance(body.get("model"), str) or not isinstance(messages, list) or not messages:
        return ["model and a non-empty messages list are required"]
    offered = []
    for t in body.get("tools", []):
        fn = t.get("function", {}) if isinstance(t, dict) else {}
        if t.get("type") != "function" or not NAME.match(str(fn.get("name", ""))):
            out.append(f"tools: invalid tool {t!r}")
        elif not isinstance(fn.get("parameters", {}), dict):
            out.append(f"tools: {fn['name']}: parameters must be a JSON schema object")
        offered.append(fn.get("name"))
    choice = body.get("tool_choice")
    if choice is not None:
        if isinstance(choice, dict):
            name = choice.get("function", {}).get("name")
            if choice.get("type") != "function" or name not in offered:
                out.append(f"tool_choice: {choice!r} names no offered tool")
        elif choice not in ("auto", "none", "required"):
            out.append(f"tool_choice: invalid value {choice!r}")
        elif choice == "required" and not offered:
            out.append("tool_choice 'required' needs tools")
    fmt = body.get("response_format")
    if fmt is not None:
        spec = fmt.get("json_schema", {}) if isinstance(fmt, dict) else {}
        if fmt.get("type") != "json_schema" or not isinstance(spec.get("schema"), dict):
            out.append("response_format: a json_schema with a schema object is required")
        elif not NAME.match(str(spec.get("name", ""))):
            out.append(f"response_format.json_schema.name: invalid {spec.get('name')!r}")
    pending: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in pending:
                out.append(f"messages[{i}]: tool result for {call_id!r} answers no open call")
            else:
                pending.remove(call_id)
            if not isinstance(m.get("content"), str):
                out.append(f"messages[{i}]: tool content must be text")
            continue
        if pending:
            out.append(f"messages[{i}]: tool calls {pending} were never answered")
            pending = []
        if role not in ("system", "user", "assistant"):
            out.append(f"messages[{i}]: invalid role {role!r}")
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                json.loads(fn.get("arguments", ""))
            except (TypeError, ValueError):
                out.append(f"messages[{i}]: tool call arguments must be JSON text")
            if call.get("type") != "function" or not call.get("id"):
                out.append(f"messages[{i}]: invalid tool call {call!r}")
            pending.append(call.get("id"))
        if role == "assistant" and m.get("content") is None and not m.get("tool_calls"):
            out.append(f"messages[{i}]: an assistant message needs content or tool calls")
    if pending:
        out.append(f"tool calls {pending} were never answered")
    return out


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    """What breaks the Messages API rules in ``body``."""
    out: list[str] = []
    messages = body.get("messages")
    if not isinstance(body.get("model"), str) or not isinstance(messages, list) or not messages:
        return ["model and a non-empty messages list are required"]
    if not isinstance(body.get("max_tokens"), int):
        out.append("max_tokens: required")
    system = body.get("system")
    if isinstance(system, list):
        for block in system:
            if block.get("type") != "text" or not isinstance(block.get("text"), str):
                out.append(f"system: invalid block {block!r}")
            control = block.get("cache_control")
            if control is not None and control != {"type": "ephemeral"}:
                out.append(f"system: invalid cache_control {control!r}")
    elif system is not None and not isinstance(system, str):
        out.append("system: must be text or a list of text blocks")
    offered = []
    for t in body.get("tools", []):
        if not NAME.match(str(t.get("name", ""))) or not isinstance(t.get("input_schema"), dict):
            out.append(f"tools: invalid tool {t!r}")
        elif t["input_schema"].get("type") != "object":
            out.append(f"tools.{t['name']}.input_schema: type must be object")
        offered.append(t.get("name"))
    choice = body.get("tool_choice")
    if choice is not None:
        kind = choice.get("type") if isinstance(choice, dict) else None
        if kind not in ("auto", "any", "none", "tool"):
            out.append(f"tool_choice: invalid {choice!r}")
        elif kind == "tool" and choice.get("name") not in offered:
            out.append(f"tool_choice: {choice.get('name')!r} is not an offered tool")
        elif kind in ("any", "tool") and not offered:
            out.append("tool_choice: needs tools")
    expected = "user"
    open_calls: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role != expected:
            out.append(f"messages[{i}]: roles must alternate user/assistant, got {role!r}")
        expected = "assistant" if role == "user" else "user"
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            out.append(f"messages[{i}]: content must be text or a list of blocks")
            continue
        answered: list[str] = []
        seen_other = False
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                if role != "user":
                    out.append(f"messages[{i}]: tool_result outside a user turn")
                if seen_other:
                    out.append(f"messages[{i}]: tool_result blocks must come first")
                if block.get("tool_use_id") not in open_calls:
                    out.append(
                        f"messages[{i}]: tool_result for {block.get('tool_use_id')!r} "
                        "answers no tool_use in the previous turn"
                    )
                answered.append(block.get("tool_use_id"))
            elif kind == "tool_use":
                seen_other = True
                if role != "assistant" or not isinstance(block.get("input"), dict):
                    out.append(f"messages[{i}]: invalid tool_use {block!r}")
            elif kind == "text":
                seen_other = True
                if not isinstance(block.get("text"), str):
                    out.append(f"messages[{i}]: text block without text")
            else:
                out.append(f"messages[{i}]: unknown block type {kind!r}")
        if role == "user":
            missing = [c for c in open_calls if c not in answered]
            if missing:
                out.append(f"messages[{i}]: tool_use ids {missing} have no tool_result")
            open_calls = []
        else:
            open_calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
    if messages and messages[-1].get("role") != "user":
        out.append("the last message must be the user's")
    return out


@contextmanager
def running(schema_mode: Literal["honour", "ignore", "reject"] = "honour") -> Iterator[ModelServer]:
    server = ModelServer(schema_mode).start()
    try:
        yield server
    finally:
        server.stop()
