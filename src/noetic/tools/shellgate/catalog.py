"""What the policy says about command names and secret paths, worked out once per policy.

The judge asks these for every command: which names the policy judges (so a command it does
not know is judged from the first operand naming one), and which folders hold a secret (so a
command reading a whole folder reads them).
"""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

from noetic.tools.shellgate.policy import Policy
from noetic.tools.shellgate.table import PROGRAMS

_CONCERNS: dict[int, tuple[Policy, frozenset[str]]] = {}
_SECRET_FOLDERS: dict[tuple[int, str, str], tuple[Policy, list[tuple[str, str]]]] = {}


def secret_folders(policy: Policy, home: str, workspace: str) -> list[tuple[str, str]]:
    """(rule, folder) for each read rule's path pattern with a fixed folder (``~/.ssh/**`` is
    ``~/.ssh``; ``**/*.pem`` has none)."""
    key = (id(policy), home, workspace)
    kept = _SECRET_FOLDERS.get(key)
    if kept is not None and kept[0] is policy:
        return kept[1]
    found: list[tuple[str, str]] = []
    for rule in policy.rules:
        for m in rule.match:
            if not m.paths or m.access != "read":
                continue
            for pattern in m.paths:
                path = home + pattern[1:] if pattern.startswith("~") else pattern
                path = path.replace("{workspace}", workspace)
                fixed = re.split(r"[*?\[]", path, maxsplit=1)[0]
                entry = fixed.rstrip("/")  # a folder (`~/.ssh/`) or a file's name (`/etc/shadow`)
                if entry.startswith("/") and entry.count("/") >= 2:
                    found.append((rule.id, entry))
    if len(_SECRET_FOLDERS) > 64:
        _SECRET_FOLDERS.clear()
    _SECRET_FOLDERS[key] = (policy, found)
    return found


def concerns(policy: Policy) -> frozenset[str]:
    """Every command name the policy has something to say about (kept per policy)."""
    kept = _CONCERNS.get(id(policy))
    if kept is not None and kept[0] is policy:
        return kept[1]
    names = {
        *policy.writers, *policy.shells, *policy.wrappers, *policy.evaluators,
        *policy.downloaders, *policy.network_clients, *policy.programs, "git",
        *(n for n in policy.interpreters if not any(c in n for c in "*?[")),
        *(key.split(" ")[0] for key in policy.runs), *PROGRAMS,
    }  # fmt: skip
    for rule in policy.rules:
        for m in rule.match:
            names |= {n for n in m.command if not any(c in n for c in "*?[")}
    names -= {".", ":", "[", "true", "false"}  # as an operand these are paths and values
    if len(_CONCERNS) > 64:
        _CONCERNS.clear()
    _CONCERNS[id(policy)] = (policy, frozenset(names))
    return _CONCERNS[id(policy)][1]


def fits_name(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@lru_cache(maxsize=512)
def name_globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression for a list of shell-style name globs (command names)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
