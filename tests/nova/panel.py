"""A scripted panel: replies chosen by persona, node and round, read from each request's header.

Every Nova request starts with ``# Turn N · node · round R · persona``; :class:`Panel` answers
from a table keyed by ``(persona, node, round)`` or ``(persona, node)``, and keeps the order in
which turns were asked and how often each was asked, so tests can check the engine's routing
and that nothing is asked twice.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from noetic.llm.base import Completion, Request
from noetic.llm.scripted import ScriptedProvider

HEADER = re.compile(r"^# Turn (\d+) · (\w+) · round (\d+) · ([\w-]+)", re.MULTILINE)

Answer = str | BaseException | Callable[[Request], "str | BaseException"]


def said(text: str, **block: Any) -> str:
    """A persona's reply: Markdown, then its JSON block in a fence."""
    return f"{text}\n\n```json\n{json.dumps(block)}\n```"


def header(request: Request) -> tuple[int, str, int, str]:
    match = HEADER.search(request.messages[0].content)
    if match is None:
        raise AssertionError(f"a Nova request without a turn header: {request.messages[0]}")
    return int(match[1]), match[2], int(match[3]), match[4]


class Panel:
    def __init__(self, answers: dict[tuple[Any, ...], Answer]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str, int]] = []
        self.requests: dict[tuple[str, str, int], list[Request]] = {}
        self.provider = ScriptedProvider(self._answer)

    def _answer(self, request: Request) -> str | BaseException:
        _, node, round_, persona = header(request)
        key = (persona, node, round_)
        self.asked.append(key)
        self.requests.setdefault(key, []).append(request)
        answer = self.answers.get(key, self.answers.get((persona, node)))
        if answer is None:
            raise AssertionError(f"the script has no answer for {key}")
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(request)
        return answer

    @property
    def counts(self) -> Counter[tuple[str, str, int]]:
        return Counter(self.asked)

    def prompt(self, persona: str, node: str, round_: int) -> str:
        return self.requests[(persona, node, round_)][-1].messages[0].content


class Delayed:
    """The panel's provider with a per-persona delay, so concurrent turns finish out of order."""

    def __init__(self, inner: ScriptedProvider, delays: dict[str, float]) -> None:
        self.inner = inner
        self.delays = delays
        self.name = inner.name
        self.model = inner.model
        self.finished: list[str] = []

    async def complete(self, request: Request) -> Completion:
        persona = header(request)[3]
        await asyncio.sleep(self.delays.get(persona, 0.0))
        reply = await self.inner.complete(request)
        self.finished.append(persona)
        return reply
