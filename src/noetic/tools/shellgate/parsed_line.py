"""A parsed command line as flat records: what :mod:`.syntax` makes of the syntax tree.

A :class:`Script` is everything the line would run: each simple command (:class:`Command`) with
its name and arguments as :class:`Word` s and its redirections (:class:`Redirect`), and the
functions it defines (:class:`Function`). The judge and the checks of particular programs read
these; they need not know the grammar.
"""

from __future__ import annotations

# The records are named tuples, and a plain class for the one the parser changes as it reads
# on (a command's input, its redirections): not dataclasses, which a hook would define in every
# process it starts, at half a millisecond each.
from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Word(NamedTuple):
    """One word of a command. ``value`` is None when an expansion hides what it will be."""

    text: str
    value: str | None
    glob: bool = False
    start: int = 0


class Redirect(NamedTuple):
    operator: str
    target: Word | None
    text: str
    start: int
    cwds: frozenset[str] | None
    descriptor: str | None = None

    @property
    def writes(self) -> bool:
        return self.operator in {">", ">>", ">|", "&>", "&>>", ">&"} and not (
            self.target is not None and (self.target.value or "").isdigit()
        )


class Command:
    """A simple command that could run: ``name`` (None for a bare assignment) and ``args``;
    ``stdin`` is "pipe", "heredoc", "herestring" or "file", ``stdin_text`` what a quoted
    here-document or a here-string feeds it, ``keyword`` the builtin this record stands for
    (export, declare, unset…)."""

    __slots__ = (
        "args",
        "assignments",
        "cwds",
        "keyword",
        "name",
        "redirects",
        "start",
        "stdin",
        "stdin_text",
        "substitutions",
        "text",
        "upstream",
    )

    def __init__(
        self,
        name: Word | None,
        args: list[Word],
        text: str,
        start: int,
        cwds: frozenset[str] | None,
        assignments: list[tuple[str, Word | None]] | None = None,
        redirects: list[Redirect] | None = None,
        stdin: str | None = None,
        stdin_text: str | None = None,
        upstream: list[Command] | None = None,
        substitutions: list[Command] | None = None,
        keyword: str | None = None,
    ) -> None:
        self.name = name
        self.args = args
        self.text = text
        self.start = start
        self.cwds = cwds
        self.assignments = [] if assignments is None else assignments
        self.redirects = [] if redirects is None else redirects
        self.stdin = stdin
        self.stdin_text = stdin_text
        self.upstream = [] if upstream is None else upstream
        self.substitutions = [] if substitutions is None else substitutions
        self.keyword = keyword

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Command):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # it changes as the parser reads on

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"Command({shown})"

    def moved(self, cwds: frozenset[str] | None) -> Command:
        """The same command run from ``cwds`` (None: a folder nobody knows)."""
        fields = dict(zip(self.__slots__, self._fields(), strict=True))
        return Command(**{**fields, "cwds": cwds})


class Function(NamedTuple):
    name: str
    text: str
    start: int
    calls: list[Command]


class Script(NamedTuple):
    """Everything a command line would run; ``evaluated`` is a literal ``$(…)`` where bash
    evaluates text as code."""

    text: str
    commands: list[Command]
    redirects: list[Redirect]
    functions: list[Function]
    links: dict[str, str | None]
    evaluated: tuple[str, int] | None = None

    def argv(self) -> list[Word] | None:
        """The words of a line that is one plain command — no pipe, list, redirection,
        assignment, substitution or unknown word — which can run without a shell; else None."""
        if len(self.commands) != 1 or self.redirects or self.functions:
            return None
        cmd = self.commands[0]
        if cmd.name is None or cmd.keyword or cmd.assignments or cmd.substitutions:
            return None
        if cmd.stdin is not None or cmd.text.strip() != self.text.strip():
            return None
        words = [cmd.name, *cmd.args]
        if any(w.value is None or (w.glob and "{" in w.text) for w in words):
            return None
        return words
