"""Applying a write once: a call given a ``request_id`` that was applied before is answered from
what that call returned, and nothing is written again (:mod:`noetic.store.requests`). The MCP
write tools use it.

A retry with the same id and arguments gets the first call's result, rebuilt from what was
recorded; the same id with other arguments is refused, and so is a retry of a call whose result
was never kept (the write is applied: the error says so rather than applying it again). On a
store that joins transactions (SQLite) the write, its request id and its answer are one
transaction, so an answer is never missing there."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from noetic.errors import StoreError
from noetic.store import requests

if TYPE_CHECKING:
    from noetic.store.base import BaseStore

M = TypeVar("M", bound=BaseModel)


def once(
    store: BaseStore,
    request_id: str | None,
    operation: str,
    arguments: dict[str, Any],
    result_type: type[M],
    work: Callable[[], M],
) -> M:
    """``work()``'s result, or the result of the call that first applied ``request_id``."""
    replay = requests.start(store, request_id, operation, arguments)
    if replay is not None:
        if replay.response is None:
            raise StoreError(replay.note(), fix="read the state to see what it wrote")
        return result_type.model_validate(replay.response)
    try:
        with store.unit():  # the write, its request id and its answer: together or not at all
            result = work()
            requests.finish(result.model_dump(mode="json"))
    except BaseException:
        requests.finish(None)
        raise
    return result
