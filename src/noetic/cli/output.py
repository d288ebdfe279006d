"""What a command prints: consoles for people, one JSON document for programs (:func:`emit`).

Rich is imported only when something is rendered for a terminal, or when text off a terminal
holds what Rich changes (control characters, a table other than the vectors'), so a command run
with ``--json``, or whose text goes to a pipe or a file, never loads it; the text is the same.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console

# Wide enough that nothing written to a pipe or a file is ever wrapped or truncated.
_UNBOUNDED_WIDTH = 1_000_000


def console(err: bool) -> Console:
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


def plain(err: bool = False) -> bool:
    """Whether Rich writes to the stream as plain text: not a terminal, and no variable says to
    treat it as one (``FORCE_COLOR``, ``TTY_COMPATIBLE``)."""
    stream = sys.stderr if err else sys.stdout
    return not (stream.isatty() or "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ)


# Rich's console markup: a tag, and the backslashes escaping it (rich.markup.RE_TAGS)
_TAG = r"((\\*)\[([a-z#/@][^[]*?)])"  # compiled by re at its first use: text only


def unmarked(markup: str) -> str | None:
    """``markup`` as Rich prints it to a pipe: its tags removed, its escaped brackets unescaped;
    None for what only Rich knows how to print (a link or meta tag, a closing tag that closes
    nothing)."""
    out: list[str] = []
    opened: list[str] = []
    position = 0
    for match in re.finditer(_TAG, markup):
        whole, escapes, tag = match.groups()
        out.append(markup[position : match.start()].replace("\\[", "["))
        position = match.end()
        backslashes, escaped = divmod(len(escapes), 2)
        out.append("\\" * backslashes)
        if escaped:
            out.append(whole[len(escapes) :])
        elif tag.startswith(("@", "/@")) or "=" in tag:
            return None
        elif tag == "/" and opened:
            opened.pop()
        elif tag.startswith("/"):
            if tag[1:] not in opened:
                return None
            del opened[len(opened) - 1 - opened[::-1].index(tag[1:])]
        else:
            opened.append(tag)
    out.append(markup[position:].replace("\\[", "["))
    return "".join(out)


class _Lines:
    """The console for a pipe or a file: a line of text is written as Rich would write it
    (:func:`unmarked`); anything else (a table, a tab, an option such as ``end``) goes to Rich,
    loaded then."""

    def __init__(self, err: bool) -> None:
        self._err = err
        self._rich: Console | None = None

    def print(self, *objects: Any, markup: bool = True, **options: Any) -> None:
        text = objects[0] if len(objects) == 1 and isinstance(objects[0], str) else None
        if text is not None and markup:
            text = unmarked(text)
        if (
            text is not None
            and options.keys() <= {"highlight", "soft_wrap"}
            and all(line.isprintable() for line in text.split("\n"))
        ):
            stream = sys.stderr if self._err else sys.stdout
            try:
                stream.write(text + "\n")
            except UnicodeEncodeError:  # Rich's error says what to do about it
                self._console().print(*objects, markup=markup, **options)
            stream.flush()  # as Rich does: stdout and stderr interleave as they did
            return
        self._console().print(*objects, markup=markup, **options)

    def _console(self) -> Console:
        if self._rich is None:
            self._rich = console(self._err)
        return self._rich

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console(), name)


# a _Lines answers what the commands ask of Rich's console
def stdout() -> Console:
    return _Lines(err=False) if plain() else console(err=False)  # type: ignore[return-value]


def stderr() -> Console:
    return _Lines(err=True) if plain(err=True) else console(err=True)  # type: ignore[return-value]


def esc(value: object) -> str:
    """``value`` as text Rich prints literally: ``noetic[openai]`` stays ``noetic[openai]``
    (Rich's own ``rich.markup.escape``, without loading Rich)."""
    text = re.sub(_ESCAPE, lambda m: f"{m[1]}{m[1]}\\{m[2]}", str(value))
    return text + "\\" if text.endswith("\\") and not text.endswith("\\\\") else text


_ESCAPE = r"(\\*)(\[[a-z#/@][^[]*?])"


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
