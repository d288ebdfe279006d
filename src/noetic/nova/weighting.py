"""A calibrated panel (beyond the seed): personas scored against the outcomes of decisions.

When ``noetic outcome`` records how a Nova decision turned out, every persona that spoke in the
decisive round is scored on what it stated (an expert on its last ``know``, the DCE on the final
confidence): its Brier score over those outcomes. With ``weighting = "calibrated"`` the final
confidence is their mean weighted by ``max(0.05, 1 − 2·Brier)`` once a persona has
``min_outcomes`` outcomes, and 1 before (``docs/nova.md``); with no persona on the panel seasoned
enough, the DCE's confidence stands and the run says so.
"""

from __future__ import annotations

from noetic.frozen import Frozen
from noetic.nova.turns import Node, Turn
from noetic.store import nova as records
from noetic.store.base import BaseStore as Store

FLOOR = 0.05


class Record(Frozen):
    persona: str
    outcomes: int
    brier: float
    stated: float
    observed: float


def stated_confidences(turns: list[Turn]) -> dict[str, float]:
    """What each persona stated in the decisive round: experts' know, the DCE's confidence."""
    final = next((t for t in reversed(turns) if t.node == Node.FINAL and t.status == "ok"), None)
    if final is None:
        return {}
    stated = {
        t.persona: t.know
        for t in turns
        if t.node == Node.EXPERTS and t.round == final.round and t.know is not None
    }
    stated[final.persona] = float(final.block["confidence"])
    return {k: float(v) for k, v in stated.items() if v is not None}


def persona_records(store: Store) -> dict[str, Record]:
    pairs: dict[str, list[tuple[float, float]]] = {}
    for run_id, score in records.run_outcomes(store):
        turns = [Turn.model_validate(t) for t in records.turns(store, run_id)]
        for persona, p in stated_confidences(turns).items():
            pairs.setdefault(persona, []).append((p, score))
    out = {}
    for persona, scored in sorted(pairs.items()):
        n = len(scored)
        out[persona] = Record(
            persona=persona,
            outcomes=n,
            brier=round(sum((p - y) ** 2 for p, y in scored) / n, 4),
            stated=round(sum(p for p, _ in scored) / n, 4),
            observed=round(sum(y for _, y in scored) / n, 4),
        )
    return out


def weight(record: Record | None, min_outcomes: int) -> float:
    if record is None or record.outcomes < min_outcomes:
        return 1.0
    return max(FLOOR, 1.0 - 2.0 * record.brier)


def weighted_confidence(
    stated: dict[str, float], known: dict[str, Record], min_outcomes: int
) -> tuple[float | None, dict[str, float], str]:
    """The calibrated final confidence, the weights used, and how it was decided."""
    if not stated:
        return None, {}, "dce (nothing stated to weigh)"
    seasoned = [p for p in stated if (r := known.get(p)) and r.outcomes >= min_outcomes]
    if not seasoned:
        return (
            None,
            {},
            f"dce (no persona on the panel has {min_outcomes} outcomes yet)",
        )
    weights = {p: round(weight(known.get(p), min_outcomes), 4) for p in stated}
    total = sum(weights.values())
    value = sum(weights[p] * stated[p] for p in stated) / total
    named = ", ".join(f"{p} {weights[p]:.2f}" for p in seasoned)
    return round(value, 4), weights, f"calibrated (track records: {named})"
