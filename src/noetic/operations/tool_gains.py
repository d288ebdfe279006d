"""Which investigation tools really help: each tool's declared confidence gain beside the gains
the CHECKs after it showed, over every CASCADE run in the store.

A run records, per round, what each tool that succeeded declared (``Tool.confidence_gain``) and
the change in confidence the next CHECK showed, shared by the round's tools
(:class:`noetic.cascade.engine.ToolGain`, kept in the task's result). This reads them back and
sums them up per tool. Sync: one query over the tasks that have any.
"""

from __future__ import annotations

import json

from noetic.frozen import Frozen
from noetic.store import reads
from noetic.store.base import BaseStore


class ToolGainSummary(Frozen):
    tool: str
    rounds: int  # rounds it succeeded in
    declared: float  # the gain it declared (the mean, should it have changed)
    observed: float  # the mean change in confidence at the CHECK after those rounds
    alone: int  # rounds it was the only tool that succeeded: the cleanest evidence
    observed_alone: float | None  # the mean change over those rounds

    @property
    def difference(self) -> float:
        return round(self.observed - self.declared, 6)


def tool_gains(store: BaseStore, ai_id: str | None = None) -> list[ToolGainSummary]:
    """Per tool, most rounds first: declared against observed gains (``ai_id``: one agent's
    runs only)."""
    per: dict[str, list[tuple[float, float, int]]] = {}
    for raw in reads.results_with(store, "tool_gains", ai_id):
        run = (json.loads(raw) if isinstance(raw, str) else raw).get("run") or {}
        for g in run.get("tool_gains") or []:
            per.setdefault(g["tool"], []).append(
                (float(g["declared"]), float(g["observed"]), int(g["shared_by"]))
            )
    out = []
    for tool, rows in per.items():
        alone = [o for _, o, n in rows if n == 1]
        out.append(
            ToolGainSummary(
                tool=tool,
                rounds=len(rows),
                declared=round(sum(d for d, _, _ in rows) / len(rows), 6),
                observed=round(sum(o for _, o, _ in rows) / len(rows), 6),
                alone=len(alone),
                observed_alone=round(sum(alone) / len(alone), 6) if alone else None,
            )
        )
    return sorted(out, key=lambda s: (-s.rounds, s.tool))
