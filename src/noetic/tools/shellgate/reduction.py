"""A simple command's words reduced to what actually runs.

``VAR=value`` prefixes, ``env``/``nice``/``nohup``/``time``/``timeout``, ``uv run``/``poetry
run``/``pipenv run``/``npx``/``pnpm exec``/``bunx`` (not ``pdm``/``hatch``/``rye run``, which
run a project's scripts by name), ``python -m``, ``coverage run -m`` and a path before the
program (``.venv/bin/pytest``) are taken away, and ``npm run test``/``npm t`` read as ``npm
test`` (:func:`reduce`); :func:`operands` finds a command's subcommand among its options.

Two readers of a command line use it: the irreversible class of the PreToolUse hook
(:mod:`noetic.hosts.hooks.irreversible`: is this a push, a publish, a migration) and the test
runs (:mod:`noetic.hosts.testing.commands`: is this ``pytest``). It imports nothing of Noetic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from noetic.named import NamedTuple

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"^(python|python3|python3\.\d+|py|pypy3?)$")
# wrapper → its options that take a value; it then runs the rest of the words
_WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "npx": frozenset({"-p", "--package", "-c", "--call"}),
    "bunx": frozenset({"-p", "--package"}),
}
# `TOOL run …` (and `pnpm exec …`): the options each takes with a value
_RUN_VERBS: dict[tuple[str, str], frozenset[str]] = {
    ("uv", "run"): frozenset(
        {
            "--with",
            "--with-editable",
            "--with-requirements",
            "--python",
            "-p",
            "--extra",
            "--group",
            "--only-group",
            "--package",
            "--project",
            "--directory",
            "--env-file",
            "--index",
            "--default-index",
            "--index-url",
            "-i",
            "--extra-index-url",
            "--find-links",
            "-f",
            "--config-file",
            "--cache-dir",
        }
    ),
    ("poetry", "run"): frozenset({"-C", "--directory", "-P", "--project"}),
    ("pipenv", "run"): frozenset(),
    ("pnpm", "exec"): frozenset({"-C", "--dir"}),
    ("coverage", "run"): frozenset({"--rcfile", "--source", "--omit", "--include", "--data-file"}),
}
_PYTHON_VALUE_OPTIONS = frozenset({"-W", "-X", "-c"})
# another name of the same program (a wrapper script, an old name)
PROGRAM_ALIASES = {"py.test": "pytest", "gradlew": "gradle", "mvnw": "mvn", "gmake": "make"}
NPM_FAMILY = frozenset({"npm", "pnpm", "yarn", "bun"})
_NPM_TEST = frozenset({"test", "t", "tst"})
# options taking a value, per tool, so the words after them are not read as subcommands
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "make": frozenset({"-C", "--directory", "-f", "--file", "--makefile", "-I", "-o", "-W"}),
    "gradle": frozenset({"-p", "--project-dir", "-b", "--build-file", "-x", "--exclude-task"}),
    "mvn": frozenset({"-f", "--file", "-pl", "--projects", "-P", "--activate-profiles"}),
    "npm": frozenset({"--prefix", "-w", "--workspace"}),
    "pnpm": frozenset({"-C", "--dir", "--filter", "-F"}),
    "yarn": frozenset({"--cwd"}),
    "cargo": frozenset({"--manifest-path", "-p", "--package", "--target", "-j", "--jobs"}),
    "go": frozenset(),
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}),
    "kubectl": frozenset({"-n", "--namespace", "--context", "--kubeconfig", "--cluster"}),
    "helm": frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"}),
}
MAX_UNWRAP = 8


class Reduced(NamedTuple):
    """A command's words reduced to what runs (see the module docstring)."""

    words: tuple[str, ...]
    timed: bool = False  # run under `timeout`


def reduce(words: Iterable[str]) -> Reduced:
    """The words that actually run, ``VAR=value`` prefixes and wrappers taken away."""
    rest = list(words)
    timed = False
    for _ in range(MAX_UNWRAP):
        while rest and _ASSIGNMENT.match(rest[0]):
            rest.pop(0)
        if not rest:
            break
        head = os.path.basename(rest[0])
        if head in _WRAPPERS:
            timed = timed or head == "timeout"
            rest = _after_options(rest[1:], _WRAPPERS[head], positional=head == "timeout")
            continue
        verb = next((w for w in rest[1:2]), None)
        if verb is not None and (head, verb) in _RUN_VERBS:
            rest = _after_options(rest[2:], _RUN_VERBS[(head, verb)])
            if head == "coverage" and rest[:1] == ["-m"]:
                rest = rest[1:]
            continue
        if _PYTHON.match(head):
            module = _python_module(rest[1:])
            if module is None:
                break
            rest = module
            continue
        break
    if rest:
        head = os.path.basename(rest[0])
        rest = [PROGRAM_ALIASES.get(head, head), *rest[1:]]
        if rest[0] in NPM_FAMILY:
            rest = _npm_test(rest)
    return Reduced(tuple(rest), timed)


def _after_options(
    words: list[str], takes_value: frozenset[str], *, positional: bool = False
) -> list[str]:
    """The words after a wrapper's options (and ``timeout``'s duration)."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return words[i + 1 :]
        if word.startswith("-") and len(word) > 1:
            i += 2 if word in takes_value else 1
            continue
        if _ASSIGNMENT.match(word):  # env NAME=value
            i += 1
            continue
        if positional:
            positional = False
            i += 1
            continue
        return words[i:]
    return []


def _python_module(args: list[str]) -> list[str] | None:
    """``python [opts] -m MODULE args`` → ``[MODULE, *args]``; None for anything else."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "-m" and i + 1 < len(args):
            return args[i + 1 :]
        if word.startswith("-m") and len(word) > 2:
            return [word[2:], *args[i + 1 :]]
        if word.startswith("-") and len(word) > 1 and word != "-":
            i += 2 if word in _PYTHON_VALUE_OPTIONS else 1
            continue
        return None
    return None


def _npm_test(words: list[str]) -> list[str]:
    """``npm run test``, ``npm run-script test``, ``npm t`` → ``npm test …``."""
    sub = operands(words)
    if not sub:
        return words
    first, index = sub[0]
    if first in _NPM_TEST:
        return [words[0], "test", *words[index + 1 :]]
    if first in ("run", "run-script") and len(sub) > 1 and sub[1][0] == "test":
        return [words[0], "test", *words[sub[1][1] + 1 :]]
    return words


def operands(words: list[str]) -> list[tuple[str, int]]:
    """The words after the first that are not options (or an option's value, for the tools in
    :data:`_VALUE_OPTIONS`), with their positions."""
    takes = _VALUE_OPTIONS.get(words[0], frozenset())
    found: list[tuple[str, int]] = []
    skip = False
    for i, word in enumerate(words[1:], start=1):
        if skip:
            skip = False
            continue
        if word == "--":
            break
        if word.startswith("-") and len(word) > 1:
            skip = word in takes or (
                words[0] == "make" and word in ("-j", "-l") and _next_is_number(words, i)
            )
            continue
        found.append((word, i))
    return found


def _next_is_number(words: list[str], i: int) -> bool:
    return i + 1 < len(words) and words[i + 1].isdigit()
