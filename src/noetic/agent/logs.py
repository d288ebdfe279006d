"""``agent.logs(mode)``: a run's events read back for people.

* ``summary`` — one line per step: what triage chose, each reason step, each tool call, the end;
* ``performance`` — time per node and per tool, model calls, tokens and latency;
* ``errors`` — failed tool calls and model calls, refusals, limits and circuit breakers.
"""

from __future__ import annotations

from collections import defaultdict

from noetic.errors import InvalidValueError
from noetic.events import Event, EventKind

MODES = ("summary", "performance", "errors")


def render_logs(events: list[Event], mode: str = "summary") -> list[str]:
    if mode not in MODES:
        raise InvalidValueError(
            f"unknown log mode {mode!r}", field="mode", fix=f"use one of {', '.join(MODES)}"
        )
    if mode == "summary":
        return _summary(events)
    if mode == "performance":
        return _performance(events)
    return _errors(events)


def _summary(events: list[Event]) -> list[str]:
    lines = []
    for e in events:
        d = e.data
        if e.kind == EventKind.PHASE_ENTERED and d["phase"] == "reason":
            lines.append(f"reason: iteration {d['stage'] + 1}")
        elif e.kind == EventKind.DECISION:
            lines.append(f"decision: {d['action']} — {d['reason']}")
        elif e.kind == EventKind.TOOL_CALL:
            outcome = "ok" if d["success"] else f"failed: {d.get('error') or ''}"[:120]
            lines.append(f"act: {d['tool']} {outcome} ({d.get('ms') or 0:.0f} ms)")
        elif e.kind == EventKind.CONSTRAINT_ENFORCED:
            lines.append(f"limit: {d['rule']} ({d['value']:g} of {d['limit']:g})")
        elif e.kind == EventKind.RUN_FINISHED:
            s = d.get("summary", {})
            lines.append(
                f"finished: {d['status']} after {s.get('iterations', 0)} iteration(s), "
                f"{s.get('tool_calls', 0)} tool call(s), {d.get('ms') or 0:.0f} ms"
            )
    return lines


def _performance(events: list[Event]) -> list[str]:
    nodes: dict[str, list[float]] = defaultdict(list)
    tools: dict[str, list[float]] = defaultdict(list)
    calls = tokens_in = tokens_out = 0
    latency = 0.0
    for e in events:
        d = e.data
        if e.kind == EventKind.PHASE_COMPLETED:
            nodes[d["phase"]].append(d["ms"])
        elif e.kind == EventKind.TOOL_CALL:
            tools[d["tool"]].append(d.get("ms") or 0.0)
        elif e.kind == EventKind.LLM_CALL:
            calls += 1
            tokens_in += d.get("tokens_in", 0)
            tokens_out += d.get("tokens_out", 0)
            latency += d.get("latency_ms", 0.0)
    lines = [
        f"{kind} {name}: {len(ms)}× {sum(ms):.1f} ms (mean {sum(ms) / len(ms):.1f})"
        for kind, times in (("node", nodes), ("tool", tools))
        for name, ms in times.items()
    ]
    lines.append(
        f"model: {calls} call(s), {tokens_in} tokens in, {tokens_out} out, {latency:.0f} ms"
    )
    return lines


def _errors(events: list[Event]) -> list[str]:
    lines = []
    for e in events:
        d = e.data
        if e.kind == EventKind.TOOL_CALL and not d["success"]:
            lines.append(f"tool {d['tool']} failed (iteration {d.get('round')}): {d.get('error')}")
        elif e.kind == EventKind.LLM_CALL and d.get("outcome") == "error":
            lines.append(
                f"model call failed: {d.get('error_class')} (attempt {d.get('attempt')}, "
                f"status {d.get('status')})"
            )
        elif e.kind == EventKind.DECISION and d["action"] in ("refuse", "stop", "memory:failed"):
            lines.append(f"{d['action']}: {d['reason']} [{d.get('rule')}]")
        elif e.kind == EventKind.CONSTRAINT_ENFORCED:
            lines.append(f"limit {d['rule']}: {d['value']:g} of {d['limit']:g}")
    return lines
