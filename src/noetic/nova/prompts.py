"""What each turn asks: the persona's file, the node's instructions, the closing block's shape.

Every request's user message starts with a header, ``# Turn N · node · round R · persona``,
so a transcript (or a test's scripted model) can tell whose turn it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noetic.nova.personas import Persona
from noetic.nova.turns import SHAPES, Node

if TYPE_CHECKING:
    from noetic.nova.models import NovaSettings

INSTRUCTIONS: dict[Node, str] = {
    Node.UNPACK: "Unpack the question: clarify the requirements, identify the key "
    "considerations, and choose the experts it needs from the catalogue (at most {max}), each "
    "with your reason for needing them.",
    Node.EXPERTS: "Analyse the question from your expertise and take a position.{focus}",
    Node.SYNTHESIZE: "Synthesise the experts' input: combine their insights, find the "
    "consensus, identify the trade-offs and make one proposal. Name the question that is still "
    "open, if one is.{focus}",
    Node.CRITIQUE: "Critique the synthesis: challenge its assumptions, find edge cases, stress "
    "test the proposal. Rate the severity of what you find: critical (the experts must look "
    "again), minor (the DCE should adjust the proposal) or none.",
    Node.REVISE: "Revise the proposal to address the critique; keep what survived it.",
    Node.FINAL: "Give the final recommendation: the decision, your confidence in it (0 to 1), "
    "the trade-offs, and the dissent that remains.",
}


def header(seq: int, node: Node, round: int, persona: str) -> str:
    return f"# Turn {seq} · {node.value} · round {round} · {persona}"


def instruction(node: Node, settings: NovaSettings, focus: str) -> str:
    if node == Node.UNPACK and settings.experts:
        return (
            "Unpack the question: clarify the requirements and identify the key "
            f"considerations for the panel the caller chose: {', '.join(settings.experts)}."
        )
    return INSTRUCTIONS[node].format(
        max=settings.max_experts, focus=f"\nFocus: {focus}" if focus else ""
    )


def system(persona: Persona, node: Node) -> str:
    return (
        f"{persona.body}\n\n---\nYou are the {persona.role} ({persona.short_name}) on a "
        "NovaProcess panel. Write your turn in Markdown as your instructions say, then end it "
        "with one JSON object in a ```json fence: know and uncertainty (0 to 1) are your own "
        f"epistemic state now. Its shape:\n{SHAPES[node]}"
    )
