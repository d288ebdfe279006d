"""Path patterns of the policy (``~/.ssh/**``, ``{workspace}/.git/hooks``) as regular expressions.

``~`` is the home folder, ``{workspace}`` the workspace's real path, ``*`` matches within one
folder, ``**`` across folders, a trailing ``/**`` a folder and all it holds.

A pattern's expression is compiled the first time a path holding its longest literal part is
asked about: a path that cannot match it (most of them, for most patterns) costs a substring
test, and a hook that checks a few paths compiles a few expressions, not every pattern's.
"""

from __future__ import annotations

import re
from functools import lru_cache


class PathPatterns:
    """The paths any of a tuple of patterns matches (:func:`compile_all`)."""

    __slots__ = ("_parts",)

    def __init__(self, parts: tuple[tuple[str, str], ...]) -> None:
        self._parts = parts  # (expression, a literal every match holds)

    def match(self, path: str) -> bool:
        return any(
            literal in path and _compiled(source).match(path) is not None
            for source, literal in self._parts
        )


@lru_cache(maxsize=256)
def compile_all(patterns: tuple[str, ...], home: str, workspace: str) -> PathPatterns:
    """What matches a path any of ``patterns`` matches."""
    # no pattern: the empty expression, as one expression of none of them would be
    return PathPatterns(tuple(_source(p, home, workspace) for p in patterns) or (("", ""),))


@lru_cache(maxsize=1024)
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile("^(?:" + source + ")$")


@lru_cache(maxsize=1024)
def _source(pattern: str, home: str, workspace: str) -> tuple[str, str]:
    """The regular expression of one pattern, without its anchors, and the longest run of
    literal characters in it (every path it matches holds that run)."""
    if pattern.startswith("~"):
        pattern = home + pattern[1:]
    pattern = pattern.replace("{workspace}", workspace)
    out = []
    literal = longest = ""
    i = 0
    while i < len(pattern):
        wildcard = True
        if pattern.endswith("/**") and i == len(pattern) - 3:  # a folder and all it holds
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            literal += pattern[i]
            wildcard = False
            i += 1
        if wildcard:
            longest, literal = max(longest, literal, key=len), ""
    return "".join(out), max(longest, literal, key=len)
