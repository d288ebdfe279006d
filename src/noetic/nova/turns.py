"""What a turn is: the persona's Markdown, its epistemic state, and the node's structured block.

Every reply is Markdown ending with one JSON object (in a ```json fence). The object always has
the persona's epistemic state (``know``, ``uncertainty``, each in [0, 1]) and the fields the
node needs to route the process: the experts the DCE picks, the critic's severity, the final
recommendation. :func:`parse_block` reads it; a reply without a usable block is sent back once
with the problem named (:func:`noetic.llm.structured.complete_parsed`), and if the second reply
is no better the turn is kept with its text and its state recorded as unknown (``None``), never
guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from noetic.errors import InvalidValueError
from noetic.frozen import Frozen
from noetic.llm.structured import extract_json

Unit = Field(ge=0.0, le=1.0, allow_inf_nan=False)


class Node(StrEnum):
    """The process's nodes; :mod:`noetic.nova.graph` draws the edges between them."""

    UNPACK = "unpack"
    EXPERTS = "experts"
    SYNTHESIZE = "synthesize"
    CHECK = "check"
    CRITIQUE = "critique"
    REVISE = "revise"
    FINAL = "final"
    ESCALATED = "escalated"
    DONE = "done"
    # the run's task assessments (not graph nodes): after unpacking, at each gate, at the end
    PREFLIGHT = "preflight"
    POSTFLIGHT = "postflight"


ASSESSMENT_NODES = (Node.PREFLIGHT, Node.CHECK, Node.POSTFLIGHT)


class Severity(StrEnum):
    CRITICAL = "critical"
    MINOR = "minor"
    NONE = "none"


class Risk(StrEnum):
    """The risk a persona sees, the seed's four levels (asked of every persona)."""

    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"
    CRITICAL = "CRITICAL"


RISK_ORDER = {r: i for i, r in enumerate(Risk)}


def highest_risk(levels: Iterable[Risk | str | None]) -> Risk | None:
    """The highest of ``levels`` (those not stated left out); None when none is stated."""
    stated = [Risk(level) for level in levels if level is not None]
    return max(stated, key=RISK_ORDER.__getitem__, default=None)


class State(BaseModel):
    """A persona's epistemic state at the end of its turn."""

    model_config = ConfigDict(frozen=True)

    know: float = Unit
    uncertainty: float = Unit


class Block(State):
    model_config = ConfigDict(frozen=True, extra="ignore")

    risk_level: Risk | None = None

    @field_validator("risk_level", mode="before")
    @classmethod
    def _risk(cls, value: Any) -> Any:
        """``"high"``, ``"High"`` and ``"HIGH"`` are one level; a value that is none of the four
        (empty, ``"SEVERE"``, a number) is recorded as unstated rather than failing the turn, whose
        routing fields do not depend on it."""
        if isinstance(value, str) and value.strip().upper() in Risk.__members__:
            return value.strip().upper()
        return None


class Pick(Frozen):
    name: str = Field(min_length=1, max_length=40)
    reason: str = Field(min_length=1, max_length=1000)


class UnpackBlock(Block):
    experts: list[Pick] = Field([], max_length=12)
    considerations: list[str] = []

    @model_validator(mode="after")
    def _distinct(self) -> UnpackBlock:
        names = [p.name for p in self.experts]
        if len(set(names)) != len(names):
            raise ValueError("an expert is picked twice")
        return self


class ExpertBlock(Block):
    position: str = Field("", max_length=1000)
    findings: list[str] = []


class SynthesisBlock(Block):
    proposal: str = Field(min_length=1, max_length=2000)
    open_question: str | None = Field(None, max_length=1000)
    tradeoffs: list[str] = []
    disagreements: list[str] = []


class CritiqueBlock(Block):
    severity: Severity
    issues: list[str] = []


class FinalBlock(Block):
    recommendation: str = Field(min_length=1, max_length=2000)
    confidence: float = Unit
    tradeoffs: list[str] = []
    dissent: list[str] = []


BLOCKS: dict[Node, type[Block]] = {
    Node.UNPACK: UnpackBlock,
    Node.EXPERTS: ExpertBlock,
    Node.SYNTHESIZE: SynthesisBlock,
    Node.REVISE: SynthesisBlock,
    Node.CRITIQUE: CritiqueBlock,
    Node.FINAL: FinalBlock,
}

# What the closing JSON object holds, per node, as shown to the model.
SHAPES: dict[Node, str] = {
    Node.UNPACK: '{"know": 0.4, "uncertainty": 0.7, "experts": [{"name": "security", '
    '"reason": "why this question needs them"}], "considerations": ["..."]}',
    Node.EXPERTS: '{"know": 0.6, "uncertainty": 0.4, "position": "your position in one '
    'sentence", "findings": ["a fact or risk you established"]}',
    Node.SYNTHESIZE: '{"know": 0.75, "uncertainty": 0.35, "proposal": "the proposal in one '
    'sentence", "open_question": "what is still unresolved, or null", "tradeoffs": ["..."], '
    '"disagreements": ["who disagrees about what"]}',
    Node.CRITIQUE: '{"know": 0.7, "uncertainty": 0.3, "severity": "critical | minor | none", '
    '"issues": ["..."]}',
    Node.FINAL: '{"know": 0.9, "uncertainty": 0.15, "recommendation": "the decision in one '
    'sentence", "confidence": 0.9, "tradeoffs": ["..."], "dissent": ["who still disagrees and '
    'why"]}',
}
SHAPES[Node.REVISE] = SHAPES[Node.SYNTHESIZE]
# the seed asks every persona for the risk it sees
SHAPES = {n: shape[:-1] + ', "risk_level": "LOW | MEDIUM | HIGH | CRITICAL"}'
          for n, shape in SHAPES.items()}  # fmt: skip

TurnStatus = Literal["ok", "unparsed", "failed"]


class Turn(BaseModel):
    """One persona's turn, as persisted: what it said, its state, what it cost."""

    model_config = ConfigDict(frozen=True)

    seq: int
    round: int
    node: Node
    persona: str
    role: str
    status: TurnStatus
    content: str
    know: float | None = None
    uncertainty: float | None = None
    block: dict[str, Any] = {}
    model: str = ""
    ms: float = 0.0
    calls: int = 0
    context_tokens: int = 0
    prompt_tokens: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None

    @property
    def key(self) -> str:
        """What identifies the turn in its run, for replay: round, node and persona."""
        return turn_key(self.round, self.node, self.persona)

    @property
    def state(self) -> State | None:
        if self.know is None or self.uncertainty is None:
            return None
        return State(know=self.know, uncertainty=self.uncertainty)


def turn_key(round: int, node: Node | str, persona: str) -> str:
    return f"{round}:{Node(node).value}:{persona}"


def parse_block(node: Node, text: str, check: Callable[[Block], None] | None = None) -> Block:
    """The node's block from a reply; raises ParseError or InvalidValueError naming the problem.

    ``check`` adds the run's own rules (an unpacking may only pick experts in the catalogue)."""
    data = extract_json(text)
    block = BLOCKS[node].model_validate(data)
    if check is not None:
        check(block)
    return block


def picks_in(known: set[str]) -> Callable[[Block], None]:
    """A check requiring at least one pick, all in the catalogue (which it names)."""

    def check(block: Block) -> None:
        picks: list[Pick] = getattr(block, "experts", [])
        if not picks:
            raise InvalidValueError(
                f"no experts picked; pick at least one from {', '.join(sorted(known))}",
                field="experts",
            )
        unknown = [p.name for p in picks if p.name not in known]
        if unknown:
            raise InvalidValueError(
                f"experts not in the catalogue: {', '.join(unknown)}; pick from "
                f"{', '.join(sorted(known))}",
                field="experts",
                value=unknown,
            )

    return check
