"""The eval engine: a model's stated P(success) against its tests' verdict, problem by problem.

For each problem, on the run context's model:

    PREFLIGHT  the model assesses itself (13 vectors and p_success) from the prompt alone
    ACT        it writes the whole function, in a fenced python block
    POSTFLIGHT it reassesses having seen its code: a standard review, or an adversarial one
               that first looks for what is wrong with it (the profile's, or --review)
    TEST       the problem's own tests run on the function in the OS sandbox, with a time
               limit and a memory limit, from the moment the function is read (so they run
               while the model reassesses it, never seeing their verdict); their verdict is
               the task's outcome (source ``test``), recorded after the POSTFLIGHT

Each problem is an ordinary task (a cascade) in a session of the ``eval`` engine, so the
calibration report, the dashboard and everything reading outcomes use it. ``concurrency``
workers take problems from a queue, each in its own session (a session has one open task at a
time). Every model call is written to the run's rows (:mod:`noetic.store.evals`) before the
next begins, so a killed run resumes where it stopped and runs nothing that finished twice; the
POSTFLIGHT and the tests' verdict are one write when the tests are done by the time the model
has reassessed (the POSTFLIGHT is written first, on its own, when they are not).

Each outcome refits the agent's recalibration map, which the next decision reads. With one
problem at a time, the new outcome's points are read on the run's own connection as it is
written, and the fit runs on a thread of the run's own while the model is asked for the next
PREFLIGHT (the run has nothing else to do then); that decision waits for it and keeps the map in
its own write (the thread reads and writes nothing). The map is the one a refit inside the
outcome's write keeps, as it is with several problems at once, whose steps fill those waits (a
thread beside them would only take turns with them).

A problem's time runs from its context being built to its outcome written; of Noetic's own
time in it (``ms_other``), ``ms_added`` is what the problem waited for: the time during which
neither a model call nor its tests were under way (the writes made while the tests run are
not; ``docs/eval.md``).

A reply that stays unusable after its repair round ends that problem as ``error`` (its task
closed as ``parse_failure``) and the run goes on; a provider that still fails after its retries
stops the run: no new problem starts, the run is ``failed`` and says why, and what finished is
kept for ``resume``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import dataclasses
import os
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from noetic.assessment import Assessment, Phase, Review
from noetic.calibration.learning import record_outcome
from noetic.calibration.outcomes import effective_profile
from noetic.calibration.recalibrating import (
    Refit,
    fit_snapshot,
    keep,
    points_of,
    read_settings,
)
from noetic.errors import NoeticError, ParseError, ProviderError, UsageError, WorkflowError
from noetic.evaluation.grading import (
    MEMORY_MB,
    MIN_MEMORY_MB,
    Verdict,
    extract_code,
    program,
    run_tests,
)
from noetic.evaluation.problems import Problem
from noetic.events import EventKind, PhaseCompleted
from noetic.llm.assessment_reply import assess_with_model
from noetic.llm.base import Provider, Request, UsageTotals
from noetic.llm.resilience import ResilientProvider
from noetic.profiles import Profile
from noetic.runtime.context import RunContext, recorded_provider
from noetic.store import evals
from noetic.store.evals import EvalRunRecord, EvalTaskRecord
from noetic.tools.sandbox import Sandbox, choose

ENGINE: Final = "eval"
ReviewChoice = Literal["profile", "standard", "adversarial", "split"]
REVIEWS: Final = ("profile", "standard", "adversarial", "split")
SYSTEM: Final = "You are an expert Python programmer. Write correct, complete code."


def default_concurrency() -> int:
    """Problems at once by default: twice the machine's cores (a problem mostly waits on
    the model), at least 2 and at most 16."""
    return max(2, min(16, 2 * (os.cpu_count() or 1)))


class EvalSettings(BaseModel):
    """How a run goes; kept with the run, so a resume goes on the same way."""

    model_config = ConfigDict(frozen=True)

    concurrency: int = Field(default_factory=default_concurrency, ge=1, le=64)
    test_timeout_s: float = Field(10.0, gt=0, le=600)
    test_memory_mb: int = Field(MEMORY_MB, ge=MIN_MEMORY_MB, le=1024 * 1024)
    max_tokens: int = Field(2048, gt=0)
    sandbox: Literal["required", "auto", "off"] = "required"


class TaskResult(BaseModel):
    """One problem as it stands: ``--json`` prints one per line."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["task"] = "task"
    run_id: str
    seq: int
    task_id: str
    state: str
    passed: bool | None = None
    reason: str | None = None
    review: str | None = None
    session_id: str | None = None
    cascade_id: str | None = None
    p_preflight: float | None = None
    p_postflight: float | None = None
    ms_total: float | None = None
    ms_model: float | None = None
    ms_test: float | None = None
    # Noetic's own time: neither waiting on the model nor on the tests (None: not recorded)
    ms_other: float | None = None
    # the part of it the problem waited for: while neither a model call nor its tests were
    # under way (what was written while the tests ran is not; None: not recorded)
    ms_added: float | None = None
    usage: UsageTotals | None = None


class Tally(BaseModel):
    """The run so far, for a progress bar."""

    model_config = ConfigDict(frozen=True)

    total: int
    done: int
    passed: int
    errors: int
    cost_usd: float | None
    tokens: int


class EvalRun(BaseModel):
    """A run's result: its status, every problem, and the totals."""

    kind: Literal["summary"] = "summary"
    run_id: str
    task_set: str
    model: str | None
    ai_id: str
    profile: str | None
    status: str
    detail: str = ""
    total: int
    done: int
    passed: int
    failed: int
    errors: int
    pending: int
    success_rate: float | None
    usage: UsageTotals
    tasks: list[TaskResult] = []


def task_text(problem: Problem) -> str:
    """The task as the assessments see it: the prompt alone."""
    return (
        f"Write the Python function `{problem.entry_point}` below so that its hidden unit "
        f"tests pass.\n\n```python\n{problem.prompt.rstrip()}\n```"
    )


def code_prompt(problem: Problem) -> str:
    """The request for the function: the whole function in a fenced python block."""
    return (
        "Complete the following Python function. Reply with the whole function (its signature "
        "and body, and any imports or helpers it needs) in a single ```python code block.\n\n"
        f"```python\n{problem.prompt.rstrip()}\n```"
    )


def review_of(choice: str, profile: Profile, seq: int) -> str:
    """The POSTFLIGHT review problem ``seq`` gets: the profile's, the one named, or under
    ``split`` standard for odd and adversarial for even positions."""
    if choice == "profile":
        return profile.postflight_review.value
    if choice == "split":
        return Review.STANDARD.value if seq % 2 else Review.ADVERSARIAL.value
    return Review(choice).value


OnTask = Callable[[TaskResult, Tally], None]


async def run_eval(ctx: RunContext, run_id: str, *, on_task: OnTask | None = None) -> EvalRun:
    """Run (or go on with) the eval run ``run_id``: every problem not yet ``done`` or
    ``error``, with the run's settings, on the context's model (module docstring)."""
    record = evals.get_run(ctx.store, run_id)
    _refuse_if_running(record)
    process = {"host": socket.gethostname(), "pid": os.getpid()}
    settings = EvalSettings.model_validate(record.settings.get("engine", {}))
    sandbox = choose(settings.sandbox)
    if record.profile is not None:  # with the guardian's corrections, as sessions use it
        profile = effective_profile(ctx.store, ctx.tracker.registry, record.profile)
    else:
        profile = ctx.profile or ctx.tracker.registry.select(None, ai_model=record.model)
    # checkpoints (git notes and the checkpoints table) are for resuming an agent's work in a
    # session; an eval run resumes from its own rows, so its tasks write none
    tracker = copy.copy(ctx.tracker)  # the same store, bus and profiles; nothing subscribed again
    tracker.checkpoints = False
    # [calibration] and [gate] as the run starts, for all its decisions (read per decision
    # otherwise); a resumed run reads them again
    tracker.settings = tracker.settings or read_settings(ctx.store.home)
    ctx = dataclasses.replace(ctx, tracker=tracker)
    runner = _Runner(ctx, record, settings, sandbox, profile, on_task)
    evals.update_run(
        ctx.store, record.id, settings={**record.settings, "process": process},
        status="running", detail="", ended_at=None,
    )  # fmt: skip
    with ctx.scope():
        try:
            await runner.go()
        except (asyncio.CancelledError, KeyboardInterrupt):
            evals.update_run(
                ctx.store, record.id, status="interrupted",
                detail=f"interrupted: `noetic eval resume {record.id}` goes on",
            )  # fmt: skip
            raise
        except Exception as exc:
            evals.update_run(
                ctx.store, record.id, status="failed",
                detail=f"stopped by an error: {exc}; `noetic eval resume {record.id}` goes on",
            )  # fmt: skip
            raise
        finally:
            runner.close()
    if runner.failure is not None:
        status = "failed"
        detail = (
            f"the model failed after its retries: {runner.failure}; what finished is kept: "
            f"`noetic eval resume {record.id}` goes on"
        )
    else:
        status, detail = "completed", ""
    from noetic.store.rows import now

    evals.update_run(ctx.store, record.id, status=status, detail=detail, ended_at=now())
    return stored_run(ctx.store, record.id)


@dataclasses.dataclass(frozen=True)
class _Worker:
    """One worker: its session and its recorded provider, reused problem after problem."""

    session_id: str
    provider: Provider


@dataclasses.dataclass(frozen=True)
class _Answered:
    """A problem's answer, its reassessment not yet written: the tests already started."""

    cascade_id: str
    code: str | None
    pre: Assessment
    post: Assessment
    timer: float  # when the PREFLIGHT was asked
    testing: asyncio.Future[Verdict]
    reassessing: _Span  # the POSTFLIGHT's call, awaited while the tests ran


@dataclasses.dataclass
class _Span:
    """When something began and ended (``perf_counter``; 0 until it has); for a model call,
    the model's own milliseconds within it; for the tests, how long the problem waited for
    their process to start."""

    start: float = 0.0
    end: float = 0.0
    model_ms: float = 0.0
    launch_ms: float = 0.0

    def overlap_ms(self, other: _Span) -> float:
        """How long both were under way, in milliseconds."""
        return max(0.0, min(self.end, other.end) - max(self.start, other.start)) * 1000


class _Runner:
    def __init__(
        self,
        ctx: RunContext,
        record: EvalRunRecord,
        settings: EvalSettings,
        sandbox: Sandbox,
        profile: Profile,
        on_task: OnTask | None,
    ) -> None:
        self.ctx = ctx
        self.record = record
        self.settings = settings
        self.sandbox = sandbox
        self.profile = profile
        self.on_task = on_task
        self.failure: ProviderError | None = None
        self.inner = getattr(ctx.model, "inner", ctx.model)
        self.tasks = evals.tasks(ctx.store, record.id)
        self.workers: list[_Worker] = []
        self.written: dict[int, dict[str, Any]] = {}  # by seq: what this run wrote to each problem
        # one problem at a time: the recalibration map refitted after each outcome on a thread
        # of its own (module docstring), one refit at a time, in order
        self.refitter = (
            concurrent.futures.ThreadPoolExecutor(1, "noetic-eval-refit")
            if settings.concurrency == 1
            else None
        )
        self.refitting: asyncio.Future[Refit] | None = None
        self.counts = {
            "done": sum(1 for t in self.tasks if t.state == "done"),
            "passed": sum(1 for t in self.tasks if t.state == "done" and t.passed),
            "error": sum(1 for t in self.tasks if t.state == "error"),
        }
        self.earlier = UsageTotals()  # the model calls of problems finished before this run
        for t in self.tasks:
            if t.state in ("done", "error") and "usage" in t.result:
                self.earlier = self.earlier.plus(UsageTotals(**t.result["usage"]))

    async def go(self) -> None:
        todo: asyncio.Queue[EvalTaskRecord] = asyncio.Queue()
        for task in self.tasks:
            if task.state not in ("done", "error"):
                todo.put_nowait(task)
        count = min(self.settings.concurrency, todo.qsize())
        try:
            await asyncio.gather(*(self.work(todo) for _ in range(count)))
        finally:  # however the run ends, the map it keeps has seen its last outcome
            fresh = await self.refitted()
            if fresh is not None:
                # derived from the outcomes, which are in: a map not kept is refitted by the
                # next decision
                with contextlib.suppress(NoeticError):
                    keep(self.ctx.store, fresh)

    async def work(self, todo: asyncio.Queue[EvalTaskRecord]) -> None:
        worker: _Worker | None = None
        while self.failure is None:
            try:
                task = todo.get_nowait()
            except asyncio.QueueEmpty:
                return
            if worker is None:
                worker = self.new_worker()
            result = await self.one(worker, task)
            if self.on_task is not None and result is not None:
                self.on_task(result, self.tally())

    def new_worker(self) -> _Worker:
        session, _ = self.ctx.tracker.bootstrap(
            ai_id=self.record.ai_id, profile=self.profile.name, ai_model=self.record.model
        )
        provider = recorded_provider(self.inner, self.ctx.tracker, session_id=session.id)
        if isinstance(provider, ResilientProvider):
            provider.hold = True  # each call recorded in the step's write that follows it
        worker = _Worker(session.id, provider)
        self.workers.append(worker)
        return worker

    def close(self) -> None:
        """Record any model call still held, end the workers' sessions (a resumed run opens
        its own) and the refits' thread."""
        if self.refitter is not None:
            self.refitter.shutdown(wait=True)
        for w in self.workers:
            if isinstance(w.provider, ResilientProvider):
                with contextlib.suppress(NoeticError):
                    w.provider.flush()
            with contextlib.suppress(NoeticError):
                self.ctx.store.end_session(w.session_id)

    def tally(self) -> Tally:
        usage = self.usage()
        return Tally(
            total=len(self.tasks),
            done=self.counts["done"],
            passed=self.counts["passed"],
            errors=self.counts["error"],
            cost_usd=usage.cost_usd,
            tokens=usage.input_tokens + usage.output_tokens,
        )

    def usage(self) -> UsageTotals:
        totals = self.earlier
        for w in self.workers:
            totals = totals.plus(_totals(w.provider))
        return totals

    # one problem ------------------------------------------------------------------------

    async def one(self, worker: _Worker, task: EvalTaskRecord) -> TaskResult | None:
        start = time.perf_counter()  # the problem's time: its context built included
        problem = Problem.model_validate(task.problem)
        ctx = RunContext(
            engine=ENGINE,
            tracker=self.ctx.tracker,
            provider=worker.provider,
            session_id=worker.session_id,
            profile=self.profile,
            limits=self.ctx.limits,
        )
        if hasattr(worker.provider, "cascade_id"):
            worker.provider.cascade_id = None
        before = _totals(worker.provider)
        result: dict[str, Any] = dict(task.result)
        cascade_id = task.cascade_id
        answered: _Answered | None = None
        testing: asyncio.Future[Verdict] | None = None
        tests, reassessing = _Span(), _Span()
        if task.state == "answered":  # its events are the task's, as before the stop
            ctx.task_id = task.cascade_id
        try:
            if task.state == "started":
                _abandon(self.ctx, task)
            if task.state in ("pending", "started"):
                answered = await self.answer(ctx, task, problem, tests)
                cascade_id, testing = answered.cascade_id, answered.testing
                reassessing = answered.reassessing
                if not testing.done():  # kept before the tests are waited for
                    with _step(ctx):
                        result = self.reassessed(ctx, task, problem, answered, before)
                    answered = None
            else:
                testing = asyncio.ensure_future(self.judge(problem, task.code, tests))
            waiting = time.perf_counter()
            verdict = await testing
            waited = (time.perf_counter() - waiting) * 1000
        except ProviderError as exc:
            self.failure = self.failure or exc
            _close(ctx, "provider_failure", str(exc))
            return None
        except ParseError as exc:
            reason = f"the model's assessment could not be read: {exc.message}"
            with _step(ctx):  # the task closed and the problem's state: one write
                _close(ctx, "parse_failure", reason)
                self.update(task, state="error", reason=reason)
            return self.result(task)
        finally:
            if testing is not None and not testing.done():  # nothing left running
                testing.cancel()
                with contextlib.suppress(BaseException):
                    await testing
        assert cascade_id is not None
        # the outcome, the TEST event and the problem's state are one write, with the
        # reassessment when the tests were done by the time it came; only a problem answered
        # before a stop (its outcome written by an older run between them) may have its
        # outcome already
        with _step(ctx):
            if answered is not None:
                result = self.reassessed(ctx, task, problem, answered, before)
            if task.state != "answered" or _test_outcome(self.ctx, cascade_id) is None:
                record_outcome(
                    self.ctx.store,
                    cascade_id,
                    score=1.0 if verdict.passed else 0.0,
                    source="test",
                    evidence=f"{problem.task_id}: {verdict.reason}",
                    registry=self.ctx.tracker.registry,
                    refit=self.refitter is None,  # else on its thread, once this write is in
                )
            if "usage" in result:  # answered: its model calls are counted there
                spent = UsageTotals(**result["usage"])
            else:
                spent = _totals(worker.provider).since(before)
            elapsed = (time.perf_counter() - start) * 1000
            earlier = result.get("ms_answer", 0.0) if task.state == "answered" else 0.0
            total = round(earlier + elapsed, 3)
            # Noetic's own time on the problem: neither waiting on the model nor on the tests
            # (which run while the model reassesses the code and its answer is written)
            other = max(total - spent.latency_ms - waited - tests.launch_ms, 0.0)
            result.update(
                usage=spent.model_dump(exclude={"cost_usd"}),
                ms_test=verdict.ms,
                ms_total=total,
                ms_model=spent.latency_ms,
                ms_other=round(other, 3),
                ms_added=round(min(other, _added(total, spent.latency_ms, tests, reassessing)), 3),
            )
            ctx.emit(EventKind.PHASE_COMPLETED, PhaseCompleted(phase="TEST", ms=verdict.ms))
            self.update(
                task, state="done", passed=verdict.passed, reason=verdict.reason, result=result
            )
        if self.refitter is not None:
            self.refit(self.refitter)
        return self.result(task)

    def refit(self, refitter: concurrent.futures.Executor) -> None:
        """Refit the agent's map on the outcomes as they now are, on the refits' thread: the
        outcome just written is the last thing this problem did, and the next decision (the
        next PREFLIGHT, once the model has answered it) waits for the map and keeps it in its
        own write. The thread writes nothing: a write from its connection would have the
        run's own read every page it uses again."""
        loop = asyncio.get_running_loop()
        record = self.record
        points = points_of(self.ctx.store).snapshot()  # read here, where the pages are warm
        self.refitting = loop.run_in_executor(
            refitter, fit_snapshot, points, record.ai_id, record.model
        )

    async def refitted(self) -> Refit | None:
        """The map the refits asked for so far fitted (the thread takes them in order), for the
        caller to keep; None when none is waiting, or when it failed: the decision then refits
        a map that has not seen the newest outcome itself, and says so if it cannot."""
        refitting = self.refitting
        if refitting is None:
            return None
        try:
            fresh: Refit | None = await asyncio.shield(refitting)
        except Exception:
            fresh = None
        if self.refitting is refitting:
            self.refitting = None
        return fresh

    async def answer(
        self, ctx: RunContext, task: EvalTaskRecord, problem: Problem, tests: _Span
    ) -> _Answered:
        """PREFLIGHT, the function, POSTFLIGHT, each model call written before the next; the
        tests start as soon as the function is read, before its call is written, and run while
        the model reassesses it (which never sees their verdict). The reassessment is left for
        the caller to write; ``tests`` is filled in as the tests start and end."""
        tracker = self.ctx.tracker
        text = task_text(problem)
        timer = time.perf_counter()
        pre = await assess_with_model(ctx.model, text, Phase.PREFLIGHT, self.profile)
        # the decision reads the map refitted on every outcome so far: the one decision of a
        # problem a refit can still be running for (the POSTFLIGHT's comes after it, and only
        # a problem's end starts a refit)
        fresh = await self.refitted()
        with _step(ctx):  # the map refitted, the task opened and the problem's state: one write
            if fresh is not None:  # kept before the decision reads it
                keep(self.ctx.store, fresh)
            opened = tracker.preflight(ctx.session_id or "", text, pre)
            ctx.start_task(opened.cascade.id)
            self.update(
                task, state="started", session_id=ctx.session_id, cascade_id=opened.cascade.id
            )
        act = time.perf_counter()
        request = Request.of(
            code_prompt(problem), system=SYSTEM, max_tokens=self.settings.max_tokens
        )
        reply = await ctx.model.complete(request)
        code = extract_code(reply.text, problem.entry_point)
        testing = asyncio.ensure_future(self.judge(problem, code, tests))
        reassessing = _Span()
        try:
            # the tests' first step starts their process; the writes that follow run beside it
            launching = time.perf_counter()
            await asyncio.sleep(0)
            tests.launch_ms = (time.perf_counter() - launching) * 1000
            with _step(ctx):  # the call and the ACT event: one write
                ctx.emit(
                    EventKind.PHASE_COMPLETED,
                    PhaseCompleted(phase="ACT", ms=round((time.perf_counter() - act) * 1000, 3)),
                )
            if code is not None:
                findings = f"The function you wrote:\n```python\n{code.rstrip()}\n```"
            else:
                findings = f"Your reply, which had no Python code block:\n{reply.text[:3000]}"
            said = _totals(ctx.model).latency_ms
            reassessing.start = time.perf_counter()
            post: Assessment = await assess_with_model(
                ctx.model, text, Phase.POSTFLIGHT, self.profile, pre, findings=findings,
                review=task.review,
            )  # fmt: skip
            reassessing.end = time.perf_counter()
            reassessing.model_ms = _totals(ctx.model).latency_ms - said
        except BaseException:
            testing.cancel()  # the caller never waits for it: nothing left running
            with contextlib.suppress(BaseException):
                await testing
            raise
        return _Answered(opened.cascade.id, code, pre, post, timer, testing, reassessing)

    def reassessed(
        self,
        ctx: RunContext,
        task: EvalTaskRecord,
        problem: Problem,
        answered: _Answered,
        before: UsageTotals,
    ) -> dict[str, Any]:
        """Write the POSTFLIGHT (closing the task) and the problem's state ``answered`` (in the
        step's transaction); what is kept of the answer."""
        self.ctx.tracker.postflight(
            ctx.session_id or "", answered.post,
            extra={"eval": {"run": task.run_id, "task_id": problem.task_id}},
        )  # fmt: skip
        kept = {
            "p_preflight": answered.pre.p_success,
            "p_postflight": answered.post.p_success,
            "ms_answer": round((time.perf_counter() - answered.timer) * 1000, 3),
            "usage": _totals(ctx.model).since(before).model_dump(exclude={"cost_usd"}),
        }
        self.update(task, state="answered", code=answered.code, result=kept)
        return kept

    async def judge(self, problem: Problem, code: str | None, span: _Span) -> Verdict:
        """The tests' verdict on ``code``; ``span`` says when they started and ended."""
        span.start = time.perf_counter()
        try:
            if code is None:
                return Verdict(False, "the reply had no Python code block", 0.0, None)
            source = program(problem.prompt, code, problem.test, problem.entry_point)
            return await run_tests(
                source,
                self.sandbox,
                timeout_s=self.settings.test_timeout_s,
                memory_mb=self.settings.test_memory_mb,
            )
        finally:
            span.end = time.perf_counter()

    def update(self, task: EvalTaskRecord, **fields: Any) -> None:
        """Write the problem's new state (in the step's transaction) and keep what was written,
        for :meth:`result`."""
        evals.update_task(self.ctx.store, task.run_id, task.seq, **fields)
        self.written.setdefault(task.seq, {}).update(fields)

    def result(self, task: EvalTaskRecord) -> TaskResult:
        """The problem as it now stands: as read at the start, with what this run wrote."""
        result = task_result(task.model_copy(update=self.written.pop(task.seq, {})))
        if result.state == "error":
            self.counts["error"] += 1
        elif result.state == "done":
            self.counts["done"] += 1
            self.counts["passed"] += int(bool(result.passed))
        return result


def _totals(provider: Any) -> UsageTotals:
    """What the provider's calls so far have used and taken (nothing, for one that keeps no
    count)."""
    totals: UsageTotals = getattr(provider, "totals", UsageTotals())
    return totals


def _added(total: float, model_ms: float, tests: _Span, reassessing: _Span) -> float:
    """The part of a problem's ``total`` ms during which neither a model call nor its tests
    were under way: what Noetic's own work added to the problem's time. The reassessment's call
    overlaps the tests; of that overlap, only what the model's own time must have filled is
    taken as shared (the rest of the call, the request built and the reply read, may be what
    overlapped)."""
    ran = (tests.end - tests.start) * 1000 if tests.end else 0.0
    call = (reassessing.end - reassessing.start) * 1000
    shared = max(0.0, tests.overlap_ms(reassessing) - (call - reassessing.model_ms))
    return max(0.0, total - model_ms - ran + shared)


def task_result(task: EvalTaskRecord) -> TaskResult:
    r = task.result
    return TaskResult(
        run_id=task.run_id, seq=task.seq, task_id=task.task_id, state=task.state,
        passed=task.passed, reason=task.reason, review=task.review, session_id=task.session_id,
        cascade_id=task.cascade_id, p_preflight=r.get("p_preflight"),
        p_postflight=r.get("p_postflight"), ms_total=r.get("ms_total"),
        ms_model=r.get("ms_model"), ms_test=r.get("ms_test"), ms_other=r.get("ms_other"),
        ms_added=r.get("ms_added"),
        usage=UsageTotals(**r["usage"]) if "usage" in r else None,
    )  # fmt: skip


def stored_run(store: Any, run_id: str) -> EvalRun:
    """A run read back from the store: its status, every problem and the totals."""
    record = evals.get_run(store, run_id)
    tasks = [task_result(t) for t in evals.tasks(store, record.id)]
    done = [t for t in tasks if t.state == "done"]
    passed = sum(1 for t in done if t.passed)
    usage = UsageTotals()
    for t in tasks:
        if t.usage is not None:
            usage = usage.plus(t.usage)
    return EvalRun(
        run_id=record.id,
        task_set=record.task_set,
        model=record.model,
        ai_id=record.ai_id,
        profile=record.profile,
        status=record.status,
        detail=record.detail,
        total=len(tasks),
        done=len(done),
        passed=passed,
        failed=len(done) - passed,
        errors=sum(1 for t in tasks if t.state == "error"),
        pending=sum(1 for t in tasks if t.state not in ("done", "error")),
        success_rate=round(passed / len(done), 6) if done else None,
        usage=usage,
        tasks=tasks,
    )


@contextlib.contextmanager
def _step(ctx: RunContext) -> Iterator[None]:
    """One step's write: the model calls made since the last one (the worker's provider holds
    them), each row with its event, then the step's own rows and events, in one transaction
    where the backend joins them. A step that fails still leaves its calls recorded."""
    provider = ctx.provider
    held = provider.take() if isinstance(provider, ResilientProvider) else []
    joined = False
    try:
        with ctx.store.unit():
            if held:
                assert isinstance(provider, ResilientProvider)
                joined = ctx.store.writing()  # else written (and kept) on their own
                provider.write(held)
            yield
    except BaseException:
        if joined:  # rolled back with the step: written again, on their own
            assert isinstance(provider, ResilientProvider)
            with contextlib.suppress(NoeticError):
                provider.write(held)
        raise


def _abandon(ctx: RunContext, task: EvalTaskRecord) -> None:
    """A problem a killed run had started: close its task, if still open, as abandoned."""
    if task.cascade_id is None:
        return
    with contextlib.suppress(NoeticError):
        cascade = ctx.store.get_cascade(task.cascade_id)
        if cascade.status == "open":
            ctx.store.finish_cascade(cascade.id, "abandoned", {"eval": {"resumed": True}})


def _close(ctx: RunContext, status: str, reason: str) -> None:
    """Close the worker's open task (if any) with ``status``, keeping what was recorded."""
    if ctx.task_id is None or ctx.session_id is None:
        return
    with contextlib.suppress(NoeticError):
        ctx.tracker.end_task(ctx.session_id, status, {"eval": {"reason": reason}})


def _test_outcome(ctx: RunContext, cascade_id: str) -> float | None:
    """The task's test outcome if one was recorded already (a run killed just after it)."""
    return evals.recorded_test_score(ctx.store, cascade_id)


def _refuse_if_running(record: EvalRunRecord) -> None:
    """A run still going in another live process on this machine is not run twice at once."""
    process = record.settings.get("process") or {}
    pid = process.get("pid")
    if record.status != "running" or process.get("host") != socket.gethostname():
        return
    if not isinstance(pid, int) or pid == os.getpid():
        return
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return  # killed: resume it
    except PermissionError:
        pass  # alive, someone else's
    raise WorkflowError(
        f"eval run {record.id} is running in process {pid} on this machine",
        fix=f"wait for it, or stop it (kill {pid}) and then `noetic eval resume {record.id}`",
    )


def check_review(review: str) -> str:
    """A review choice, or a clear error naming the ones there are."""
    choice = review.strip().lower()
    if choice not in REVIEWS:
        raise UsageError(f"unknown review {review!r}", fix=f"use one of {', '.join(REVIEWS)}")
    return choice
