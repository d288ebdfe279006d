"""What the policy says about command names and secret paths, worked out once per policy.

The judge asks these for every command: which names the policy judges (so a command it does
not know is judged from the first operand naming one), and which folders hold a secret (so a
command reading a whole folder reads them).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from functools import lru_cache

from noetic.tools.shellgate.effects_table import PROGRAMS
from noetic.tools.shellgate.parsed_line import Word
from noetic.tools.shellgate.path_patterns import PathPatterns, compile_all
from noetic.tools.shellgate.policy import Policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Concatenate, ParamSpec, TypeVar

    P = ParamSpec("P")
    V = TypeVar("V")


def _per_policy(build: Callable[Concatenate[Policy, P], V]) -> Callable[Concatenate[Policy, P], V]:
    """``build(policy, …)``, kept under the policy's id and the other arguments while that id is
    still the policy's: an id may be reused once its policy is gone."""
    store: dict[tuple[Any, ...], tuple[Policy, V]] = {}

    def kept(policy: Policy, /, *args: P.args, **kwargs: P.kwargs) -> V:
        key = (id(policy), *args, *sorted(kwargs.items()))
        found = store.get(key)
        if found is not None and found[0] is policy:
            return found[1]
        value = build(policy, *args, **kwargs)
        if len(store) > 64:
            store.clear()
        store[key] = (policy, value)
        return value

    return kept


@_per_policy
def secret_folders(policy: Policy, home: str, workspace: str) -> list[tuple[str, str]]:
    """(rule, folder) for each read rule's path pattern with a fixed folder (``~/.ssh/**`` is
    ``~/.ssh``; ``**/*.pem`` has none)."""
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
    return found


@_per_policy
def concerns(policy: Policy) -> frozenset[str]:
    """Every command name the policy has something to say about (kept per policy)."""
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
    return frozenset(names)


@_per_policy
def interpreter_flags(policy: Policy, base: str) -> tuple[str, ...] | None:
    """The code options of the interpreter ``base`` is (``perl5.36.0`` is ``perl5*``), or
    None when it is none; kept per policy."""
    found = policy.interpreters.get(base)
    if found is None:
        for pattern, flags in policy.interpreters.items():
            if any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(base, pattern):
                found = flags
                break
    return found


def names_fit(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``name`` matches one of the shell-style name globs ``patterns``: a name spelled
    out is compared, only the globs are compiled."""
    literal, wild = _split_globs(patterns)
    return name in literal or (bool(wild) and name_globs(wild).match(name) is not None)


@lru_cache(maxsize=512)
def _split_globs(patterns: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    wild = tuple(p for p in patterns if any(c in p for c in "*?["))
    return frozenset(p for p in patterns if p not in wild), wild


@lru_cache(maxsize=512)
def name_globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression for a list of shell-style name globs (command names)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


_UNKNOWN_PART = r"\$\([^)]*\)|`[^`]*`|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9$!?#*@-]"
_OTHER_HOMES = ("/root", "/home/*", "/Users/*")


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s not in ("", ".")]


def _fixed(glob: str) -> tuple[str, str]:
    """The literal head and tail of one segment's glob (``id_*`` is ``id_``, ``""``)."""
    parts = re.split(r"\*|\?|\[[^]]*\]", glob)
    return parts[0], parts[-1]


def _segment_meets(a: str, b: str) -> bool:
    wild_a, wild_b = any(c in a for c in "*?["), any(c in b for c in "*?[")
    if not wild_a and not wild_b:
        return a == b
    if not wild_a or not wild_b:
        literal, glob = (a, b) if not wild_a else (b, a)
        return fnmatch.fnmatchcase(literal, glob)
    (head_a, tail_a), (head_b, tail_b) = _fixed(a), _fixed(b)
    heads = head_a.startswith(head_b) or head_b.startswith(head_a)
    tails = tail_a.endswith(tail_b) or tail_b.endswith(tail_a)
    return heads and tails


def _meets(a: list[str], b: list[str]) -> bool:
    """Whether some path matches both segment globs (``**`` spans any number of segments);
    where both hold wildcards, an overlap of their literal ends is taken as a meeting."""
    if not a or not b:
        return all(s == "**" for s in a + b)
    if a[0] == "**":
        return _meets(a[1:], b) or _meets(a, b[1:])
    if b[0] == "**":
        return _meets(a, b[1:]) or _meets(a[1:], b)
    return _segment_meets(a[0], b[0]) and _meets(a[1:], b[1:])


@_per_policy
def _protected(
    policy: Policy, home: str, workspace: str, write: bool
) -> list[tuple[str, list[str]]]:
    """(rule, segments) for every path pattern of ``policy``; a pattern under ``~`` also for
    other users' home folders."""
    found: list[tuple[str, list[str]]] = []
    for rule in policy.rules:
        for m in rule.match:
            if not m.paths or (m.access == "write" and not write):
                continue
            for pattern in m.paths:
                pattern = pattern.replace("{workspace}", workspace)
                homes = (home, *_OTHER_HOMES) if pattern.startswith("~") else ("",)
                for where in homes:
                    path = where + pattern[1:] if pattern.startswith("~") else pattern
                    segments = _segments(path)
                    if not path.startswith("/"):
                        segments = ["**", *segments]
                    found.append((rule.id, segments))
    return found


@_per_policy
def _other_homes(policy: Policy, workspace: str, write: bool) -> list[tuple[str, PathPatterns]]:
    """(rule, regular expression) for the patterns under ``~`` of each path rule, in every
    other user's home folder (``/root``, ``/home/*``, ``/Users/*``)."""
    found: list[tuple[str, PathPatterns]] = []
    for rule in policy.rules:
        for m in rule.match:
            tilde = tuple(p for p in m.paths if p.startswith("~"))
            if tilde and (m.access != "write" or write):
                found += [(rule.id, compile_all(tilde, h, workspace)) for h in _OTHER_HOMES]
    return found


def may_name(
    policy: Policy, word: Word, home: str, workspace: str, *, write: bool
) -> list[tuple[str, str]]:
    """(rule, pattern) for each protected path a word the gate cannot resolve may name: a glob
    (``/root/.ss?/id_*``) or a word holding a variable (``/proc/$PPID/environ``), whose unknown
    parts may be anything."""
    if word.value is not None and not word.glob:  # a path spelled out: other users' homes
        path = os.path.normpath(word.value)
        return [
            (rule, path)
            for rule, pattern in _other_homes(policy, workspace, write)
            if pattern.match(path)
        ]
    text = word.value
    if text is None:
        text = re.sub(_UNKNOWN_PART, "\0", word.text.replace("'", "").replace('"', ""))
    if text.startswith("~"):
        text = home + text[1:]
    if not text.startswith(("/", "\0")):
        return []  # relative: judged where it lands by the command's own rules
    segments = ["**" if s == "\0" else s.replace("\0", "*") for s in _segments(text)]
    if all(s in ("*", "**") for s in segments):
        return []  # `/*`, `$X/*`: says nothing about what it names
    hits: list[tuple[str, str]] = []
    for rule, pattern in _protected(policy, home, workspace, write):
        if rule not in (r for r, _ in hits) and _meets(segments, pattern):
            hits.append((rule, "/" + "/".join(pattern)))
    return hits
