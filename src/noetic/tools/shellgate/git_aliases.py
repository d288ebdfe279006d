"""git aliases, read from the configuration git reads, so ``git NAME`` is judged as what it runs.

An alias starting with ``!`` is shell code; any other is a git command line. Where the gate
cannot be sure what git would read (an ``[include]``, a continued value) the answer is
:data:`UNKNOWN` and the command is refused as a program the gate does not model.
"""

from __future__ import annotations

import os
import re

UNKNOWN = object()


_SECTION = r'^\s*\[\s*([A-Za-z0-9.-]+)(\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$'
_ENTRY = r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$"
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def lookup(name: str, workspace: str, home: str) -> str | object | None:
    """The value of ``alias.NAME`` git would use in ``workspace``; None when there is none,
    :data:`UNKNOWN` when the gate cannot tell."""
    found: str | None = None
    for path in (
        "/etc/gitconfig",
        os.path.join(home, ".gitconfig"),
        os.path.join(home, ".config", "git", "config"),
        os.path.join(workspace, ".git", "config"),
    ):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return UNKNOWN
        value = _alias(text, name.lower())
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, str):
            found = value
    return found


def _alias(text: str, name: str) -> str | object | None:
    section = ""
    found: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        head = re.match(_SECTION, line)
        if head is not None:
            section = head.group(1).lower() + (" sub" if head.group(2) else "")
            if section.startswith("include"):
                return UNKNOWN  # another file git reads too
            line = head.group(3)
            if not line.strip():
                continue
        if section != "alias":
            continue
        entry = re.match(_ENTRY, line)
        if entry is None:
            return UNKNOWN
        if entry.group(1).lower() != name:
            continue
        value = _value(entry.group(2) or "")
        if value is None:
            return UNKNOWN
        found = value
    return found


def _value(raw: str) -> str | None:
    """A config value as git reads it: quotes removed, escapes replaced, a comment cut; None
    for what this reader does not follow (a line continued with a trailing backslash)."""
    out: list[str] = []
    quoted = False
    for escaped, c in re.findall(r"\\(.?)|(.)", raw, re.DOTALL):  # an escape, or a character
        if not c:
            if escaped not in _ESCAPES:  # an unknown one, or none: continued on the next line
                return None
            out.append(_ESCAPES[escaped])
        elif c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
    if quoted:
        return None
    return "".join(out).strip()
