"""What the gate decides: a :class:`Verdict`, and a :class:`Violation` for each rule broken."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One rule a command broke: ``part`` is the piece of the command that broke it, and
    ``detail`` what the gate found there (what it could not determine, where a path lands)."""

    rule: str
    reason: str
    part: str
    start: int = 0
    detail: str = ""

    def explain(self) -> str:
        detail = f" — {self.detail}" if self.detail else ""
        return f"{self.rule}: {self.reason}{detail} (at {self.part!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The gate's decision on one command line; ``sandboxed`` says whether it was judged as
    a command the OS sandbox contains."""

    command: str
    allowed: bool
    violations: tuple[Violation, ...] = ()
    workspace: str
    sandboxed: bool = False

    @property
    def rule(self) -> str | None:
        return self.violations[0].rule if self.violations else None

    def explain(self) -> str:
        if self.allowed:
            return "allowed"
        return "; ".join(v.explain() for v in self.violations)
