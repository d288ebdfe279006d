"""What a finished run leaves behind for people: the decision log and the seed's metrics.

:func:`write_decision_log` writes ``<store>/decisions/<date>-<slug>.md``: the recommendation,
its confidence and how it was weighted, the trade-offs, the dissent, the open disagreements of
an escalated run, and the whole turn trail. :func:`nova_stats` computes the seed's success
metrics over every run in the store, beside the seed's targets.
"""

from __future__ import annotations

import re
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from noetic.nova.turns import ASSESSMENT_NODES, Node, Turn
from noetic.store import nova as records
from noetic.store.base import BaseStore as Store

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(question: str, limit: int = 60) -> str:
    words = _SLUG.sub("-", question.lower()).strip("-")
    return words[:limit].rstrip("-") or "question"


def state_line(turn: Turn) -> str:
    """A turn's epistemic state in a few words (the decision log's and ``noetic nova``'s)."""
    if turn.know is None or turn.uncertainty is None:
        return "state unknown"
    return f"know {turn.know:.2f} · uncertainty {turn.uncertainty:.2f}"


def _risk(turn: Turn) -> str:
    level = turn.block.get("risk_level")
    return f" · risk {level}" if level else ""


def decision_log(run: Any) -> str:
    """The run as Markdown (``run`` is a :class:`noetic.nova.deliberation.NovaRun`)."""
    lines = [f"# {run.question}", ""]
    lines.append(f"- run: `{run.id}` · status: **{run.status}** · {run.rounds} round(s)")
    if run.recommendation:
        lines.append(f"- recommendation: **{run.recommendation}**")
    if run.confidence is not None:
        lines.append(f"- confidence: {run.confidence:.2f} ({run.weighting})")
    if run.risk_level is not None:
        named = ", ".join(f"{who} {level.value}" for who, level in run.risks.items())
        lines.append(f"- risk level: **{run.risk_level.value}** ({named})")
    if run.cascade_id:
        lines.append(f"- task: `{run.cascade_id}` (record its outcome: `noetic outcome`)")
    if run.experts:
        lines.append("- experts: " + "; ".join(f"{p.name} ({p.reason})" for p in run.experts))
    sections = [
        ("Trade-offs", run.tradeoffs),
        ("Dissent", run.dissent),
        ("Open disagreements", run.disagreements),
        ("A person's input", run.inputs),
        ("Notes", run.notes),
    ]
    for title, items in sections:
        if items:
            lines += ["", f"## {title}", "", *(f"- {item}" for item in items)]
    lines += ["", "## Turn trail"]
    for turn in run.turns:
        status = "" if turn.status == "ok" else f" · {turn.status}"
        lines += [
            "",
            f"### {turn.seq} · {turn.role} · {turn.node.value} · round {turn.round}{status}",
            "",
            f"_{state_line(turn)}{_risk(turn)} · {turn.ms / 1000:.1f} s_",
            "",
            turn.content.strip() or f"(no reply: {turn.error})",
        ]
    return "\n".join(lines) + "\n"


def write_decision_log(home: Path, run: Any) -> Path:
    """Write the run's decision log; the same run rewrites its own file."""
    folder = home / "decisions"
    folder.mkdir(parents=True, exist_ok=True)
    date = datetime.now(UTC).strftime("%Y-%m-%d")
    path = folder / f"{date}-{slug(run.question)}.md"
    if path.exists() and f"`{run.id}`" not in path.read_text(encoding="utf-8", errors="replace"):
        path = folder / f"{date}-{slug(run.question)}-{run.id}.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(decision_log(run), encoding="utf-8")
    tmp.replace(path)
    return path


TARGETS: dict[str, str] = {
    "consensus_rate": "≥ 0.80",
    "critique_rate": "≈ 0.60",
    "confidence": "≥ 0.90",
    "median_seconds": "< 300",
    "turns_per_decision": "< 10",
    "expert_utilisation": "> 0.70",
    "learning_delta": "≥ +0.20",
    "uncertainty_reduction": "≥ 0.30",
    "findings": "≥ 3",
}


class NovaStats(BaseModel):
    """The seed's success metrics over the store's runs; None where no run says anything."""

    runs: int
    completed: int
    escalated: int
    failed: int
    consensus_rate: float | None
    critique_rate: float | None
    revision_rate: float | None
    confidence: float | None
    median_seconds: float | None
    turns_per_decision: float | None
    expert_utilisation: float | None
    learning_delta: float | None
    uncertainty_reduction: float | None
    findings: float | None
    targets: dict[str, str] = TARGETS


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def _status(row: dict[str, Any]) -> str:
    """A run stored as completed without a recommendation (an older Noetic wrote one when the
    final reply could not be read) reached no decision: it counts as failed."""
    if row["status"] == "completed" and row["result"].get("recommendation") is None:
        return "failed"
    return str(row["status"])


def nova_stats(store: Store) -> NovaStats:
    """The seed's metrics; only runs that reached a decision count toward consensus."""
    rows = [{**r, "status": _status(r)} for r in records.runs(store)]
    decided = [r for r in rows if r["status"] in ("completed", "escalated")]
    completed = [r for r in rows if r["status"] == "completed"]
    consensus = critiqued = flawed = revised = 0
    learning: list[float] = []
    reduction: list[float] = []
    findings: list[float] = []
    turn_counts: list[float] = []
    contributing = expert_turns = 0
    for row in decided:
        turns = [
            t
            for t in (Turn.model_validate(t) for t in records.turns(store, row["id"]))
            if t.node not in ASSESSMENT_NODES
        ]
        nodes = [t.node for t in turns]
        critiques = [t for t in turns if t.node == Node.CRITIQUE and t.status == "ok"]
        if critiques:
            critiqued += 1
            flawed += any(t.block.get("severity") != "none" for t in critiques)
            revised += Node.REVISE in nodes
        experts = [t for t in turns if t.node == Node.EXPERTS]
        expert_turns += len(experts)
        contributing += sum(t.status == "ok" for t in experts)
        if row["status"] != "completed":
            continue
        result = row["result"]
        consensus += not result.get("dissent") and not result.get("disagreements")
        turn_counts.append(len(turns))
        findings.append(sum(len(t.block.get("findings", [])) for t in experts))
        first = next((t for t in turns if t.node == Node.UNPACK), None)
        last = next((t for t in reversed(turns) if t.node == Node.FINAL), None)
        if first is None or last is None:
            continue
        if first.know is not None and last.know is not None:
            learning.append(last.know - first.know)
        if first.uncertainty is not None and last.uncertainty is not None:
            reduction.append(first.uncertainty - last.uncertainty)
    confidences = [
        r["result"]["confidence"] for r in completed if r["result"].get("confidence") is not None
    ]
    seconds = [r["result"].get("ms", 0.0) / 1000 for r in completed]
    return NovaStats(
        runs=len(rows),
        completed=len(completed),
        escalated=sum(r["status"] == "escalated" for r in rows),
        failed=sum(r["status"] == "failed" for r in rows),
        consensus_rate=_rate(consensus, len(decided)),
        critique_rate=_rate(flawed, critiqued),
        revision_rate=_rate(revised, critiqued),
        confidence=_mean(confidences),
        median_seconds=round(statistics.median(seconds), 3) if seconds else None,
        turns_per_decision=_mean(turn_counts),
        expert_utilisation=_rate(contributing, expert_turns),
        learning_delta=_mean(learning),
        uncertainty_reduction=_mean(reduction),
        findings=_mean(findings),
    )
