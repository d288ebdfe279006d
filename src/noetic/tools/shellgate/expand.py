"""Bash's brace and tilde expansion on a word whose characters are known.

A word reaches here as characters each marked quoted or not (``'a'{b,c}`` is ``a`` quoted, then
``{b,c}`` bare). Bash expands braces first, on bare characters only — ``{~,x}`` becomes ``~`` and
``x``, ``x{1..3}`` becomes ``x1 x2 x3`` — then a bare ``~`` at the start of each resulting word.
The gate must see the words bash will run, so ``rm -rf {~,x}`` is judged as ``rm -rf ~ x``.
An expansion into more than :data:`MAX_WORDS` words is not attempted: the caller treats the word
as unknown.
"""

from __future__ import annotations

import itertools
import re

MAX_WORDS = 256

Chars = list[tuple[str, bool]]  # (character, quoted)


_SEQUENCE = r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$"


class TooMany(Exception):
    """The word expands into more than :data:`MAX_WORDS` words."""


def braces(chars: Chars) -> list[Chars]:
    """The words ``chars`` expands into (itself alone when it holds no brace expansion)."""
    out = _expand(chars)
    if len(out) > MAX_WORDS:
        raise TooMany
    return out


def _expand(chars: Chars) -> list[Chars]:
    start = 0
    while True:
        found = _first_brace(chars, start)
        if found is None:
            return [chars]
        open_, close, parts = found
        if parts is None:  # `{x}` or a `{` bash leaves alone: look further along
            start = open_ + 1
            continue
        head, tail = chars[:open_], chars[close + 1 :]
        words: list[Chars] = []
        for part in parts:
            for rest in _expand(head + part + tail):
                words.append(rest)
                if len(words) > MAX_WORDS:
                    raise TooMany
        return words


def _first_brace(chars: Chars, start: int) -> tuple[int, int, list[Chars] | None] | None:
    """The first bare ``{`` from ``start`` with its matching ``}`` and the alternatives inside."""
    for i in range(start, len(chars)):
        c, quoted = chars[i]
        if c != "{" or quoted or (i > 0 and chars[i - 1] == ("$", False)):
            continue
        depth = 0
        commas: list[int] = []
        for j in range(i, len(chars)):
            d, q = chars[j]
            if q:
                continue
            if d == "{":
                depth += 1
            elif d == "}":
                depth -= 1
                if depth == 0:
                    if commas:
                        bounds = itertools.pairwise([i, *commas, j])
                        return i, j, [chars[a + 1 : b] for a, b in bounds]
                    return i, j, _sequence(chars[i + 1 : j])
            elif d == "," and depth == 1:
                commas.append(j)
        return None  # no matching brace: the rest is literal
    return None


def _sequence(inner: Chars) -> list[Chars] | None:
    """``1..5``, ``a..e``, ``10..1..3``: the terms, or None when ``inner`` is not a sequence."""
    if any(q for _, q in inner):
        return None
    m = re.match(_SEQUENCE, "".join(c for c, _ in inner))
    if m is None:
        return None
    first, last, step_text = m.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step + 1 > MAX_WORDS:
            raise TooMany
        width = max(len(first), len(last)) if first.lstrip("-").startswith("0") else 0
        terms = [str(n).zfill(width) for n in _range(a, b, step)]
    elif first.isalpha() and last.isalpha() and len(first) == len(last) == 1:
        terms = [chr(n) for n in _range(ord(first), ord(last), step)]
    else:
        return None
    return [[(c, False) for c in term] for term in terms]


def _range(a: int, b: int, step: int) -> range:
    return range(a, b + 1, step) if b >= a else range(a, b - 1, -step)


def tilde(chars: Chars, home: str, cwd: str | None) -> str | None:
    """The text of one word after tilde expansion; None when it names what the gate cannot
    know (``~user``, ``~-``)."""
    text = "".join(c for c, _ in chars)
    if not chars or chars[0] != ("~", False):
        return text
    end = next((i for i, (c, _) in enumerate(chars) if c == "/"), len(chars))
    head = chars[:end]
    if any(q for _, q in head):
        return text  # `~"user"` is not expanded
    name = "".join(c for c, _ in head)
    rest = text[end:]
    if name == "~":
        return home + rest
    if name == "~+" and cwd is not None:
        return cwd + rest
    return None


def globbed(chars: Chars) -> bool:
    """Whether a bare glob character (``*``, ``?``, ``[``) is left in the word."""
    return any(c in "*?[" and not q for c, q in chars)


_ANSI_C_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


_ANSI_C_ESCAPE = (
    r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|(c)|(.?))"
)


def unescape_ansi_c(body: str) -> str | None:
    """The value of ``$'body'`` as bash gives it; None where it is a byte that is not text
    (an octal or hex escape above 0x7f, an invalid code point) or a control escape (``\\c``),
    so the gate treats the word as unknown rather than guess."""
    unknown = False

    def one(m: re.Match[str]) -> str:
        nonlocal unknown
        octal, hexa, short, long, control, other = m.groups()
        number = octal or hexa or short or long
        if number is not None:
            code = int(number, 8 if octal else 16)
            if ((octal or hexa) and code > 0x7F) or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                unknown = True
                return ""
            return chr(code)
        if control is not None:
            unknown = True
            return ""
        return _ANSI_C_SIMPLE.get(other, "\\" + other)  # bash keeps an unknown escape

    value = re.sub(_ANSI_C_ESCAPE, one, body, flags=re.DOTALL)
    return None if unknown else value
