"""How a writing command answers: its result, or, when its ``--request-id`` was applied
before (the operation returned :class:`~noetic.operations.once.Replayed`), the first run's
answer again (on stdout, under ``--json``) and a note on stderr that nothing was written again;
without ``--json`` the note alone."""

from __future__ import annotations

from collections.abc import Callable

from noetic.cli.output import emit, stderr, stdout, to_jsonable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from noetic.operations.once import Replayed

    T = TypeVar("T")


def answer(
    result: T | Replayed[T],
    as_json: bool,
    render: Callable[[T], None] | None = None,
    shown: Callable[[T], Any] | None = None,
) -> None:
    """Print ``result`` as ``shown(result)`` (itself by default) under ``--json``, else with
    ``render``; a replay as its note and its first answer."""
    from noetic.operations.once import Replayed

    if isinstance(result, Replayed):
        if not as_json:
            stdout().print(result.note(), markup=False)
        elif result.result is not None:  # the first run's document, as it was printed
            stderr().print(result.note(), markup=False)
            emit(shown(result.result) if shown else result.result, True)
        else:
            emit({"replayed": to_jsonable(result.request), "note": result.note()}, True)
        return
    done: T = result
    emit(shown(done) if shown else done, as_json, None if render is None else lambda: render(done))
