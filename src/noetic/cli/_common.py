"""What every command shares: options, store opening, output and error handling.

A command parses its arguments, calls one engine or store function inside :func:`handled`,
and hands the result to :func:`emit`, which prints one JSON document with ``--json`` or calls
the command's renderer otherwise. Errors become exit codes: 1 for the caller's mistakes
(:class:`noetic.errors.UsageError`), 3 for runtime failures (store, provider); typer itself
exits 2 on malformed command lines. An engine run that ends without doing what was asked exits
non-zero after printing its result (:func:`run_exit_code`): 3 when it failed, 5 when it stopped
to wait for a person (a question to answer, a task to hand on, a decision to make).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console

    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

EXIT_USER_ERROR = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3
EXIT_AWAITING_INPUT = 5

# An engine run's end status → its exit code; statuses not named here (completed) exit 0.
_RUN_EXITS = {
    # CASCADE
    "clarify": EXIT_AWAITING_INPUT,
    "delegate": EXIT_AWAITING_INPUT,
    "reset_refused": EXIT_RUNTIME,
    "timeout": EXIT_RUNTIME,
    "tool_limit": EXIT_RUNTIME,
    "parse_failure": EXIT_RUNTIME,
    "provider_failure": EXIT_RUNTIME,
    # Nova
    "escalated": EXIT_AWAITING_INPUT,
    "failed": EXIT_RUNTIME,
    "running": EXIT_RUNTIME,  # a walk never ends running: if one does, it did not finish
}


def run_exit_code(status: str) -> int:
    """The exit code for an engine run that ended with ``status`` (module docstring)."""
    return _RUN_EXITS.get(str(status), 0)


def exit_for_run(status: str) -> None:
    """End the command with :func:`run_exit_code` when the run did not complete."""
    code = run_exit_code(status)
    if code:
        raise CommandExit(code)


class CommandExit(SystemExit):
    """A command ends with this exit code, its message already printed. A ``SystemExit``, so
    it leaves through typer and through the fast path (:mod:`noetic.cli.fast`) alike, and the
    stores are still closed on the way out."""


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
        return Console(stderr=err, highlight=False)
    return Console(stderr=err, highlight=False, soft_wrap=True, width=_UNBOUNDED_WIDTH)


def stdout() -> Console:
    return _console(err=False)


def stderr() -> Console:
    return _console(err=True)


def esc(value: object) -> str:
    """``value`` as text Rich prints literally: ``noetic[openai]`` stays ``noetic[openai]``."""
    from rich.markup import escape

    return escape(str(value))


def to_jsonable(data: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
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


@contextmanager
def handled(as_json: bool) -> Iterator[None]:
    """Turn Noetic's errors into a message (or ``{"error": …}``) and an exit code."""
    from noetic.errors import NoeticError, UsageError

    try:
        yield
    except NoeticError as exc:
        code = EXIT_USER_ERROR if isinstance(exc, UsageError) else EXIT_RUNTIME
        if as_json:
            sys.stdout.write(json.dumps({"error": exc.to_dict()}, indent=2) + "\n")
        else:
            err = stderr()
            err.print(f"[bold red]error:[/] {esc(exc.message)}")
            if exc.fix:
                err.print(f"[dim]fix:[/] {esc(exc.fix)}")
        raise CommandExit(code) from None


_OPENED: list[Store] = []


def open_store(store: Path | None, *, create: bool = False) -> Store:
    """The store the command uses, closed (its files written) when the command ends. Only
    commands that write pass ``create``; for the others a missing store is an error that says
    where it looked, and nothing is created."""
    from noetic.store import Store, locate_store, require_store

    location = locate_store(store)
    opened = Store(location.home if create else require_store(location))
    _OPENED.append(opened)
    return opened


def close_stores() -> None:
    """Close every store a command opened: the root command calls this when it ends."""
    while _OPENED:
        _OPENED.pop().close()


def open_tracker(store: Path | None, *, create: bool = False) -> Tracker:
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    opened = open_store(store, create=create)
    return Tracker(opened, ProfileRegistry(opened.home / "profiles"))


def agent(ai_id: str | None) -> str:
    """The agent acting: the one named (``--ai-id`` or ``$NOETIC_AI_ID``), else the default."""
    from noetic.errors import ValidationError
    from noetic.store.current import DEFAULT_AI_ID

    if ai_id is None:
        return DEFAULT_AI_ID
    if not ai_id.strip():
        raise ValidationError("the agent id is empty", field="ai_id", value=ai_id)
    return ai_id


def current_session(tracker: Tracker, explicit: str | None, ai_id: str | None = None) -> str:
    """The session to act on: the one named (``--session`` or ``$NOETIC_SESSION``), else the
    agent's current session in this store."""
    from noetic.store.current import read_current_session

    if explicit:
        return tracker.store.get_session(explicit).id
    who = agent(ai_id)
    remembered = read_current_session(tracker.store.home, who)
    if remembered is None:
        raise _no_current_session(tracker.store.home, who)
    return tracker.store.get_session(remembered).id


# How long a pipe may take to deliver its first byte (`echo … | noetic check` starts both at once).
_STDIN_GRACE_S = 0.2


def _stdin_has_data() -> bool:
    """Whether reading stdin would return at once: data or end of input is waiting.

    An agent's harness may leave stdin an open pipe that never delivers anything; reading it
    would wait forever, so without data within a short grace the scores are taken as not given
    (and the prompt is printed). ``--vectors-file -`` always reads stdin.
    """
    import select

    try:
        ready, _, _ = select.select([sys.stdin], [], [], _STDIN_GRACE_S)
    except (OSError, ValueError, TypeError):  # no file descriptor: an in-memory stream
        return True
    return bool(ready)


def optional_current_session(
    tracker: Tracker | Store, explicit: str | None, ai_id: str | None = None
) -> str | None:
    """Like :func:`current_session`, for commands that also work without a session: the agent
    is the one named, else ``$NOETIC_AI_ID``, else the default; None when it has none. Takes
    the store alone where a command needs no tracker (``recall``, kept light for cold calls)."""
    import os

    from noetic.store.current import read_current_session

    store = cast("Store", getattr(tracker, "store", tracker))  # importing Tracker costs
    if explicit:
        return store.get_session(explicit).id
    who = agent(ai_id or os.environ.get("NOETIC_AI_ID"))
    remembered = read_current_session(store.home, who)
    return store.get_session(remembered).id if remembered else None


def _no_current_session(home: Path, who: str) -> Exception:
    from noetic.errors import NotFoundError
    from noetic.store.current import agents_with_current_sessions

    others = sorted(agents_with_current_sessions(home))
    fix = f"run `noetic bootstrap --ai-id {who}` first, or pass --session ID"
    if others:
        fix += (
            f"; agents with a current session here: {', '.join(others)} "
            "(name yours with --ai-id or NOETIC_AI_ID)"
        )
    return NotFoundError(f"agent {who!r} has no current session in {home}", fix=fix)


def session_used(session_id: str, ai_id: str | None = None) -> str:
    """The line a writing command prints to say which session it wrote into."""
    return f"[dim]session {session_id}" + (f" · agent {ai_id}" if ai_id else "") + "[/]"


def read_text_file(path: Path, source: str | None = None) -> str:
    """A file's text under the one decoding policy: a regular file (never a FIFO or a device),
    at most ``file_bytes``, UTF-8, invalid bytes reported with their offset
    (:mod:`noetic.untrusted`)."""
    from noetic.limits import FILE_BYTES
    from noetic.untrusted import decode_utf8, read_file_bytes

    source = source or str(path)
    return decode_utf8(read_file_bytes(path, source), source, FILE_BYTES)


def read_stdin() -> str:
    """Stdin's text under the one decoding policy, bounded by ``stdin_bytes``."""
    from noetic.limits import STDIN_BYTES
    from noetic.untrusted import decode_utf8

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text-only stdin (some embedders): already decoded
        text = sys.stdin.read(STDIN_BYTES.maximum + 1)
        data = text.encode("utf-8", errors="surrogateescape")
    else:
        data = stream.read(STDIN_BYTES.maximum + 1)
    return decode_utf8(data, "stdin", STDIN_BYTES)


def read_json_input(vectors: str | None, vectors_file: Path | None) -> Any | None:
    """Scores from --vectors, --vectors-file or stdin (when piped); None when none was given.

    Every source is read under the one decoding policy and parsed as bounded JSON
    (:func:`noetic.untrusted.load_json`)."""
    from noetic.errors import ValidationError
    from noetic.untrusted import load_json

    if vectors is not None and vectors_file is not None:
        raise ValidationError(
            "give the scores once: --vectors or --vectors-file, not both", field="vectors"
        )
    if vectors_file is not None:
        if str(vectors_file) == "-":
            text, source = read_stdin(), "stdin"
        else:
            text, source = read_text_file(vectors_file), str(vectors_file)
    elif vectors is not None:
        text, source = vectors, "--vectors"
    elif not sys.stdin.isatty() and _stdin_has_data():
        text, source = read_stdin(), "stdin"
        if not text.strip():
            return None
    else:
        return None
    try:
        return load_json(text, source)
    except ValidationError as exc:
        if exc.fix is None:
            exc.fix = 'pass an object such as {"know": 0.8, "do": 0.7, ...}'
        raise


def refuse_undecodable_argv(args: list[str]) -> None:
    """Exit 1 with a clear error when a command-line argument was not valid UTF-8."""
    from noetic.untrusted import check_text

    with handled("--json" in args):
        for i, arg in enumerate(args, start=1):
            check_text(arg, f"command-line argument {i}")
