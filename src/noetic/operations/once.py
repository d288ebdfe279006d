"""Applying a write once: a write operation's call whose ``request_id`` was applied before
writes nothing and returns :class:`Replayed`, the first call's result rebuilt from what was kept
(:mod:`noetic.store.requests`; ``docs/architecture.md`` says which operations, and how a request
is recognised whichever interface sent it).

The same id with other arguments is refused. On a store that joins transactions (SQLite) the
write, its request id and its answer are one transaction, so a retry always gets the answer;
on PostgreSQL the request id commits with the write's first transaction and the answer in the
next, so a process that ends between the two leaves a request applied without an answer:
:class:`Replayed` then has no ``result``, and :meth:`Replayed.answer` says the write is
applied rather than applying it again."""

from __future__ import annotations

import sys
from collections.abc import Callable

from noetic.errors import StoreError
from noetic.plain import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar

    from noetic.store import requests
    from noetic.store.base import BaseStore

    T = TypeVar("T")
    T_co = TypeVar("T_co", covariant=True)
else:  # at run time the class takes no type parameter: Replayed[T] is Replayed

    class Generic:
        def __class_getitem__(cls, _: object) -> type:
            return cls

    T_co = None


class Replayed(Value, Generic[T_co]):
    """A request applied before: nothing was written again. ``result`` is that call's result
    as it was kept (None when the call ended before it could be kept)."""

    request: requests.Replay
    result: T_co | None

    def note(self) -> str:
        """What happened, in a sentence: when the request was applied, that nothing was
        written again."""
        return self.request.note()

    def answer(self) -> T_co:
        """The first call's result, or an error saying the write is applied when it was not
        kept (a retry must not apply it again)."""
        if self.result is None:
            raise StoreError(self.note(), fix="read the state to see what it wrote")
        return self.result


def answered(result: T | Replayed[T]) -> T:
    """The result, whether this call wrote it or an earlier call with its request id did."""
    return result.answer() if isinstance(result, Replayed) else result


def earlier(
    store: BaseStore,
    request_id: str | None,
    operation: str,
    arguments: dict[str, Any],
    load: Callable[[Any], T],
) -> Replayed[T] | None:
    """The earlier call's answer to ``request_id``, or None (a new request, or no id). Writes
    and remembers nothing: an operation asks before slow work (a model's assessment, recall)
    that a retry must not repeat, then applies its write with :func:`once`."""
    if request_id is None:
        return None
    from noetic.store import requests

    replay = requests.lookup(store, request_id, operation, arguments)
    return None if replay is None else _replayed(replay, load)


def once(
    store: BaseStore,
    request_id: str | None,
    operation: str,
    arguments: dict[str, Any],
    load: Callable[[Any], T],
    work: Callable[[], T],
) -> T | Replayed[T]:
    """``work()``'s result, its write, its request id and its answer stored together; or,
    when ``request_id`` was applied before, :class:`Replayed` with that call's result
    (``load`` rebuilds it from the JSON kept). Without a request id, ``work()`` as one
    write."""
    if request_id is None and "noetic.store.requests" not in sys.modules:
        with store.unit():  # no request can be current before the module that starts them loads
            return work()
    from noetic.store import requests

    replay = requests.start(store, request_id, operation, arguments)
    if replay is not None:
        return _replayed(replay, load)
    try:
        with store.unit():  # the write, its request id and its answer: together or not at all
            result = work()
            requests.finish(None if request_id is None else _answer(result))
    except BaseException:
        requests.finish(None)
        raise
    return result


def _answer(result: Any) -> Any:
    """The result as the JSON kept for its request: a model's, plain value's or record's dump."""
    dump = getattr(result, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(result)


def _replayed(replay: requests.Replay, load: Callable[[Any], T]) -> Replayed[T]:
    return Replayed(replay, None if replay.response is None else load(replay.response))
