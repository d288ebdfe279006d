"""Strategies, and how a profile's tool mode shapes the tools offered to the model.

The model picks the strategy while thinking about the task (no keyword matching); the strategy
frames the investigation. The tool mode decides how tools are presented and which may run:

* ``light``: names only, the model explores freely;
* ``suggestive``: names and descriptions, the model decides;
* ``guided``: the tools that target the current gaps first, marked as recommended;
* ``prescribed``: only the profile's approved tools are listed, and only they may run;
* ``inspirational``: tools framed as ideas to spark exploration.
"""

from __future__ import annotations

from enum import StrEnum

from noetic.profiles import Profile, ToolMode
from noetic.tools.base import Tool


class Strategy(StrEnum):
    CODE = "code"
    RESEARCH = "research"
    CREATIVE = "creative"
    GENERAL = "general"


FRAMING = {
    Strategy.CODE: "Investigate like an engineer: find the code involved, read it, trace how "
    "it behaves, and look for tests that pin it down.",
    Strategy.RESEARCH: "Investigate like a researcher: gather sources, compare them, and note "
    "what is established and what is uncertain.",
    Strategy.CREATIVE: "Investigate like a designer: collect constraints and examples, then "
    "look for angles nobody has tried.",
    Strategy.GENERAL: "Investigate what you do not yet know that the task depends on.",
}


def allowed(tools: list[Tool], profile: Profile) -> list[Tool]:
    """The tools that may run under the profile (prescribed mode: approved ones only)."""
    if profile.investigation.tool_mode == ToolMode.PRESCRIBED:
        approved = set(profile.investigation.approved_tools)
        return [t for t in tools if t.name in approved]
    return list(tools)


def offer(tools: list[Tool], profile: Profile, gaps: tuple[str, ...], strategy: Strategy) -> str:
    """The investigation brief for the model, shaped by the tool mode."""
    mode = profile.investigation.tool_mode
    usable = allowed(tools, profile)
    targeted = [t for t in usable if set(t.improves_vectors) & set(gaps)]
    rest = [t for t in usable if t not in targeted]
    lines = [FRAMING[strategy], f"Your weakest vectors: {', '.join(gaps) or 'none'}."]
    if not usable:
        lines.append("No tools are available; investigate by reasoning alone.")
    elif mode == ToolMode.LIGHT:
        lines.append("Tools you may use: " + ", ".join(t.name for t in usable) + ".")
    elif mode == ToolMode.GUIDED:
        lines.append("Recommended first (they target your gaps):")
        lines += [f"- {t.name}: {t.description}" for t in targeted] or ["- (none)"]
        lines.append("Also available:")
        lines += [f"- {t.name}: {t.description}" for t in rest] or ["- (none)"]
    elif mode == ToolMode.PRESCRIBED:
        lines.append("Only these approved tools may be used; any other call will be refused:")
        lines += [f"- {t.name}: {t.description}" for t in usable]
    elif mode == ToolMode.INSPIRATIONAL:
        lines.append("Ideas to spark your exploration (use any that help):")
        lines += [f"- what might {t.name} reveal? ({t.description})" for t in usable]
    else:
        lines.append("Tools available (you decide):")
        lines += [f"- {t.name}: {t.description}" for t in usable]
    return "\n".join(lines)
