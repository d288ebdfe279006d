"""The canonical self-assessment prompt, the same for an agent answering through the CLI or MCP
and for a model asked by Noetic itself.

It asks for genuine reasoning about each vector (a rationale and the evidence behind it, not
just a number), scores as fractions in [0, 1], and one JSON object in the shape
:meth:`noetic.assessment.Assessment.from_input` accepts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from noetic.assessment import Action, Phase
from noetic.vectors import DESCRIPTIONS, INVERTED, TIERS, VECTOR_NAMES

if TYPE_CHECKING:
    from noetic.assessment import Assessment
    from noetic.profiles import Profile

_PURPOSE = {
    Phase.PREFLIGHT: (
        "This is the PREFLIGHT: your baseline before any work. Assess what you know and can do "
        "right now, before investigating anything."
    ),
    Phase.CHECK: (
        "This is a CHECK after investigating. Reassess in the light of what you found. You may "
        "give only the vectors that changed; the others keep their previous values."
    ),
    Phase.POSTFLIGHT: (
        "This is the POSTFLIGHT, after the work. Reassess genuinely from what actually happened; "
        "do not compute it from your earlier scores."
    ),
}


def _vector_lines() -> str:
    lines = []
    for tier, names in TIERS.items():
        for name in names:
            lines.append(f"- {name} ({tier}): {DESCRIPTIONS[name]}")
    lines.append(f"- uncertainty (meta): {DESCRIPTIONS['uncertainty']}")
    return "\n".join(lines)


def _example(phase: Phase) -> str:
    names = ("know", "context") if phase == Phase.CHECK else VECTOR_NAMES[:2]
    body = {
        "vectors": {
            n: {"score": 0.0, "rationale": "why this score", "evidence": "what it rests on"}
            for n in names
        },
        "recommended_action": "PROCEED",
        "note": "one sentence on your overall state",
    }
    return json.dumps(body, indent=2)


def build_assessment_prompt(
    task: str,
    phase: Phase,
    profile: Profile | None = None,
    previous: Assessment | None = None,
) -> str:
    """The prompt for one assessment of ``task`` at ``phase``."""
    phase = Phase(phase)
    parts = [
        "Assess your own epistemic state for the task below. Reason honestly about each vector; "
        "an honest low score is more useful than a confident guess.",
        f"TASK: {task.strip() or '(no task given)'}",
        _PURPOSE[phase],
        "Score every vector as a fraction from 0.0 to 1.0 (write 0.85, never 85 or 85%). For "
        "each, give a one-sentence rationale and the evidence it rests on.",
        "The vectors:\n" + _vector_lines(),
        "For " + " and ".join(sorted(INVERTED)) + " a HIGH score is WORSE (more load, more "
        "uncertainty); for every other vector higher is better.",
        "recommended_action is optional: "
        + ", ".join(a.value for a in Action)
        + " (INVESTIGATE = need more information, PROCEED = ready to act, CLARIFY = the "
        "requirements are unclear, DELEGATE = beyond your capability, RESET = fundamentally "
        "confused).",
    ]
    if previous is not None:
        parts.append(
            "Your previous assessment, for reference:\n"
            + json.dumps(previous.vectors, separators=(", ", ": "))
        )
    if profile is not None:
        threshold = profile.investigation.confidence_threshold
        parts.append(
            f"Profile: {profile.name}. Proceeding needs overall confidence of "
            + ("your own judgement" if threshold == "dynamic" else f"at least {threshold}")
            + "."
        )
        if phase == Phase.POSTFLIGHT and profile.postflight_mode.value == "evidence_required":
            parts.append("This profile requires evidence for every vector at POSTFLIGHT.")
        if phase == Phase.POSTFLIGHT and profile.postflight_mode.value == "reflective":
            parts.append("This profile requires a note on what you learned.")
    which = "only the vectors that changed" if phase == Phase.CHECK else "all 13 vectors"
    parts.append(
        f'Answer with ONE JSON object and nothing else, with {which} under "vectors", '
        "shaped like this (two vectors shown):\n" + _example(phase)
    )
    return "\n\n".join(parts)
