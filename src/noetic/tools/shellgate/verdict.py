"""What the gate decides: a :class:`Verdict`, and a :class:`Violation` for each rule broken."""

from __future__ import annotations

# Named tuples, not frozen dataclasses: a hook defines these in every process it starts, and a
# named tuple costs microseconds to define where a dataclass costs half a millisecond.
from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Violation(NamedTuple):
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


class Verdict(NamedTuple):
    """The gate's decision on one command line; ``sandboxed`` says whether it was judged as
    a command the OS sandbox contains."""

    command: str
    allowed: bool
    workspace: str
    violations: tuple[Violation, ...] = ()
    sandboxed: bool = False

    @property
    def rule(self) -> str | None:
        return self.violations[0].rule if self.violations else None

    def explain(self) -> str:
        if self.allowed:
            return "allowed"
        return "; ".join(v.explain() for v in self.violations)

    def as_dict(self) -> dict[str, Any]:
        """The verdict as plain data, its violations as mappings (``noetic agent gate --json``)."""
        return {
            "command": self.command,
            "allowed": self.allowed,
            "violations": [v._asdict() for v in self.violations],
            "workspace": self.workspace,
            "sandboxed": self.sandboxed,
        }
