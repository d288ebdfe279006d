"""A Claude Code session as one OpenTelemetry trace, written by its hooks.

Command hooks are separate processes, so the spans of one session cannot share a live parent:
they share *ids* instead. The trace id is drawn from the Noetic session (one per Claude Code
session), the agent's span id from it too, and a task's span id from the task, so a hook
exporting a tool call now, and the Stop hook exporting its task later, both name the same
parents. A backend (Phoenix, Langfuse, Jaeger) assembles the tree when the parents arrive: the
agent's span (``invoke_agent claude-code``, exported by SessionEnd), a ``noetic.task`` span per
task (by the first Stop or SessionEnd after it ended, with its stated P(success) and outcomes as
``gen_ai.evaluation.result`` events), an ``execute_tool <tool>`` span per tool call (PreToolUse
to PostToolUse, with the gate's decision), as ``docs/teams.md`` draws the tree. An outcome a
test run gave arrives later on its task's span, so it is exported by the task (or, recorded
after the task was exported, then, under the task).

What the hooks must carry between processes (a tool call's start, what was exported) lives in
``<store>/traces/``; nothing here runs unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from noetic.hosts.hooks.shared import agent_key, note
from noetic.runtime.telemetry import span_id, trace_id

AGENT = "claude-code"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def observe(event: str, payload: dict[str, Any], home: Path, reply: dict[str, Any] | None) -> None:
    """Export what hook ``event`` saw (module docstring). Best effort: a trace never fails a
    hook, and the hook has answered what it must before this runs."""
    from noetic.runtime.opening import open_tracker, remembered_session

    if not home.is_dir():
        return
    try:
        tracker = open_tracker(home, create=True)
    except Exception:
        return
    try:
        sid = remembered_session(tracker.store, agent_key(payload))
        if sid is None:
            return
        writer = _Writer(home, tracker.store, sid, payload)
        if event == "pre-tool-use":
            writer.tool_started(reply)
        elif event == "post-tool-use":
            writer.tool_finished()
        elif event in ("stop", "session-end"):
            writer.tasks()
            if event == "session-end":
                writer.agent()
    except Exception as exc:  # a trace must never stand in the agent's way
        note(home, event, f"trace not written: {type(exc).__name__}: {exc}")
    finally:
        tracker.store.close()


def _ns(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp).timestamp() * 1_000_000_000)


class _Writer:
    """The spans of one hook event, for one Noetic session."""

    def __init__(self, home: Path, store: Any, session_id: str, payload: dict[str, Any]) -> None:
        self.home, self.store, self.session_id, self.payload = home, store, session_id, payload
        self.folder = home / "traces"
        self.trace = trace_id(session_id)

    # what the hooks carry between processes --------------------------------------------------

    def _state_path(self) -> Path:
        return self.folder / f"{self.session_id}.json"

    def _state(self) -> dict[str, list[Any]]:
        try:
            data = json.loads(self._state_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        return data if isinstance(data, dict) else {"tasks": [], "outcomes": []}

    def _save(self, state: dict[str, list[Any]]) -> None:
        from noetic.store.derived_files import atomic_write_json

        atomic_write_json(self._state_path(), state, sync=False)

    def _pending(self) -> Path | None:
        call = self.payload.get("tool_use_id")
        if not isinstance(call, str) or not call or not set(call) <= _SAFE or len(call) > 200:
            return None
        return self.folder / f"call-{call}.json"

    # spans --------------------------------------------------------------------------------------

    def _parent(self, span: int) -> Any:
        from opentelemetry import trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

        context = SpanContext(
            self.trace, span, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
        )
        return trace.set_span_in_context(NonRecordingSpan(context))

    def _open_task(self) -> str | None:
        task = self.store.open_cascade_of(self.session_id)
        return None if task is None else str(task.id)

    def tool_started(self, reply: dict[str, Any] | None) -> None:
        output = (reply or {}).get("hookSpecificOutput") or {}  # the gate's decision, and why
        decision = str(output.get("permissionDecision") or "allow")
        reason = str(output.get("permissionDecisionReason") or "")
        started = time.time_ns()
        if decision == "deny":  # the tool never runs: its span ends here
            self._tool_span(started, started, decision, reason, self._open_task())
            return
        pending = self._pending()
        if pending is None:
            return
        self.folder.mkdir(exist_ok=True)
        record = {"start": started, "decision": decision, "reason": reason}
        pending.write_text(json.dumps(record), encoding="utf-8")

    def tool_finished(self) -> None:
        pending = self._pending()
        record: dict[str, Any] = {}
        if pending is not None:
            with contextlib.suppress(OSError, ValueError):
                record = json.loads(pending.read_text(encoding="utf-8"))
            with contextlib.suppress(OSError):
                pending.unlink()
        ended = time.time_ns()
        start = record.get("start")
        self._tool_span(
            start if isinstance(start, int) and start <= ended else ended,
            ended,
            str(record.get("decision") or "allow"),
            str(record.get("reason") or ""),
            self._open_task(),
        )

    def _tool_span(
        self, start: int, end: int, decision: str, reason: str, task: str | None
    ) -> None:
        from noetic.runtime import telemetry

        name = str(self.payload.get("tool_name") or "tool")
        parent = span_id("task", task) if task else span_id("agent", self.session_id)
        span = telemetry.tracer().start_span(
            f"execute_tool {name}",
            context=self._parent(parent),
            start_time=start,
        )
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", name)
        call = self.payload.get("tool_use_id")
        if isinstance(call, str) and call:
            span.set_attribute("gen_ai.tool.call.id", call)
        span.set_attribute("noetic.gate.decision", decision)
        if reason:
            span.set_attribute("noetic.gate.reason", reason)
        if task:
            span.set_attribute("noetic.cascade_id", task)
        if decision == "deny":
            telemetry.failed(span, "denied by the gate")
        span.end(end_time=end)

    def tasks(self) -> None:
        """Export every task of the session that ended and is not exported yet, and every
        outcome recorded for an exported task since."""
        state = self._state()
        exported = set(state.get("tasks", []))
        sent = set(state.get("outcomes", []))
        for task in self.store.cascades(self.session_id):
            outcomes = self.store.outcomes_of(task.id)
            if task.id not in exported:
                if task.ended_at is None:
                    continue
                self._task_span(task, outcomes)
                exported.add(task.id)
                sent.update(o["id"] for o in outcomes)
                continue
            for outcome in outcomes:
                if outcome["id"] not in sent:
                    self._late_outcome(task.id, outcome)
                    sent.add(outcome["id"])
        self._save({"tasks": sorted(exported), "outcomes": sorted(sent)})

    def _task_span(self, task: Any, outcomes: list[dict[str, Any]]) -> None:
        from noetic.calibration.per_phase import stated_value
        from noetic.runtime import telemetry

        with telemetry.chosen_ids(span=span_id("task", task.id)):
            span = telemetry.tracer().start_span(
                "noetic.task",
                context=self._parent(span_id("agent", self.session_id)),
                start_time=_ns(task.created_at),
            )
        span.set_attribute("noetic.cascade_id", task.id)
        span.set_attribute("noetic.task", task.task[:500])
        span.set_attribute("noetic.status", task.status)
        for record in self.store.assessments(cascade_id=task.id):
            a = record.assessment
            value, basis = stated_value(a.p_success, record.decision.confidence)
            explanation = (
                "the stated probability of success"
                if basis == "p_success"
                else "no P(success) stated: the vectors' confidence"
            )
            span.add_event(
                "gen_ai.evaluation.result",
                _evaluation(f"noetic.p_success.{a.phase.value}", value, "stated", explanation),
                timestamp=_ns(record.created_at),
            )
        for outcome in outcomes:
            span.add_event(
                "gen_ai.evaluation.result", _outcome(outcome), timestamp=_ns(outcome["at"])
            )
        span.end(end_time=_ns(task.ended_at))

    def _late_outcome(self, task: str, outcome: dict[str, Any]) -> None:
        from noetic.runtime import telemetry

        at = _ns(outcome["at"])
        span = telemetry.tracer().start_span(
            "noetic.outcome", context=self._parent(span_id("task", task)), start_time=at
        )
        span.set_attribute("noetic.cascade_id", task)
        span.add_event("gen_ai.evaluation.result", _outcome(outcome), timestamp=at)
        span.end(end_time=at)

    def agent(self) -> None:
        from noetic.runtime import telemetry

        session = self.store.get_session(self.session_id)
        with telemetry.chosen_ids(trace=self.trace, span=span_id("agent", self.session_id)):
            span = telemetry.tracer().start_span(
                f"invoke_agent {AGENT}",
                start_time=_ns(session.created_at),
            )
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        span.set_attribute("gen_ai.agent.name", AGENT)
        claude = self.payload.get("session_id")
        if isinstance(claude, str) and claude:
            span.set_attribute("gen_ai.conversation.id", claude)
        span.set_attribute("noetic.session_id", self.session_id)
        span.end()
        with contextlib.suppress(OSError):
            self._state_path().unlink()


def _evaluation(name: str, value: float, label: str, explanation: str) -> dict[str, Any]:
    return {
        "gen_ai.evaluation.name": name,
        "gen_ai.evaluation.score.value": float(value),
        "gen_ai.evaluation.score.label": label,
        "gen_ai.evaluation.explanation": explanation,
    }


def _outcome(outcome: dict[str, Any]) -> dict[str, Any]:
    score = float(outcome["score"])
    label = "success" if score >= 1 else "failure" if score <= 0 else "partial"
    explanation = f"{outcome['source']}: {outcome['evidence']}".rstrip(": ")
    return _evaluation("noetic.outcome", score, label, explanation[:1000])
