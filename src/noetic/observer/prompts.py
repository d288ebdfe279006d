"""The four stage roles and their prompts. Each stage is a fresh model call, told what the
stages before it observed (:func:`summary`)."""

from __future__ import annotations

from collections.abc import Sequence

from noetic.observer.observation import Observation, layer_list

ROLES = {
    1: ("Explorer", "Initial Analysis"),
    2: ("Refiner", "Deepening Understanding"),
    3: ("Integrator", "Synthesizing Observations"),
    4: ("Crystallizer", "Final Answer"),
}

_TASKS = {
    1: "Your task is to perform initial analysis of this query. Identify:\n"
    "1. Which cognitive layers are relevant (C01-C15)\n"
    "2. Initial understanding and key concepts\n"
    "3. Confidence in your analysis (0.0-1.0)",
    2: "Your task is to REFINE and DEEPEN the understanding.\n"
    "- Review the previous observation\n- Identify gaps or areas needing more analysis\n"
    "- Deepen insights\n- Increase confidence if appropriate",
    3: "Your task is to INTEGRATE and SYNTHESIZE all observations.\n"
    "- Find coherence between previous observations\n- Identify consistent patterns\n"
    "- Build unified understanding\n- High confidence expected if patterns are clear",
    4: "This is the FINAL stage. Your task is to CRYSTALLIZE a final answer.\n"
    "- Synthesize ALL previous observations\n- Provide a clear, actionable response\n"
    "- This is the final answer - make it count",
}

FORMAT = "Respond in this format:\nCONFIDENCE: 0.XX\nLAYERS: C01,C02,...\nCONTENT:\nYour analysis"


def stage_prompt(stage: int, query: str, summary: str, *, predict: bool = False) -> str:
    role, focus = ROLES[min(stage, 4)]
    parts = [f"You are an AI Observer in stage {stage}: {role} - {focus}"]
    parts.append(f'Original query:\n"{query}"')
    if summary:
        parts.append(f"Previous observations:\n{summary}")
    parts.append(_TASKS[min(stage, 4)])
    parts.append("Available cognitive layers:\n" + layer_list())
    fmt = FORMAT
    if predict and stage == 1:
        fmt = fmt.replace(
            "LAYERS:",
            "PREDICTED_CONFIDENCE: 0.XX (the confidence you expect a final answer to reach)\n"
            "LAYERS:",
        )
    parts.append(fmt)
    return "\n\n".join(parts)


def summary(observations: Sequence[Observation]) -> str:
    """The previous stages, for the next stage's prompt."""
    return "\n\n".join(
        f"Stage {o.stage} (confidence {o.confidence:.2f}, layers "
        f"{','.join(o.layers) or 'none'}):\n{o.content}"
        for o in observations
    )
