"""What a command prints: consoles for people, one JSON document for programs.

A command hands its result to :func:`emit`, which prints one JSON document with ``--json`` or
calls the command's renderer otherwise. Rich is imported only when something is rendered for a
person, so a command run with ``--json`` never loads it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# Wide enough that nothing written to a pipe or a file is ever wrapped or truncated.
_UNBOUNDED_WIDTH = 1_000_000


def _console(err: bool) -> Console:
    """A terminal gets Rich's wrapping and colour; a pipe or a file gets every line whole.

    Text read by a program or pasted into an agent's context (JSON, prompts, checkpoints, error
    messages) must survive intact, and a table's ids must be copyable, so off a terminal the
    console neither wraps lines nor shrinks table columns.
    """
    from rich.console import Console

    stream = sys.stderr if err else sys.stdout
    if stream.isatty():
        return Console(stderr=err, highlight=False, emoji=False)
    return Console(stderr=err, highlight=False, emoji=False, soft_wrap=True, width=_UNBOUNDED_WIDTH)


def stdout() -> Console:
    return _console(err=False)


def stderr() -> Console:
    return _console(err=True)


def esc(value: object) -> str:
    """``value`` as text Rich prints literally: ``noetic[openai]`` stays ``noetic[openai]``."""
    from rich.markup import escape

    return escape(str(value))


def to_jsonable(data: Any) -> Any:
    dump = getattr(data, "model_dump", None)  # a model, a plain value or a store record
    if dump is not None and not isinstance(data, type):
        return dump(mode="json")
    dataclasses = sys.modules.get("dataclasses")  # not loaded: nothing here is a dataclass
    if dataclasses is not None and dataclasses.is_dataclass(data) and not isinstance(data, type):
        return {f.name: to_jsonable(getattr(data, f.name)) for f in dataclasses.fields(data)}
    if isinstance(data, dict):
        return {k: to_jsonable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [to_jsonable(v) for v in data]
    return data


def emit(data: Any, as_json: bool, render: Callable[[], None] | None = None) -> None:
    """Print ``data`` as JSON, or run the human renderer."""
    if as_json or render is None:
        sys.stdout.write(json.dumps(to_jsonable(data), indent=2, ensure_ascii=False) + "\n")
    else:
        render()


def session_used(session_id: str, ai_id: str | None = None) -> str:
    """The line a writing command prints to say which session it wrote into."""
    return f"[dim]session {session_id}" + (f" · agent {ai_id}" if ai_id else "") + "[/]"
