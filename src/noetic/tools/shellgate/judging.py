"""What the checks of particular programs ask of the judge: the :class:`Judging` protocol.

The judge (:mod:`.judge`) hands each simple command to the checks of what the command is —
find's actions, sed and awk programs, interpreters, a program's row of the effects table, git,
package managers and network clients — and they call back on it: to refuse, to judge a path or
the command a program runs. They name this protocol, not the judge's module, so the judge
imports them and nothing imports the judge back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from noetic.tools.shellgate.parsed_line import Command, Word
    from noetic.tools.shellgate.policy import Policy


class Judging(Protocol):
    """The judge of one line, as the program checks use it."""

    policy: Policy
    workspace: str
    home: str
    downloaded: set[str]  # files the line downloads
    tainted: set[str]  # files holding the environment's dump
    scripts: dict[str, str | None]  # files written earlier in the line, and what they hold
    functions: set[str]  # functions the line defines

    def refuse(self, rule: str, part: str, start: int = 0, detail: str = "") -> None: ...

    def undetermined(self, rule: str, word: Word, detail: str) -> None: ...

    def inline(self, code: str, word: Word, cmd: Command, what: str) -> None: ...

    def argv(
        self, argv: list[Word], cmd: Command, *, hidden_args: bool, depth: int = 0
    ) -> None: ...

    def known(self, base: str) -> bool: ...

    def rest(
        self, base: str, args: list[Word], cmd: Command, hidden_args: bool, depth: int
    ) -> bool | None: ...

    def option_values(self, args: list[Word], options: Iterable[str]) -> list[Word]: ...

    def written(self, word: Word, cwds: frozenset[str] | None, part: str, start: int) -> None: ...

    def inside(self, place: str) -> bool: ...

    def inside_all(self, value: str, cwds: frozenset[str] | None) -> bool: ...

    def resolved(self, value: str, cwds: frozenset[str] | None) -> set[str | None]: ...

    def path_rules(
        self, words: list[Word], cwds: frozenset[str] | None, *, write: bool, part: str
    ) -> None: ...

    def places(self, word: Word, cwds: frozenset[str] | None) -> set[str]: ...

    def downloads(self, cmd: Command) -> bool: ...

    @staticmethod
    def has_flag(word: Word, flags: Iterable[str]) -> bool: ...
