"""Path patterns of the policy (``~/.ssh/**``, ``{workspace}/.git/hooks``) as regular expressions.

``~`` is the home folder, ``{workspace}`` the workspace's real path, ``*`` matches within one
folder, ``**`` across folders, a trailing ``/**`` a folder and all it holds.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_all(patterns: tuple[str, ...], home: str, workspace: str) -> re.Pattern[str]:
    """One regular expression matching a path any of ``patterns`` matches (compiled once: the
    patterns' own expressions are text until then)."""
    parts = [_source(p, home, workspace) for p in patterns]
    return re.compile("^(?:" + "|".join(parts) + ")$")


@lru_cache(maxsize=1024)
def _source(pattern: str, home: str, workspace: str) -> str:
    """The regular expression of one pattern, without its anchors."""
    if pattern.startswith("~"):
        pattern = home + pattern[1:]
    pattern = pattern.replace("{workspace}", workspace)
    out = []
    i = 0
    while i < len(pattern):
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
            i += 1
    return "".join(out)
