"""A run as one timeline over the typed events, whichever engine emitted them.

A run is what its events name: the task id they carry (a CASCADE run, an agent task, the
agent-driven workflow's cascade, a Nova deliberation tied to a task), a Nova run's id (its
events carry the run's session and task), an observer chain run's id (its stages are read from
the observations it stored), or a session id (everything in the session). Each
event becomes an :class:`Item` on its engine's lane with a one-line label written from its typed
payload, and each phase (a CASCADE phase, an observer stage, a Nova turn, an agent node) that
was entered and completed becomes a :class:`Span`. Gate refusals (constraints enforced), Nova's
escalations and the observer's crystallization reason are items like any other, marked. Beside
the events: a run's Nova turns, and an observer run's stages and why it stopped.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from noetic.errors import NotFoundError
from noetic.events import PAYLOADS, EventKind
from noetic.frozen import Frozen
from noetic.store import views
from noetic.store.base import BaseStore

MAX_EVENTS: Final = 5000
AGENT_DRIVEN: Final = "workflow"


class Item(Frozen):
    id: int
    at: str
    ms: float
    lane: str
    kind: str
    label: str
    flag: str | None
    data: dict[str, Any]


class Span(Frozen):
    lane: str
    phase: str
    role: str | None
    stage: int | None
    start_ms: float
    ms: float


class NovaTurn(Frozen):
    run_id: str
    seq: int
    round: int
    node: str
    persona: str
    status: str
    know: float | None
    uncertainty: float | None
    severity: str | None
    confidence: float | None
    ms: float
    tokens_in: int
    tokens_out: int
    error: str | None


class ObserverStage(Frozen):
    stage: int
    layers: list[str]
    confidence: float
    content: str


class Timeline(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    scope: str
    session_id: str | None
    title: str
    lanes: list[str]
    items: list[Item]
    spans: list[Span]
    duration_ms: float
    truncated: bool
    nova_runs: list[dict[str, Any]] = []
    turns: list[NovaTurn] = []
    observer: dict[str, Any] | None = None
    stages: list[ObserverStage] = []


def run_timeline(store: BaseStore, run_id: str) -> Timeline:
    """The events of a task, a Nova run or a session, oldest first, on one clock."""
    scope, column, key, session_id, title = _resolve(store, run_id)
    # a task's events are read through the session's index (events has none on the task)
    rows = views.run_events(store, column, key, session_id, MAX_EVENTS + 1)
    truncated = len(rows) > MAX_EVENTS
    rows = rows[:MAX_EVENTS]
    start, end = _wall(store, scope, key if scope != "nova" else run_id, rows)
    items: list[Item] = []
    spans: list[Span] = []
    open_phases: dict[tuple[str, str, str | None, int | None], float] = {}
    for r in rows:
        data = json.loads(r["data"])
        lane = r["engine"] or AGENT_DRIVEN
        ms = round((instant(r["at"]) - start).total_seconds() * 1000, 3) if start else 0.0
        kind = r["kind"]
        label, flag = describe(kind, data)
        items.append(
            Item(
                id=r["id"],
                at=r["at"],
                ms=ms,
                lane=lane,
                kind=kind,
                label=label,
                flag=flag,
                data=data,
            )
        )
        if kind in (EventKind.PHASE_ENTERED, EventKind.PHASE_COMPLETED):
            phase_key = (lane, str(data.get("phase")), data.get("role"), data.get("stage"))
            if kind == EventKind.PHASE_ENTERED:
                open_phases[phase_key] = ms
            else:
                took = float(data.get("ms") or 0.0)
                began = open_phases.pop(phase_key, max(0.0, ms - took))
                where = dict(zip(("lane", "phase", "role", "stage"), phase_key, strict=True))
                spans.append(Span(**where, start_ms=began, ms=max(took, ms - began)))
    observer, stages = _observer(store, run_id) if scope == "observer" else (None, [])
    if observer is not None and not items:
        items = [
            Item(
                id=st.stage,
                at=observer["at"],
                ms=0.0,
                lane="observer",
                kind="observation",
                label=f"stage {st.stage}: confidence {st.confidence:.2f}",
                flag=None,
                data={},
            )
            for st in stages
        ]
    nova_runs, turns = _nova(store, run_id, key if column == "cascade_id" else None)
    lanes = sorted({i.lane for i in items}, key=_lane_order)
    return Timeline(
        id=run_id,
        scope=scope,
        session_id=session_id,
        title=title,
        lanes=lanes,
        items=items,
        spans=spans,
        duration_ms=max(
            [i.ms for i in items]
            + [s.start_ms + s.ms for s in spans]
            + [(end - start).total_seconds() * 1000 if start and end else 0.0]
        ),
        truncated=truncated,
        nova_runs=nova_runs,
        turns=turns,
        observer=observer,
        stages=stages,
    )


def _wall(
    store: BaseStore, scope: str, key: str, rows: list[Any]
) -> tuple[datetime | None, datetime | None]:
    """When the run began and ended, by the wall clock: from the task's (or session's) start,
    or a phase or run whose completion says it began before the first event was written
    (its ``ms`` back from when it completed), to its end or its last event."""
    starts, ends = [], []
    for r in rows:
        at = instant(r["at"])
        starts.append(at)
        ends.append(at)
        if r["kind"] in (EventKind.PHASE_COMPLETED, EventKind.RUN_FINISHED):
            took = json.loads(r["data"]).get("ms")
            if isinstance(took, int | float) and 0 <= took < 1e12:
                starts.append(at - timedelta(milliseconds=took))
    table: Literal["cascades", "sessions"] | None = (
        "cascades" if scope == "task" else "sessions" if scope == "session" else None
    )
    if table is not None:
        row = views.span(store, table, key)
        if row is not None:
            starts.append(instant(row.created_at))
            if row.ended_at:
                ends.append(instant(row.ended_at))
    return (min(starts) if starts else None), (max(ends) if ends else None)


def _resolve(store: BaseStore, run_id: str) -> tuple[str, views.EventColumn, str, str | None, str]:
    found = views.named_run(store, run_id)
    if found is None:
        raise NotFoundError(f"unknown run {run_id!r}")
    kind, session_id, cascade_id, title = found
    if kind == "nova":
        column: views.EventColumn = "cascade_id" if cascade_id else "session_id"
        return "nova", column, cascade_id or session_id or "", session_id, title
    if kind == "observer":
        return "observer", "cascade_id", run_id, None, title
    if kind == "session":
        return "session", "session_id", run_id, run_id, f"session of {title}"
    return "task", "cascade_id", run_id, session_id, title


def _nova(
    store: BaseStore, run_id: str, task_id: str | None
) -> tuple[list[dict[str, Any]], list[NovaTurn]]:
    """The Nova runs this run is or holds (by its id, or the task they deliberated for), each
    with its status and exit, and all their turns in order."""
    runs, turns = [], []
    for r in views.nova_runs_of(store, run_id, task_id):
        result = json.loads(r["result"] or "{}")
        runs.append(
            {k: r[k] for k in ("id", "question", "status")}
            | {k: result.get(k) for k in ("exit", "rounds", "risk_level")}
            | {"risks": result.get("risks") or {}}
        )
        for seq, text in views.nova_turn_rows(store, r["id"]):
            turn = json.loads(text)
            block = turn.get("block") or {}
            turns.append(
                NovaTurn(
                    run_id=r["id"],
                    seq=seq,
                    **{k: int(turn.get(k, 0)) for k in ("round", "tokens_in", "tokens_out")},
                    **{k: str(turn.get(k, "")) for k in ("node", "persona", "status")},
                    **{k: turn.get(k) for k in ("know", "uncertainty", "error")},
                    ms=float(turn.get("ms", 0.0)),
                    severity=block.get("severity"),
                    confidence=block.get("confidence"),
                )
            )
    return runs, turns


def _observer(store: BaseStore, run_id: str) -> tuple[dict[str, Any] | None, list[ObserverStage]]:
    """An observer chain run as stored: why it stopped and each stage's observation."""
    row = views.observer_run(store, run_id)
    if row is None:
        return None, []
    # an observation's columns carry the stage's fields (and more, which are left out)
    observed = views.observations_of(store, run_id)
    return row, [ObserverStage(**{**o, "layers": json.loads(o["layers"])}) for o in observed]


def describe(kind: str, data: dict[str, Any]) -> tuple[str, str | None]:
    """One line for an event, from its typed payload, and a flag for what needs a look
    (``refused``, ``failed``, ``escalated``) or None. An event whose payload no longer matches
    its model (an older store) is shown as its raw kind."""
    try:
        p: Any = PAYLOADS[EventKind(kind)].model_validate(data)
    except (ValueError, KeyError):
        return kind.replace("_", " "), None
    k = EventKind(kind)
    if k == EventKind.SESSION_STARTED:
        return f"session started: {p.ai_id}, profile {p.profile}", None
    if k in (EventKind.PHASE_ENTERED, EventKind.PHASE_COMPLETED):
        who = f" {p.role}" if p.role else ""
        stage = f" #{p.stage}" if p.stage is not None else ""
        verb = "began" if k == EventKind.PHASE_ENTERED else f"done in {p.ms:.0f} ms"
        return f"{p.phase}{who}{stage} {verb}", None
    if k == EventKind.ASSESSMENT_RECORDED:
        missing = f", missing {', '.join(p.missing)}" if p.missing else ""
        return f"{p.phase} assessment: confidence {p.confidence:.2f}{missing}", None
    if k == EventKind.DECISION:
        rule = f" [{p.rule}]" if p.rule else ""
        flag = "escalated" if "escalat" in p.action.lower() else None
        return f"decision {p.action}{rule}: {p.reason}".rstrip(": "), flag
    if k == EventKind.INVESTIGATION:
        tool = f" with {p.tool}" if p.tool else ""
        target = f" for {p.target_vector}" if p.target_vector else ""
        return f"investigation round {p.round}{tool}{target}: {p.note}".rstrip(": "), None
    if k == EventKind.TOOL_CALL:
        took = f" in {p.ms:.0f} ms" if p.ms is not None else ""
        if p.success:
            return f"tool {p.tool} ok{took}", None
        return f"tool {p.tool} failed{took}: {p.error or 'no reason given'}", "failed"
    if k == EventKind.LLM_CALL:
        cost = f", ${p.cost_usd:.4f}" if p.cost_usd is not None else ""
        text = (
            f"model {p.provider}:{p.model} {p.outcome}: {p.tokens_in} in / {p.tokens_out} out, "
            f"{p.latency_ms:.0f} ms{cost}"
        )
        return text, None if p.outcome == "ok" else "failed"
    if k == EventKind.HOST_EVENT:
        tool = f" ({p.tool})" if p.tool else ""
        return f"{p.host} {p.event}{tool}: {p.detail}".rstrip(": "), "refused"
    if k == EventKind.CONSTRAINT_ENFORCED:
        return f"gate refused: {p.rule} ({p.value:g} against limit {p.limit:g})", "refused"
    if k == EventKind.OBSERVATION:
        return f"stage {p.stage} {p.role}: confidence {p.confidence:.2f}", None
    summary = ", ".join(f"{key} {value}" for key, value in p.summary.items())
    took = f" in {p.ms:.0f} ms" if p.ms is not None else ""
    flag = "escalated" if p.status == "escalated" else ("failed" if p.status == "failed" else None)
    return f"run finished: {p.status}{took}" + (f" ({summary})" if summary else ""), flag


def _lane_order(lane: str) -> tuple[int, str]:
    order = ("cascade", "observer", "nova", "agent", AGENT_DRIVEN)
    return (order.index(lane) if lane in order else len(order), lane)


def instant(at: str) -> datetime:
    """A stored timestamp as an aware instant (one without a zone is UTC)."""
    moment = datetime.fromisoformat(at)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
