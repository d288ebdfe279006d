"""The canonical self-assessment prompt, the same for an agent answering through the CLI or MCP
and for a model asked by Noetic itself.

It asks for genuine reasoning about each vector (a rationale and the evidence behind it, not
just a number), scores as fractions in [0, 1], the probability that the task will succeed
(``p_success``, asked plainly: the vectors are a readiness score, not a probability), and one
JSON object in the shape :meth:`noetic.assessment.Assessment.from_input` accepts.

An *adversarial* POSTFLIGHT (``review=Review.ADVERSARIAL``) first asks for a review framed as
bug-finding: the reviewer's job is to find what is wrong with the work, and the reassessment
follows from what it found. Framed this way, post-execution estimates of success come down
toward the true rate (Kaddour et al. 2026 report up to 15 points less overconfidence).
"""

from __future__ import annotations

import json

from noetic.assessment import Action, Phase, Review
from noetic.vectors import DESCRIPTIONS, INVERTED, TIERS, VECTOR_NAMES

TYPE_CHECKING = False
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


_P_SUCCESS = {
    Phase.PREFLIGHT: "before any work, how likely is it that you will complete this task "
    "successfully",
    Phase.CHECK: "given what you have found so far, how likely is it that the task will end in "
    "success",
    Phase.POSTFLIGHT: "given the work as it now stands, how likely is it that it succeeds",
}

_ADVERSARIAL = (
    "Before you reassess, review the work as a critical reviewer whose job is to find bugs: "
    "assume there is at least one problem and look for it. Check the work against the task as "
    "it was asked, not as you understood it; look for untested paths, edge cases, wrong "
    "assumptions, errors you did not see because you did not run the code or check the claim, "
    "and requirements not met. Put the problems you found in the note, most serious first. "
    "Then score the vectors and p_success from what the review found, not from how the work "
    "felt while you did it."
)


def _example(phase: Phase) -> str:
    names = ("know", "context") if phase == Phase.CHECK else VECTOR_NAMES[:2]
    body = {
        "vectors": {
            n: {"score": 0.0, "rationale": "why this score", "evidence": "what it rests on"}
            for n in names
        },
        "p_success": 0.0,
        "recommended_action": "PROCEED",
        "note": "one sentence on your overall state",
    }
    return json.dumps(body, indent=2)


def build_assessment_prompt(
    task: str,
    phase: Phase,
    profile: Profile | None = None,
    previous: Assessment | None = None,
    review: Review | str | None = None,
    record: str | None = None,
) -> str:
    """The prompt for one assessment of ``task`` at ``phase``; ``review`` (POSTFLIGHT only)
    makes the reassessment an adversarial review; ``record`` is the agent's own record against
    its outcomes (one line, ``noetic.calibration.record``), said beside ``p_success``."""
    phase = Phase(phase)
    adversarial = review is not None and Review(review) == Review.ADVERSARIAL
    if adversarial and phase != Phase.POSTFLIGHT:
        from noetic.errors import InvalidValueError

        raise InvalidValueError(
            f"an adversarial review is a POSTFLIGHT, not a {phase.value}",
            field="review",
            value=str(review),
        )
    parts = [
        "Assess your own epistemic state for the task below. Reason honestly about each vector; "
        "an honest low score is more useful than a confident guess.",
        f"TASK: {task.strip() or '(no task given)'}",
        _PURPOSE[phase],
        *([_ADVERSARIAL] if adversarial else []),
        "Score every vector as a fraction from 0.0 to 1.0 (write 0.85, never 85 or 85%). For "
        "each, give a one-sentence rationale and the evidence it rests on.",
        "The vectors:\n"
        + "\n".join(f"- {n} ({tier}): {DESCRIPTIONS[n]}" for tier, ns in TIERS.items() for n in ns)
        + f"\n- uncertainty (meta): {DESCRIPTIONS['uncertainty']}",
        "For " + " and ".join(sorted(INVERTED)) + " a HIGH score is WORSE (more load, more "
        "uncertainty); for every other vector higher is better.",
        "recommended_action is optional: "
        + ", ".join(a.value for a in Action)
        + " (INVESTIGATE = need more information, PROCEED = ready to act, CLARIFY = the "
        "requirements are unclear, DELEGATE = beyond your capability, RESET = fundamentally "
        "confused).",
        f"p_success: {_P_SUCCESS[phase]}? Give your probability, from 0.0 to 1.0, that the task "
        "will succeed as its outcome will be judged (the tests pass, the answer checks out, the "
        "person accepts the work). It is a probability, not a readiness score: of all the tasks "
        "you give 0.7, about 7 in 10 should succeed.",
    ]
    if record:
        parts.append(record)
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
        f'Answer with ONE JSON object and nothing else, with {which} under "vectors" and your '
        'probability of success as "p_success", shaped like this (two vectors shown):\n'
        + _example(phase)
    )
    return "\n\n".join(parts)
