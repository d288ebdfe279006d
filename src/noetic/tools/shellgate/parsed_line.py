"""A parsed command line as flat records: what :mod:`.syntax` makes of the syntax tree.

A :class:`Script` is everything the line would run: each simple command (:class:`Command`) with
its name and arguments as :class:`Word` s and its redirections (:class:`Redirect`), and the
functions it defines (:class:`Function`). The judge and the checks of particular programs read
these; they need not know the grammar.
"""

from __future__ import annotations

from typing import Any, NamedTuple

# The records are a named tuple and plain classes, not dataclasses: a hook defines them in every
# process it starts, and a dataclass costs half a millisecond to define.


class Word(NamedTuple):
    """One word of a command. ``value`` is None when an expansion hides what it will be."""

    text: str
    value: str | None
    glob: bool = False
    start: int = 0


class _Record:
    """Equal when of one class with equal fields (``__slots__``), shown with them."""

    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Record)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq is

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Redirect(_Record):
    __slots__ = ("cwds", "descriptor", "operator", "start", "target", "text")

    def __init__(
        self,
        operator: str,
        target: Word | None,
        text: str,
        start: int,
        cwds: frozenset[str] | None,
        descriptor: str | None = None,
    ) -> None:
        self.operator = operator
        self.target = target
        self.text = text
        self.start = start
        self.cwds = cwds
        self.descriptor = descriptor

    @property
    def writes(self) -> bool:
        return self.operator in {">", ">>", ">|", "&>", "&>>", ">&"} and not (
            self.target is not None and (self.target.value or "").isdigit()
        )


class Command(_Record):
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

    def moved(self, cwds: frozenset[str] | None) -> Command:
        """The same command run from ``cwds`` (None: a folder nobody knows)."""
        fields = dict(zip(self.__slots__, self._fields(), strict=True))
        return Command(**{**fields, "cwds": cwds})


class Function(_Record):
    __slots__ = ("calls", "name", "start", "text")

    def __init__(self, name: str, text: str, start: int, calls: list[Command]) -> None:
        self.name = name
        self.text = text
        self.start = start
        self.calls = calls


class Script(_Record):
    """Everything a command line would run; ``evaluated`` is a literal ``$(…)`` where bash
    evaluates text as code."""

    __slots__ = ("commands", "evaluated", "functions", "links", "redirects", "text")

    def __init__(
        self,
        text: str,
        commands: list[Command],
        redirects: list[Redirect],
        functions: list[Function],
        links: dict[str, str | None] | None = None,
        evaluated: tuple[str, int] | None = None,
    ) -> None:
        self.text = text
        self.commands = commands
        self.redirects = redirects
        self.functions = functions
        self.links = {} if links is None else links
        self.evaluated = evaluated

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
