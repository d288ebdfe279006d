"""Texts an agent reads: what Noetic is, and how to work through a task with it."""

from __future__ import annotations

INTRODUCTION = """\
Noetic is epistemic infrastructure: it helps you know what you know.

Before a task you assess yourself on 13 vectors (each a fraction in [0, 1]): engagement; know,
do, context (foundation); clarity, coherence, signal, density (comprehension); state, change,
completion, impact (execution); and uncertainty (meta). For density and uncertainty, high is
worse. Noetic records every assessment, derives an action from your profile's thresholds
(INVESTIGATE, PROCEED, CLARIFY, DELEGATE, RESET), and at the end compares your POSTFLIGHT with
your PREFLIGHT to show how your confidence moved.

Be honest: a low score you can act on is worth more than a confident guess."""

STEPS = {
    "bootstrap": "Call bootstrap_session once per working session (pass ai_model so the right "
    "profile is chosen). It becomes your current session: later tools use it when you pass no "
    "session_id (another client's calls never change it).",
    "preflight": "Before starting a task: execute_preflight(session_id, prompt) gives the "
    "assessment prompt for the task in prompt. Answer it honestly, then "
    "submit_preflight_assessment(session_id, vectors): the task carries over.",
    "investigate": "If the decision is INVESTIGATE, look into the weakest vectors it names "
    "(read code, run checks, ask). Then reassess.",
    "check": "execute_check gives the prompt; submit_check_assessment with only the vectors "
    "that changed. Repeat investigate/check until the decision is PROCEED (or CLARIFY / "
    "DELEGATE / RESET: then do that instead of acting). At the profile's round limit the "
    "CHECK says PROCEED under the rule max_rounds: act on what you have.",
    "act": "Do the work.",
    "postflight": "After the work: execute_postflight, then submit_postflight_assessment with a "
    "genuine reassessment of all 13 vectors. Noetic reports the deltas and the calibration.",
    "outcome": "Once you know whether the work really succeeded (the tests pass, the user "
    "confirms), call record_outcome: 1.0 success, 0.0 failure, or in between, with the evidence. "
    "This calibrates you against reality rather than against your own reports; "
    "get_calibration_report, query_bayesian_beliefs and check_drift_monitor read it.",
}


def workflow_guidance(phase: str | None = None) -> str:
    if phase is not None:
        key = phase.strip().lower()
        if key not in STEPS:
            from noetic.errors import InvalidValueError

            raise InvalidValueError(
                f"unknown phase {phase!r}", field="phase", fix=f"one of: {', '.join(STEPS)}"
            )
        return f"{key.upper()}: {STEPS[key]}"
    return "\n".join(f"{i}. {k.upper()}: {v}" for i, (k, v) in enumerate(STEPS.items(), 1))
