"""OpenTelemetry out: every run's events as OTLP/HTTP traces, when ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set.

A :class:`SpanWriter` subscribes to a tracker's event bus and turns the typed events into spans
(which spans, and their GenAI attributes: ``docs/teams.md``): a run's span is keyed by the
engine and the session (a run's first events come before its task exists), opened by its first
event and ended by ``run_finished``; a phase's from ``phase_entered`` to ``phase_completed``; a
tool or model call's ends when its event came and starts its duration before. A Claude Code
session's trace, written by its hooks, is :mod:`noetic.hosts.hooks.session_trace`.

A session's runs share one trace, its id drawn from the session's (:func:`trace_id`). The
exporter is the SDK's own, so the other ``OTEL_*`` variables (``OTEL_EXPORTER_OTLP_HEADERS``,
``OTEL_SERVICE_NAME``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``…) work as everywhere; a collector
that is down costs an export half a second at most (unless ``OTEL_EXPORTER_OTLP_TIMEOUT`` says
otherwise) and one line on stderr. Spans are batched and sent on a thread, and the rest at exit.

Nothing here is imported unless the variable is set (:func:`maybe_subscribe` checks it first),
and then only if the ``otel`` extra is installed; without it the run goes on and says so once on
stderr.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import sys
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from typing import Any

    from noetic.events import Event, EventBus

_PROVIDER: Any = None
_LOCK = _thread.allocate_lock()  # threading.Lock, without loading threading


def enabled() -> bool:
    env = os.environ
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    return bool(endpoint) and env.get("OTEL_SDK_DISABLED", "").lower() != "true"


def maybe_subscribe(bus: EventBus) -> None:
    """Export ``bus``'s runs when OpenTelemetry is configured; otherwise do nothing at all."""
    if not enabled():
        return
    try:
        writer = SpanWriter(tracer())
    except ImportError as exc:
        print(
            f"noetic: OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed "
            f"({exc.name}): pip install 'noetic[otel]'",
            file=sys.stderr,
        )
        return
    bus.subscribe(writer)


def tracer() -> Any:
    """The process's tracer, its provider made once (service ``noetic`` unless
    ``OTEL_SERVICE_NAME`` says otherwise)."""
    global _PROVIDER
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    with _LOCK:
        if _PROVIDER is None:
            name = os.environ.get("OTEL_SERVICE_NAME") or "noetic"
            provider = TracerProvider(
                resource=Resource.create({SERVICE_NAME: name}), id_generator=_ids()
            )
            provider.add_span_processor(BatchSpanProcessor(_exporter()))
            _PROVIDER = provider
        return _PROVIDER.get_tracer("noetic")


#: How long one export may take when ``OTEL_EXPORTER_OTLP_TIMEOUT`` does not say: a collector
#: that is down costs a run this at most, not the exporter's default ten seconds of retries.
EXPORT_TIMEOUT_S = 0.5
_CHOSEN: threading.local = _thread._local()


def trace_id(session_id: str) -> int:
    """The trace of a Noetic session: 128 bits drawn from its id (never 0). Every run of the
    session, in any process, and a Claude Code session's hooks, write into this one trace."""
    from hashlib import sha256  # here: every hook asks enabled(), few need an id

    digest = sha256(f"noetic-trace:{session_id}".encode()).hexdigest()
    return int(digest[:32], 16) or 1


def span_id(kind: str, key: str) -> int:
    """A span's id drawn from what it is (``agent`` + session, ``task`` + task id; never 0),
    so a process can name a parent another process exports."""
    from hashlib import sha256

    return int(sha256(f"noetic-span:{kind}:{key}".encode()).hexdigest()[:16], 16) or 1


def _ids() -> Any:
    """Random ids, except where :func:`chosen_ids` names them."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class Chosen(RandomIdGenerator):
        def generate_span_id(self) -> int:
            chosen = getattr(_CHOSEN, "span", None)
            return chosen if chosen is not None else super().generate_span_id()

        def generate_trace_id(self) -> int:
            chosen = getattr(_CHOSEN, "trace", None)
            return chosen if chosen is not None else super().generate_trace_id()

    return Chosen()


@contextlib.contextmanager
def chosen_ids(*, span: int | None, trace: int | None = None) -> Iterator[None]:
    """The span started inside gets id ``span`` (and, with no parent, trace ``trace``): spans
    that other processes already name as their parent (:mod:`noetic.hosts.hooks.session_trace`)."""
    _CHOSEN.span, _CHOSEN.trace = span, trace
    try:
        yield
    finally:
        _CHOSEN.span = _CHOSEN.trace = None


def _exporter() -> Any:
    """The SDK's OTLP/HTTP exporter, bounded in time and saying a failure in one line."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    env = os.environ
    given = env.get("OTEL_EXPORTER_OTLP_TIMEOUT") or env.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
    # The exporter logs each retry and failure with the HTTP client's whole error; one line of
    # ours says it instead.
    import logging

    logging.getLogger("opentelemetry.exporter.otlp").setLevel(logging.CRITICAL)
    inner = OTLPSpanExporter(timeout=None if given else EXPORT_TIMEOUT_S)

    class OneLine(SpanExporter):
        said = False

        def export(self, spans: Any) -> Any:
            try:
                result = inner.export(spans)
            except Exception as exc:  # the exporter's own bug: the run goes on
                result, reason = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
            else:
                reason = "it did not answer or refused them"
            if result != SpanExportResult.SUCCESS and not OneLine.said:
                OneLine.said = True
                print(
                    f"noetic: {len(spans)} trace span(s) not sent to {inner._endpoint}: {reason}",
                    file=sys.stderr,
                )
            return result

        def shutdown(self) -> None:
            inner.shutdown()  # type: ignore[no-untyped-call]

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(inner.force_flush(timeout_millis))

    return OneLine()


def failed(span: Any, reason: str) -> None:
    """Mark ``span`` as an error, with ``error.type``."""
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", reason)
    span.set_status(Status(StatusCode.ERROR, reason))


#: Finish reasons as the GenAI conventions name them, from the providers' own words.
FINISH_REASONS = {
    "end_turn": "stop",
    "end": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def flush(timeout_ms: int = 5000) -> bool:
    """Send the spans still batched (the SDK also does at exit)."""
    return bool(_PROVIDER.force_flush(timeout_ms)) if _PROVIDER is not None else True


def _ns(event: Event) -> int:
    return int(event.at.timestamp() * 1_000_000_000)


class SpanWriter:
    """An event-bus subscriber that writes spans (see the module's docstring)."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer
        self._runs: dict[tuple[str, str], Any] = {}
        self._tasks: set[tuple[str, str]] = set()
        self._phases: dict[tuple[str, str], list[tuple[tuple[Any, ...], Any]]] = {}
        self._lock = _thread.allocate_lock()

    def __call__(self, event: Event) -> None:
        from noetic.events import EventKind

        key = (event.engine or "workflow", event.session_id or event.cascade_id or "")
        with self._lock:
            run = self._run(key, event)
            data = event.data
            if event.kind == EventKind.PHASE_ENTERED:
                self._enter(key, run, event)
            elif event.kind == EventKind.PHASE_COMPLETED:
                self._complete(key, event)
            elif event.kind == EventKind.TOOL_CALL:
                span = self._child(key, run, f"execute_tool {data['tool']}", event, data.get("ms"))
                span.set_attribute("gen_ai.operation.name", "execute_tool")
                span.set_attribute("gen_ai.tool.name", data["tool"])
                if not data.get("success", True):
                    failed(span, data.get("error") or "tool call failed")
                span.end(end_time=_ns(event))
            elif event.kind == EventKind.LLM_CALL:
                self._model_call(key, run, event)
            elif event.kind == EventKind.RUN_FINISHED:
                self._finish(key, run, event)

    def _run(self, key: tuple[str, str], event: Event) -> Any:
        run = self._runs.get(key)
        if run is None:
            with chosen_ids(span=None, trace=trace_id(key[1]) if key[1] else None):
                run = self._tracer.start_span(f"invoke_agent {key[0]}", start_time=_ns(event))
            run.set_attribute("gen_ai.operation.name", "invoke_agent")
            run.set_attribute("gen_ai.agent.name", key[0])
            run.set_attribute("noetic.engine", key[0])
            if event.session_id is not None:
                run.set_attribute("noetic.session_id", event.session_id)
            self._runs[key] = run
        if event.cascade_id is not None and key not in self._tasks:  # the task opens mid-run
            self._tasks.add(key)
            run.set_attribute("noetic.cascade_id", event.cascade_id)
        return run

    def _parent(self, key: tuple[str, str], run: Any) -> Any:
        from opentelemetry import trace

        open_phases = self._phases.get(key)
        return trace.set_span_in_context(open_phases[-1][1] if open_phases else run)

    def _child(
        self, key: tuple[str, str], run: Any, name: str, event: Event, ms: Any, client: bool = False
    ) -> Any:
        from opentelemetry.trace import SpanKind

        end = _ns(event)
        start = end - int(float(ms or 0) * 1_000_000)
        kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
        return self._tracer.start_span(
            name, context=self._parent(key, run), kind=kind, start_time=start
        )

    def _enter(self, key: tuple[str, str], run: Any, event: Event) -> None:
        data = event.data
        phase, stage, role = data["phase"], data.get("stage"), data.get("role")
        if role:
            name, kind = f"turn {phase} {role}", "turn"
        elif stage is not None:
            name, kind = f"stage {stage} {phase}", "stage"
        else:
            name, kind = f"phase {phase}", "phase"
        span = self._child(key, run, name, event, 0)
        span.set_attribute("noetic.span_kind", kind)
        span.set_attribute("noetic.phase", phase)
        if stage is not None:
            span.set_attribute("noetic.stage", stage)
        if role:
            span.set_attribute("noetic.role", role)
        self._phases.setdefault(key, []).append(((phase, stage, role), span))

    def _complete(self, key: tuple[str, str], event: Event) -> None:
        data = event.data
        ident = (data["phase"], data.get("stage"), data.get("role"))
        open_phases = self._phases.get(key, [])
        for i in range(len(open_phases) - 1, -1, -1):
            if open_phases[i][0] == ident:
                _, span = open_phases.pop(i)
                span.end(end_time=_ns(event))
                return

    def _model_call(self, key: tuple[str, str], run: Any, event: Event) -> None:
        data = event.data
        span = self._child(
            key, run, f"chat {data['model']}", event, data.get("latency_ms"), client=True
        )
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.provider.name", data["provider"])
        span.set_attribute("gen_ai.system", data["provider"])
        span.set_attribute("gen_ai.request.model", data["model"])
        span.set_attribute("gen_ai.usage.input_tokens", int(data.get("tokens_in") or 0))
        span.set_attribute("gen_ai.usage.output_tokens", int(data.get("tokens_out") or 0))
        span.set_attribute("noetic.attempt", int(data.get("attempt") or 1))
        if data.get("stop_reason"):
            reason = str(data["stop_reason"])
            span.set_attribute(
                "gen_ai.response.finish_reasons", [FINISH_REASONS.get(reason, reason)]
            )
        if data.get("cost_usd") is not None:
            span.set_attribute("noetic.cost_usd", float(data["cost_usd"]))
        if data.get("outcome") != "ok":
            failed(span, data.get("error_class") or str(data.get("outcome")))
        span.end(end_time=_ns(event))

    def _finish(self, key: tuple[str, str], run: Any, event: Event) -> None:
        end = _ns(event)
        for _, span in reversed(self._phases.pop(key, [])):  # phases the run left open
            span.end(end_time=end)
        status = str(event.data.get("status", ""))
        run.set_attribute("noetic.status", status)
        if "fail" in status or "error" in status:
            failed(run, status)
        run.end(end_time=end)
        del self._runs[key]
        self._tasks.discard(key)
