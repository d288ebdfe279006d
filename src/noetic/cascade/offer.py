"""Strategies, and how a profile's tool mode shapes the tools offered to the model.

The model picks the strategy while thinking about the task (no keyword matching); the strategy
frames the investigation and recommends tools by domain (:data:`DOMAIN_TOOLS`). The tool mode
(``light``, ``suggestive``, ``guided``, ``prescribed``, ``inspirational``: ``docs/cascade.md``)
decides how tools are presented, and in ``prescribed`` mode which may run.
"""

from __future__ import annotations

import fnmatch
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


# The tools each strategy recommends, by name (shell patterns), in the order it reaches for them.
DOMAIN_TOOLS: dict[Strategy, tuple[str, ...]] = {
    Strategy.CODE: ("search_text", "read_file", "file_read", "list_tree", "file_list", "git*",
                    "shell"),
    Strategy.RESEARCH: ("search", "scrape", "retrieve", "recall", "read_file", "file_read"),
    Strategy.CREATIVE: ("recall", "retrieve", "search", "scrape", "list_tree", "file_list"),
    Strategy.GENERAL: (),
}  # fmt: skip


def domain_rank(tool: Tool, strategy: Strategy) -> int | None:
    """Where ``tool`` comes in the strategy's domain (0 first), or None when it is not one."""
    for i, pattern in enumerate(DOMAIN_TOOLS[strategy]):
        if fnmatch.fnmatchcase(tool.name, pattern):
            return i
    return None


def recommended(tools: list[Tool], strategy: Strategy) -> list[Tool]:
    """The strategy's domain tools among ``tools``, in its order."""
    ranked = [(domain_rank(t, strategy), t) for t in tools]
    return [t for rank, t in sorted((r, t) for r, t in ranked if r is not None)]


def _gain_order(tools: list[Tool], strategy: Strategy) -> list[Tool]:
    """Highest declared confidence gain first; the strategy's domain tools first among equals."""
    far = len(DOMAIN_TOOLS[strategy])

    def key(t: Tool) -> tuple[float, int]:
        rank = domain_rank(t, strategy)
        return (-t.confidence_gain, far if rank is None else rank)

    return sorted(tools, key=key)


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
    domain = recommended(usable, strategy)
    if domain and mode != ToolMode.PRESCRIBED:
        lines.append(f"For {strategy.value} work, reach first for: " + ", ".join(
            t.name for t in domain) + ".")  # fmt: skip
    if not usable:
        lines.append("No tools are available; investigate by reasoning alone.")
    elif mode == ToolMode.LIGHT:
        lines.append("Tools you may use: " + ", ".join(t.name for t in usable) + ".")
    elif mode == ToolMode.GUIDED:
        for title, group in (
            ("Recommended first (they target your gaps; expected confidence gain):", targeted),
            ("Also available:", rest),
        ):
            lines.append(title)
            lines += [
                f"- {t.name} (+{t.confidence_gain:.2f}): {t.description}"
                for t in _gain_order(group, strategy)
            ] or ["- (none)"]
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
