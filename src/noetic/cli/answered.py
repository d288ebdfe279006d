"""How a writing command answers when it was given ``--request-id``: the first run prints its
result and keeps it as the request's answer; a retry prints that answer again (on stdout, under
``--json``) and says on stderr that nothing was written again (:mod:`noetic.store.requests`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from noetic.cli.output import emit, stderr, stdout, to_jsonable
from noetic.store import requests


def answer(result: Any, as_json: bool, render: Callable[[], None] | None) -> None:
    """Print ``result`` (or a replayed request's first answer) and keep it for retries."""
    if isinstance(result, requests.Replay):
        if not as_json:
            stdout().print(result.note(), markup=False)
        elif result.response is not None:  # the first run's document, as it was printed
            stderr().print(result.note(), markup=False)
            emit(result.response, True)
        else:
            emit({"replayed": to_jsonable(result), "note": result.note()}, True)
        return
    emit(result, as_json, render)
    requests.finish(to_jsonable(result))
