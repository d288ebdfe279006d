"""What a command reads besides its arguments: scores from an option, a file or stdin.

Every source is read under the one decoding policy (:mod:`noetic.untrusted`): bounded, UTF-8,
invalid bytes reported with their offset.
"""

from __future__ import annotations

import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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


def read_text_file(path: Path, source: str | None = None) -> str:
    """A file's text under the one decoding policy: a regular file (never a FIFO or a device),
    at most ``file_bytes``."""
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
    """Scores from --vectors, --vectors-file or stdin (when piped), parsed as bounded JSON
    (:func:`noetic.untrusted.load_json`); None when none was given."""
    from noetic.errors import InvalidValueError
    from noetic.untrusted import load_json

    if vectors is not None and vectors_file is not None:
        raise InvalidValueError(
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
    except InvalidValueError as exc:
        if exc.fix is None:
            exc.fix = 'pass an object such as {"know": 0.8, "do": 0.7, ...}'
        raise
