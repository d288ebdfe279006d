"""Getting structured data out of model replies.

:func:`extract_json` finds the first complete JSON object in a reply, whether it is bare, in a
code fence or surrounded by prose. :func:`complete_parsed` asks, parses, and on failure asks the
model once to repair its reply, quoting the error; a second failure raises
:class:`noetic.errors.ParseError` carrying the raw text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from noetic.errors import LimitExceeded, ParseError, ValidationError
from noetic.limits import REPLY_CHARS
from noetic.llm.base import Completion, Message, Provider, Request
from noetic.untrusted import parse_json

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_INSIDE = re.compile(r'["{}]')
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
    spans, unclosed = _object_spans(text)
    problem: str | None = None
    for start, end in spans:
        try:
            value = parse_json(text[start:end], "the reply's JSON object")
        except json.JSONDecodeError as exc:
            problem = problem or _syntax_problem(text, exc, start)
            continue
        except ValidationError as exc:
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
    if isinstance(exc, PydanticValidationError):
        return "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:5]
        )
    if isinstance(exc, ValidationError | ParseError):
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
    except (ParseError, ValidationError, PydanticValidationError) as exc:
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
    except (ParseError, ValidationError, PydanticValidationError) as exc:
        raise ParseError(
            f"unusable reply after one repair round: {describe(exc)} (first problem: {problem})",
            raw=second.text,
        ) from None


def schema_instruction(model_cls: type[BaseModel]) -> str:
    schema = json.dumps(model_cls.model_json_schema(), separators=(",", ":"))
    return f"Answer with one JSON object matching this JSON schema, and nothing else:\n{schema}"


async def complete_structured(
    provider: Provider, request: Request, model_cls: type[M], *, repair: bool = True
) -> M:
    """A validated ``model_cls`` instance from the model's reply (see module docstring)."""
    system = "\n\n".join(p for p in (request.system, schema_instruction(model_cls)) if p)
    asked = request.model_copy(
        update={"system": system, "json_schema": model_cls.model_json_schema()}
    )
    return await complete_parsed(
        provider, asked, lambda text: model_cls.model_validate(extract_json(text)), repair=repair
    )
