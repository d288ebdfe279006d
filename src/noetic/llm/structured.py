"""Getting structured data out of model replies.

:func:`complete_structured` sets :attr:`Request.json_schema`: a provider with ``native_schema``
sends it in its wire format's own field, the others put it in the system prompt. An endpoint
found refusing the native field (a 400 naming it) or ignoring it is remembered per base URL for
the life of the process (:class:`NativeSchemaMemory`), and the reply says so in
:attr:`Completion.structured` and :attr:`Completion.note` (``docs/providers.md``).

Either way the reply is parsed the same: :func:`extract_json` finds the first complete JSON
object, bare, fenced or amid prose; :func:`complete_parsed` asks once more quoting the error
(and the schema, so a model whose server dropped the native field still learns the shape), then
raises :class:`noetic.errors.ParseError` carrying the raw text.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from noetic.errors import InvalidValueError, LimitExceeded, ParseError, ProviderError
from noetic.limits import REPLY_CHARS
from noetic.llm.base import Completion, Message, Provider, Request
from noetic.untrusted import parse_json

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_INSIDE = re.compile(r'["{}]')
_WHOLE_BRACES = 64
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _object_spans(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """Candidate objects: the outermost balanced ``{…}`` spans, in order, found in one pass.

    Outside braces the text is prose and its quotes mean nothing; inside, strings are skipped
    so braces in them do not count. When a ``{`` is never closed (a stray brace in prose, or a
    truncated reply), the outermost closed spans after it are still candidates; the second
    value is where the first unclosed ``{`` starts, if there is one."""
    spans: list[tuple[int, int]] = []
    unclosed: int | None = None
    pos = 0
    while (start := text.find("{", pos)) != -1:
        stack = [start]
        closed: list[tuple[int, int]] = []
        pos = start + 1
        while stack:
            found = _INSIDE.search(text, pos)
            if found is None:
                break
            pos = found.end()
            char = found.group()
            if char == '"':
                rest = _STRING_REST.match(text, pos)
                if rest is None:
                    break
                pos = rest.end()
            elif char == "{":
                stack.append(found.start())
            else:
                closed.append((stack.pop(), pos))
        if not stack:
            spans.append(closed[-1])
            continue
        unclosed = stack[0] if unclosed is None else unclosed
        outer_end = -1
        for span in sorted(closed):
            if span[0] >= outer_end:
                spans.append(span)
                outer_end = span[1]
        break
    return spans, unclosed


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - text.rfind("\n", 0, pos)
    return f"line {line} column {column}"


def _syntax_problem(text: str, exc: json.JSONDecodeError, offset: int) -> str:
    pos = offset + exc.pos
    before = text[:pos].rstrip()
    if before.endswith(",") and text[pos : pos + 1] in ("}", "]"):
        return f"a trailing comma before {text[pos]!r} at {_where(text, pos)}"
    return f"{exc.msg} at {_where(text, pos)}"


def extract_json(text: str) -> dict[str, Any]:
    """The first complete JSON object in ``text``; :class:`ParseError` if there is none.

    Linear in the length of ``text``, which is bounded by :data:`noetic.limits.REPLY_CHARS`;
    the object is read under the rules of :func:`noetic.untrusted.parse_json` (nesting, number
    length, no duplicate keys). When no candidate is a valid object, the error describes the
    first candidate's problem and where it is."""
    try:
        REPLY_CHARS.check(len(text), "the reply")
    except LimitExceeded as exc:
        raise ParseError(exc.message, raw=text) from None
    # a reply that is one JSON object (as a reply held to the schema is) is the scan's one
    # candidate: found without the scan (only with few braces: a long run of candidates is
    # scanned, each decoded once)
    spans: list[tuple[int, int]] | None = None
    unclosed: int | None = None
    whole = text.strip()
    if whole[:1] == "{" and whole[-1:] == "}" and whole.count("{") <= _WHOLE_BRACES:
        try:
            json.loads(whole)
        except (ValueError, RecursionError):
            pass
        else:
            first = text.index("{")
            spans = [(first, first + len(whole))]
    if spans is None:
        spans, unclosed = _object_spans(text)
    problem: str | None = None
    for start, end in spans:
        try:
            value = parse_json(text[start:end], "the reply's JSON object")
        except json.JSONDecodeError as exc:
            problem = problem or _syntax_problem(text, exc, start)
            continue
        except InvalidValueError as exc:
            problem = problem or exc.message
            continue
        if isinstance(value, dict):
            return value
    if problem is not None:
        raise ParseError(f"the reply's JSON object is malformed: {problem}", raw=text)
    if unclosed is not None:
        raise ParseError(
            "the reply contains no complete JSON object: the '{' at "
            f"{_where(text, unclosed)} is never closed",
            raw=text,
        )
    raise ParseError("the reply contains no JSON object", raw=text)


def describe(exc: Exception) -> str:
    """A short, model-readable description of why a reply was rejected."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:5]
        )
    if isinstance(exc, InvalidValueError | ParseError):
        return exc.message
    return str(exc)


async def complete_parsed(
    provider: Provider,
    request: Request,
    parse: Callable[[str], T],
    *,
    repair: bool = True,
    expected: str = "the corrected JSON object",
    replies: list[Completion] | None = None,
) -> T:
    """Ask, parse; on failure ask once more quoting the error; then raise :class:`ParseError`.

    ``expected`` names what the repair request asks for; every reply is appended to ``replies``
    when given (callers that count model calls)."""
    replies = replies if replies is not None else []
    reply = await provider.complete(request)
    replies.append(reply)
    try:
        return parse(reply.text)
    except (ParseError, InvalidValueError, ValidationError) as exc:
        problem = describe(exc)
        if not repair:
            raise ParseError(f"unusable reply: {problem}", raw=reply.text) from None
    fix_request = request.model_copy(
        update={
            "messages": (
                *request.messages,
                Message(role="assistant", content=reply.text),
                Message(
                    role="user",
                    content=f"Your reply could not be used: {problem}. Reply again with only "
                    f"{expected}.",
                ),
            )
        }
    )
    second = await provider.complete(fix_request)
    replies.append(second)
    try:
        return parse(second.text)
    except (ParseError, InvalidValueError, ValidationError) as exc:
        raise ParseError(
            f"unusable reply after one repair round: {describe(exc)} (first problem: {problem})",
            raw=second.text,
        ) from None


def instruction_for(schema: dict[str, Any]) -> str:
    """The prompt instruction that asks for a reply matching ``schema``."""
    text = json.dumps(schema, separators=(",", ":"))
    return f"Answer with one JSON object matching this JSON schema, and nothing else:\n{text}"


def with_instruction(system: str | None, schema: dict[str, Any]) -> str:
    """``system`` with the schema instruction appended."""
    return "\n\n".join(p for p in (system, instruction_for(schema)) if p)


class NativeSchemaMemory:
    """Which endpoints refused a native structured-output field during this process.

    ``field`` is the word the endpoint's 400 names (``response_format``, ``tools``). Thread-safe:
    the MCP server runs engines on several threads."""

    def __init__(self, field: str) -> None:
        self.field = field
        self._refused: dict[str, str] = {}
        self._lock = threading.Lock()

    def allows(self, endpoint: str) -> bool:
        with self._lock:
            return endpoint not in self._refused

    def rejected(self, exc: ProviderError) -> bool:
        """Whether ``exc`` is the endpoint refusing the field (a 400 that names it)."""
        return exc.status == 400 and self.field in exc.message

    def remember(self, endpoint: str, exc: ProviderError) -> str:
        """Mark ``endpoint``; the returned note is what the call record keeps."""
        note = f"{endpoint or 'the endpoint'} refused {self.field} (HTTP 400); " + (
            "engines use their JSON path there from now on"
            if self.field == "tool"
            else "the schema goes in the prompt from now on"
        )
        with self._lock:
            self._refused[endpoint] = exc.message
        logging.getLogger("noetic.llm").warning("%s: %s", note, exc.message)
        return note

    def ignored(self, endpoint: str) -> str:
        """Mark ``endpoint`` as ignoring the field: it answered a request that carried it with
        something the schema does not hold (older llama.cpp and LM Studio builds, some
        proxies). The returned note is what the call record keeps."""
        note = (
            f"{endpoint or 'the endpoint'} ignored {self.field} (its reply was not the JSON "
            "object asked for); the schema goes in the prompt from now on"
        )
        with self._lock:
            self._refused[endpoint] = "ignored"
        logging.getLogger("noetic.llm").warning("%s", note)
        return note

    def forget(self) -> None:
        """Clear the memory (tests, or after reconfiguring an endpoint)."""
        with self._lock:
            self._refused.clear()


async def complete_structured(
    provider: Provider, request: Request, model_cls: type[M], *, repair: bool = True
) -> M:
    """A validated ``model_cls`` instance from the model's reply (see module docstring)."""
    schema = model_cls.model_json_schema()
    native = bool(getattr(provider, "native_schema", False))
    system = request.system if native else with_instruction(request.system, schema)
    asked = request.model_copy(update={"system": system, "json_schema": schema})
    return await complete_parsed(
        provider,
        asked,
        lambda text: model_cls.model_validate(extract_json(text)),
        repair=repair,
        expected="one JSON object matching this JSON schema, and nothing else:\n"
        + json.dumps(schema, separators=(",", ":")),
    )
