"""Reasoning depth: what a switch between fast and deep changes for the next step.

A run's *mode* is what the caller asked for: ``fast`` and ``deep`` fix the depth; ``adapt``
(the default) lets triage choose the first depth and the run change it (the model's
``switch_mode``, a fast run at its iteration cap, a tool that keeps failing). The *depth* sets the
instruction, the reply's token limit and the iteration cap, so a switch is visible in the very
next request (``docs/agent.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from noetic.llm.base import ToolSpec


@dataclass(frozen=True)
class Depth:
    name: str
    max_iterations: int
    max_tokens: int
    instruction: str


FAST = Depth(
    name="fast",
    max_iterations=3,
    max_tokens=1024,
    instruction=(
        "Mode: fast. Answer directly and briefly. Call a tool only when the answer needs "
        "something you cannot know without it, and prefer one call."
    ),
)
DEEP = Depth(
    name="deep",
    max_iterations=12,
    max_tokens=4096,
    instruction=(
        "Mode: deep. Work step by step: state a short plan, gather evidence with the tools, "
        "check what you found against the task, and only then answer. Call independent tools "
        "together in one step."
    ),
)
DEPTHS = {"fast": FAST, "deep": DEEP}

SWITCH_TOOL = "switch_mode"
SWITCH_SPEC = ToolSpec(
    name=SWITCH_TOOL,
    description=(
        "Change how deeply you work on this task: 'deep' for multi-step work that needs a "
        "plan and evidence, 'fast' when the rest is simple. Takes effect on your next step."
    ),
    parameters={
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["fast", "deep"]},
            "reason": {"type": "string", "description": "why the task needs this depth"},
        },
        "required": ["mode"],
        "additionalProperties": False,
    },
)


def depth_of(name: str) -> Depth:
    return DEPTHS[name]
