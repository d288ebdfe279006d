"""Getting structured data out of model replies.

:func:`extract_json` finds the first complete JSON object in a reply, whether it is bare, in a
code fence or surrounded by prose. :func:`complete_parsed` asks, parses, and on failure asks the
model once to repair its reply, quoting the error; a second failure raises
:class:`noetic.errors.ParseError` carrying the raw text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from noetic.errors import ParseError, ValidationError
from noetic.llm.base import Completion, Message, Provider, Request

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_DECODER = json.JSONDecoder()


def extract_json(text: str) -> dict[str, Any]:
    """The first complete JSON object in ``text``; :class:`ParseError` if there is none."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
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
