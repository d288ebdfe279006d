"""Text and JSON from outside Noetic, decoded and parsed one way everywhere (the policy, with
the messages it gives, is ``docs/limits.md``): text is UTF-8, from bytes (:func:`decode_utf8`)
or already decoded with lone surrogates smuggled in (:func:`check_text`); JSON is bounded in
size, nesting and each number before it is parsed, and an object may not name one key twice or
in two cases (:func:`load_json`); identifiers and free text fields are bounded and clean
(:func:`check_identifier`, :func:`check_text_field`); a file named from outside is a regular
file, so a FIFO or a device cannot hang a command (:func:`read_file_bytes`).

Every refusal is a :class:`noetic.errors.InvalidValueError` (a :class:`LimitExceeded` for a limit)
naming the source and the problem.
"""

from __future__ import annotations

import json
import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from noetic.errors import InvalidValueError, NotFoundError
from noetic.limits import (
    FILE_BYTES,
    IDENTIFIER_CHARS,
    JSON_DEPTH,
    NUMBER_CHARS,
    TEXT_CHARS,
    InputLimit,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_BRACKET_OR_QUOTE = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


@contextmanager
def _reading(source: str) -> Iterator[None]:
    """An OS error in the block as ours: a missing file a :class:`NotFoundError`, any other an
    :class:`InvalidValueError` saying ``source`` cannot be read."""
    try:
        yield
    except FileNotFoundError:
        raise NotFoundError(f"file not found: {source}") from None
    except OSError as exc:
        raise InvalidValueError(
            f"cannot read {source}: {exc.strerror or exc}", field=source
        ) from None


def check_regular_file(path: Path | str, source: str | None = None) -> None:
    """Refuse ``path`` unless it is a regular file (symlinks followed); missing is NotFoundError.

    Only the kind is looked at: nothing is opened, so a FIFO or a device is refused without
    waiting on it or touching it."""
    source = source or str(path)
    with _reading(source):
        mode = os.stat(path).st_mode
    kind = _kind(mode)
    if kind is not None:
        raise InvalidValueError(
            f"{source} is {kind}, not a regular file; not read",
            field=source,
            value=str(path),
            fix="give the path of a regular file",
        )


def read_file_bytes(
    path: Path | str, source: str | None = None, limit: InputLimit = FILE_BYTES
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (one more is read to tell "at
    the limit" from "over it").

    The kind is checked before opening and again on the open descriptor (opened non-blocking),
    so a file swapped for a FIFO in between is refused too instead of blocking the read."""
    source = source or str(path)
    check_regular_file(path, source)
    with _reading(source):
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        kind = _kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise InvalidValueError(
                f"{source} is {kind}, not a regular file; not read", field=source
            )
        size = os.fstat(fd).st_size
        limit.check(size, source)
        with _reading(source):
            data = fh.read(limit.maximum + 1)
    limit.check(len(data), source)
    return data


def read_optional_text(path: Path | str, source: str | None = None) -> str | None:
    """A configuration file's UTF-8 text under the same rules; None when nothing is there."""
    if not os.path.lexists(path):
        return None
    source = source or str(path)
    return decode_utf8(read_file_bytes(path, source), source, FILE_BYTES)


def decode_utf8(data: bytes, source: str, limit: InputLimit | None = None) -> str:
    """``data`` as text; invalid UTF-8 is refused with the offset of the first bad byte."""
    if limit is not None:
        limit.check(len(data), source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidValueError(
            f"{source} is not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}",
            field=source,
            value=exc.start,
            fix="send UTF-8 text",
        ) from None


def check_text(text: str, source: str) -> str:
    """``text`` unchanged, unless it carries bytes that were not UTF-8 (lone surrogates)."""
    # a surrogate is the one code point UTF-8 cannot encode: the encoder finds the first (no
    # regular expression compiled by every command for its arguments)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidValueError(
            f"{source} is not valid UTF-8: an invalid byte or lone surrogate at character "
            f"{exc.start}",
            field=source,
            value=exc.start,
            fix="send UTF-8 text",
        ) from None
    return text


def check_text_field(value: str, field: str) -> str:
    """A free-text field (task, note, rationale…): valid text within the length limit."""
    TEXT_CHARS.check(len(value), field)
    return check_text(value, field)


def check_identifier(value: str, field: str) -> str:
    """An identifier: not blank, within the length limit, no control characters."""
    IDENTIFIER_CHARS.check(len(value), field)
    check_text(value, field)
    if not value.strip():
        raise InvalidValueError(f"{field} is blank", field=field, value=value)
    for i, char in enumerate(value):
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            raise InvalidValueError(
                f"{field} contains the control character U+{ord(char):04X} at character {i}",
                field=field,
                value=value,
                fix="use printable characters only",
            )
    return value


def check_depth(text: str, source: str) -> None:
    """Refuse JSON nested deeper than :data:`JSON_DEPTH`, in one linear pass over ``text``."""
    if text.count("{") + text.count("[") <= JSON_DEPTH.maximum:
        return  # not as many brackets in all, strings included
    depth = 0
    pos = 0
    search, string_rest = _BRACKET_OR_QUOTE.search, _STRING_REST.match
    while (found := search(text, pos)) is not None:
        char = found.group()
        pos = found.end()
        if char == '"':
            rest = string_rest(text, pos)
            if rest is None:  # an unterminated string: the parser reports it
                return
            pos = rest.end()
        elif char in "[{":
            depth += 1
            if depth > JSON_DEPTH.maximum:
                JSON_DEPTH.check(depth, f"{source} (nested at character {found.start()})")
        else:
            depth -= 1


def _number(convert: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        NUMBER_CHARS.check(len(text), f"the number {text[:20]}…")
        return convert(text)

    return parse


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, str] = {}
    for key, _ in pairs:
        folded = key.casefold()
        if folded in seen:
            other = seen[folded]
            how = "twice" if other == key else "in two spellings that differ only in case"
            raise InvalidValueError(
                f"duplicate keys {other!r} and {key!r}: an object names one key {how}",
                field=key,
                value=[other, key],
                fix="give each key once",
            )
        seen[folded] = key
    return dict(pairs)


def parse_json(text: str, source: str) -> Any:
    """Parse bounded JSON; raises :class:`json.JSONDecodeError` for a syntax error (positions
    relative to ``text``), :class:`InvalidValueError` for a broken rule or limit."""
    check_depth(text, source)
    value = json.loads(
        text,
        parse_int=_number(int),
        parse_float=_number(float),
        object_pairs_hook=_unique_keys,
    )
    if text.isascii() and "\\u" not in text:
        return value  # no escape, no other character: no surrogate either
    try:  # an escape such as "\ud800" decodes to a lone surrogate, which is not text
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError(
            f"{source} holds a string with an escaped lone surrogate (such as \\ud800), "
            "which is not a character",
            field=source,
            fix="send valid Unicode text",
        ) from None
    return value


def load_json(text: str, source: str, limit: InputLimit | None = None) -> Any:
    """Bounded JSON from ``source`` (see the module docstring); every failure a
    :class:`InvalidValueError` naming the source, the problem and where it is."""
    if limit is not None:
        limit.check(len(text), source)
    check_text(text, source)
    try:
        return parse_json(text, source)
    except json.JSONDecodeError as exc:
        raise InvalidValueError(
            f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            field=source,
            value=text[:200],
        ) from None
