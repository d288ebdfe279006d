"""Test runs: which command runs a project's tests, and which of its exit statuses are outcomes.

Two places record a command's exit status as the open task's outcome, and both ask this module:
the PostToolUse hook (a Bash command Claude Code ran) and ``noetic run -- CMD``.

**The runner.** A command's words are first reduced to what actually runs, by the shell gate
(:mod:`noetic.tools.shellgate.reduction`). The reduced words name the runner, and each runner
says which exit statuses mean the tests passed or failed (:data:`RUNNERS`); any other status
(interrupted, no tests collected, could not run, killed by a signal) says nothing about the work,
so it is not an outcome.

**The hook's test runs** are the commands configured in ``[outcomes] test_commands``, found
in the command line's syntax tree, not by a string prefix. The exit status Claude Code reports
is the whole line's, so the test run must be the line's last command, reached only through
``&&`` from commands that prepare it or through ``;`` from anything; a line whose operators
hide its status is not recorded, with that reason. ``docs/claude-code.md`` gives the rules with
examples and each runner's statuses.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from noetic.hosts.hooks.shared import one_line
from noetic.named import NamedTuple
from noetic.tools.shellgate.reduction import (
    NPM_FAMILY,
    PROGRAM_ALIASES,
    Reduced,
    operands,
    reduce,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# named tuples, not dataclasses: PostToolUse reads every test run with them, and a hook that
# opens no store need not define dataclasses (nor import the inspect they bring)
class Runner(NamedTuple):
    """How one test runner's exit statuses read: ``passed``/``failed`` are outcomes,
    ``meanings`` names the statuses that are not."""

    name: str
    passed: frozenset[int]
    failed: frozenset[int]
    meanings: tuple[tuple[int, str], ...] = ()

    def meaning(self, code: int) -> str:
        own = dict(self.meanings).get(code) or _SHELL_MEANINGS.get(code)
        if own is not None:
            return own
        if code > 128:
            return f"killed by signal {code - 128}" + (" (interrupted)" if code == 130 else "")
        return "a status this runner does not use for a test result"


_SHELL_MEANINGS = {126: "the command could not be run", 127: "command not found"}
_ANY_FAILURE = frozenset(range(1, 124)) | {125}
RUNNERS: dict[str, Runner] = {
    r.name: r
    for r in (
        Runner(
            "pytest",
            frozenset({0}),
            frozenset({1}),
            (
                (2, "interrupted"),
                (3, "an internal error"),
                (4, "a usage error (bad option or path)"),
                (5, "no tests collected"),
            ),
        ),
        Runner("unittest", frozenset({0}), frozenset({1}), ((5, "no tests ran"),)),
        # a package script's runner sets the status: jest, vitest 1; mocha the failure count
        Runner("npm test", frozenset({0}), _ANY_FAILURE),
        Runner("cargo test", frozenset({0}), frozenset({101}), ((1, "a usage error"),)),
        Runner("go test", frozenset({0}), frozenset({1}), ((2, "a usage error"),)),
        Runner("make", frozenset({0}), frozenset({2}), ((1, "make -q: target not up to date"),)),
        Runner("gradle", frozenset({0}), frozenset({1})),
        Runner("mvn", frozenset({0}), frozenset({1})),
        # any other command: 0 passes, a small status fails; 124 is timeout's own
        Runner("command", frozenset({0}), _ANY_FAILURE, ((124, "timed out"),)),
    )
}


class Status(NamedTuple):
    """What an exit status says: ``score`` 1.0 passed, 0.0 failed, None not an outcome."""

    score: float | None
    meaning: str


def classify(runner: Runner, code: int, *, timed: bool = False) -> Status:
    """What exit status ``code`` of ``runner`` says (``timed``: under ``timeout``, whose 124
    means the time ran out)."""
    if timed and code == 124:
        return Status(None, "timed out (timeout's status 124)")
    if code in runner.passed:
        return Status(1.0, "passed")
    if code in runner.failed:
        return Status(0.0, "failed")
    return Status(None, f"{runner.name} exit {code} means {runner.meaning(code)}")


def runner_of(words: tuple[str, ...]) -> Runner:
    """The runner reduced words name (the generic ``command`` when none)."""
    if not words:
        return RUNNERS["command"]
    head = words[0]
    found = [w for w, _ in operands(list(words))]
    verb = found[0] if found else None
    if head in ("pytest", "unittest", "make", "gradle", "mvn"):
        return RUNNERS[head]
    if head in NPM_FAMILY and verb == "test":
        return RUNNERS["npm test"]
    if head in ("cargo", "go") and verb == "test":
        return RUNNERS[f"{head} test"]
    return RUNNERS["command"]


# a project's own files: does the script or target exist ------------------------------------


def missing_test(words: tuple[str, ...], folders: Iterable[str]) -> str | None:
    """Why ``words`` runs no test in any of ``folders`` (the places it may run), or None: an
    npm-family ``test`` with no real test script, a make target the Makefile lacks."""
    folders = list(folders)
    runner = runner_of(words)
    if runner.name == "npm test" and folders and not any(has_test_script(Path(f)) for f in folders):
        return "package.json has no test script"
    if runner.name == "make" and folders:
        for target in (w for w, _ in operands(list(words)) if "=" not in w):
            if not any(target in make_targets(Path(f)) for f in folders):
                return f"the Makefile has no target {target!r}"
    return None


_PLACEHOLDER = "no test specified"  # what `npm init` writes as the test script


def has_test_script(folder: Path) -> bool:
    """Whether ``folder/package.json`` has a ``test`` script that is not npm init's
    placeholder."""
    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable, not UTF-8 (a ValueError too), not JSON
        data = None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(script, str) and bool(script.strip()) and _PLACEHOLDER not in script


_TARGET = re.compile(r"^([A-Za-z0-9_.\-/ ]+?)\s*:(?!=)", re.MULTILINE)
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
MAX_MAKEFILE_BYTES = 1024 * 1024


def make_targets(folder: Path) -> set[str]:
    """The explicit targets of the Makefile in ``folder`` (rules at the start of a line)."""
    for name in MAKEFILES:
        path = folder / name
        try:
            with path.open("rb") as fh:
                data = fh.read(MAX_MAKEFILE_BYTES)
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace")
        return {target for match in _TARGET.finditer(text) for target in match.group(1).split()}
    return set()


# a Bash line: which configured test command it runs, and whether its status is the line's -----


class Recognised(NamedTuple):
    """A command line whose exit status is that of a configured test command."""

    configured: str
    words: tuple[str, ...]
    runner: Runner
    timed: bool
    prepared_by: tuple[str, ...] = ()
    """The preparing commands (``cd``, ``source``…) the line runs before the test run."""

    def status(self, code: int) -> Status:
        return classify(self.runner, code, timed=self.timed)

    def preparation_failed(self, output: str) -> str | None:
        """The preparing command whose own failure ``output`` shows (``bash: line 1: cd: x: No
        such file or directory``), so a non-zero status is the line's, not the test run's:
        ``cd x && pytest`` stops at the ``cd`` with its status 1, which would otherwise read as
        failing tests. None when the output shows no such error."""
        names = [n for n in self.prepared_by if n in _CAN_FAIL]
        if not names:
            return None
        alternatives = "|".join(re.escape(n) for n in names)
        lines = [x for x in output[-_TAIL_CHARS:].splitlines() if x.strip()]
        last = "\n".join(lines[-_LAST_LINES:])
        found = re.search(_SHELL_ERROR.format(names=alternatives), last)
        return found.group("name") if found else None


class Hidden(NamedTuple):
    """A line that runs a configured test command whose status the line's does not carry."""

    configured: str
    reason: str


# Commands that prepare a test run (`cd x && pytest`): their failure is rare and obvious.
MAX_LINE_CHARS = 65_536
"""A longer line is not parsed (the shell gate's ``MAX_COMMAND_CHARS``: it refuses to judge one
as long): its test run, if any, is not recorded, and ``hooks.log`` says why."""
PREPARING = frozenset(
    {"cd", "pushd", "popd", "export", "set", "unset", "source", ".", "true", ":", "echo",
     "printf", "clear", "deactivate", "ulimit", "umask", "shopt", "hash", "sleep"}
)  # fmt: skip
_CAN_FAIL = frozenset({"cd", "pushd", "popd", "source", ".", "export", "set", "unset", "shopt"})
"""The preparing builtins that fail with a message of their own, naming themselves."""
_SHELL_ERROR = (
    r"(?m)^(?:\S*sh(?::| line \d+:|: line \d+:|: \d+:)[ \t]*)?(?P<name>{names})(?::\d+)?:[ \t]"
)
"""A shell's error line for a builtin: bash's ``bash: line 1: cd: x: No such file or
directory`` (``/bin/bash: cd: …`` too), dash's ``sh: 1: cd: can't cd to x``, zsh's
``zsh:cd:1: no such file or directory: x`` or an interactive ``cd: no such file or directory:
x``."""
_TAIL_CHARS = 65_536
_LAST_LINES = 3
"""Only the output's last lines are searched: with ``&&`` nothing runs after a failed
preparation, so its error ends the output, where a test run's output ends in its summary (and a
test that prints such a line does so above it)."""
_GAP = re.compile(r"\s+|#[^\n]*|&&|\|\||\|&|;;|[;&|(){}\n!]")


def key_words(configured: str) -> tuple[str, ...] | None:
    """The words of a configured test command that a run must start with: its reduced words
    up to the first option or path (``go test ./...`` → ``go test``)."""
    import shlex

    try:
        words = shlex.split(configured)
    except ValueError:
        return None
    reduced = reduce(words).words
    if not reduced:
        return None
    key = [reduced[0]]
    for word in reduced[1:]:
        if word.startswith("-") or "/" in word or "=" in word or word.startswith("."):
            break
        key.append(word)
    return tuple(key)


def _matches(key: tuple[str, ...], words: tuple[str, ...]) -> bool:
    if not words or words[0] != key[0]:
        return False
    return [w for w, _ in operands(list(words))][: len(key) - 1] == list(key[1:])


def recognise(
    command: str, configured: list[str], *, workspace: str, cwd: str, home: str
) -> Recognised | Hidden | None:
    """The configured test command ``command`` runs (:class:`Recognised`), one it runs but whose
    status the line hides (:class:`Hidden`, with the reason), or None: no test run here."""
    keys = [(c, k) for c in configured if (k := key_words(c)) is not None]
    heads = {k[0] for _, k in keys}
    names = heads | {a for a, b in PROGRAM_ALIASES.items() if b in heads}
    if not keys or not any(name in command for name in names):
        return None  # the common case, answered without parsing
    if len(command) > MAX_LINE_CHARS:  # the gate would refuse to judge it: no parse either
        named = next(c for c, k in keys if k[0] in command or k[0] in names)
        return Hidden(
            named,
            f"the command line is {len(command):,} characters, over the {MAX_LINE_CHARS:,} "
            "the shell gate parses",
        )
    from noetic.tools.shellgate.syntax import TooComplex, Unparseable, parse

    try:
        script = parse(command, home=home, workspace=workspace, cwd=cwd)
    except (Unparseable, TooComplex, RecursionError):
        return None
    ordered = sorted(script.commands, key=lambda c: c.start)
    top = _top_level(ordered)
    runs = {id(c): m for c in ordered if (m := _match(c, keys)) is not None}
    if not runs:
        return None
    test = next((c for c in reversed(top) if id(c) in runs), None)
    if test is None:
        first, _ = next(iter(runs.values()))
        return Hidden(first, "the test command runs inside a command substitution")
    configured_name, reduced = runs[id(test)]
    after = top[top.index(test) + 1 :][:1]  # a pipe's next part is the next top-level command
    downstream = next((c for c in after if any(u is test for u in c.upstream)), None)
    if downstream is not None:
        return Hidden(
            configured_name, f"a pipe into `{downstream.text}` hides the test run's exit status"
        )
    reason = _operators(command, script, top)
    if reason is not None:
        return Hidden(configured_name, reason)
    if top[-1] is not test:
        return Hidden(
            configured_name,
            f"`{one_line(top[-1].text, 80)}` runs after the test run, so the line's exit status is "
            "not the test's",
        )
    reason = _chain(command, script, top, runs)
    if reason is not None:
        return Hidden(configured_name, reason)
    folders = sorted(test.cwds) if test.cwds is not None else []
    missing = missing_test(reduced.words, folders)
    if missing is not None:
        return Hidden(configured_name, missing)
    before = top[: top.index(test)]
    prepared = tuple(
        dict.fromkeys(
            os.path.basename(c.name.value)
            for c in before
            if c.name is not None and c.name.value is not None and _preparing(c)
        )
    )
    return Recognised(
        configured_name, reduced.words, runner_of(reduced.words), reduced.timed, prepared
    )


def _top_level(ordered: list[Any]) -> list[Any]:
    """The commands no other command's text contains, in order, in one pass.

    Commands' texts nest or do not overlap (a command substitution lies inside the command
    holding it), so walking them by start, longest first, a command starting before the end
    of the last top-level one lies inside it — unless it is the very same text (a command and
    what it wraps), which counts as top-level as well. Comparing every pair instead cost the
    square of the number of commands: minutes for a long ``a; b; c; …`` line."""
    top: list[Any] = []
    reach = -1
    span: tuple[int, int] | None = None
    for cmd in sorted(ordered, key=lambda c: (c.start, -len(c.text))):
        here = (cmd.start, len(cmd.text))
        if cmd.start >= reach or here == span:
            top.append(cmd)
            reach = max(reach, cmd.start + len(cmd.text))
            span = here
    return sorted(top, key=lambda c: c.start)


def _match(cmd: Any, keys: list[tuple[str, tuple[str, ...]]]) -> tuple[str, Reduced] | None:
    if cmd.name is None or cmd.keyword is not None or cmd.name.value is None:
        return None
    words = [cmd.name.value, *(a.value if a.value is not None else a.text for a in cmd.args)]
    reduced = reduce(words)
    for configured, key in keys:
        if _matches(key, reduced.words):
            return configured, reduced
    return None


def _between(command: str, script: Any, top: list[Any]) -> list[str]:
    """The text before, between and after the top-level commands, redirections blanked
    (``pytest 2>&1``, ``(…) > log`` hold no operator)."""
    text = list(command)
    for r in script.redirects:
        text[r.start : r.start + len(r.text)] = " " * len(r.text)
    flat = "".join(text)
    ends = [c.start + len(c.text) for c in top]
    starts = [c.start for c in top[1:]] + [len(flat)]
    return [flat[: top[0].start]] + [flat[e:s] for e, s in zip(ends, starts, strict=True)]


def _operators(command: str, script: Any, top: list[Any]) -> str | None:
    """Why the line's operators hide every status but the last one's, if they do."""
    for piece in _between(command, script, top):
        tokens = _tokens(piece)
        if tokens is None:
            return "the test run is inside a loop or condition"
        if "||" in tokens:
            return "`||` hides the test run's failure"
        if "&" in tokens:
            return "the command runs in the background"
        if "!" in tokens:
            return "`!` inverts the exit status"
        if "|" in tokens or "|&" in tokens:
            return "a pipe hides the test run's exit status"
    return None


def _chain(command: str, script: Any, top: list[Any], runs: dict[int, Any]) -> str | None:
    """Why a command before the test run could set the line's status, if one could: a
    failed test chained by ``;`` (a later command runs), or something other than preparation
    chained by ``&&`` (its failure stops the line with its own status)."""
    gaps = _between(command, script, top)[1:]
    for cmd, gap in zip(top, gaps[:-1], strict=False):
        chained = "&&" in (_tokens(gap) or [])
        if id(cmd) in runs and not chained:
            return f"a later command runs whatever `{one_line(cmd.text, 80)}` gives"
        if chained and id(cmd) not in runs and not _preparing(cmd):
            return (
                f"`{one_line(cmd.text, 80)}` runs before the test run with `&&`, so its own "
                "failure would be the line's exit status"
            )
    return None


def _tokens(piece: str) -> list[str] | None:
    """The operators in the text between two commands; None when something else is there
    (``if``, ``for``, ``do``… : a compound command)."""
    found: list[str] = []
    at = 0
    while at < len(piece):
        m = _GAP.match(piece, at)
        if m is None:
            return None
        token = m.group(0)
        if not token.isspace() and not token.startswith("#"):
            found.append(token)
        at = m.end()
    return found


def _preparing(cmd: Any) -> bool:
    if cmd.name is None:
        return True  # a bare NAME=value
    return cmd.name.value is not None and os.path.basename(cmd.name.value) in PREPARING


def run_status(argv: list[str], code: int, cwd: Path) -> Status:
    """What ``noetic run -- ARGV``'s exit status says (no configuration: the runner decides)."""
    reduced = reduce(argv)
    missing = missing_test(reduced.words, [str(cwd)])
    if missing is not None:
        return Status(None, missing)
    return classify(runner_of(reduced.words), code, timed=reduced.timed)
