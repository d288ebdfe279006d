"""Sentinel: the universal constraints every run obeys, whatever the profile says.

* engagement gate (0.60) and coherence minimum (0.50): enforced by the action rule
  (:func:`noetic.assessment.decide`); the Sentinel records each time they fire;
* a wall-clock timeout per run;
* a limit on tool calls per run.

Every enforcement is a ``constraint_enforced`` event naming the rule, the value that tripped it
and the limit. Timeout and tool limit stop the run with :class:`SentinelStop`, which the engine
turns into a run status, never a traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NoReturn

from pydantic import Field

from noetic.assessment import COHERENCE_MINIMUM, ENGAGEMENT_GATE, Decision
from noetic.events import ConstraintEnforced, EventKind
from noetic.frozen import Frozen

Emit = Callable[..., object]


class SentinelLimits(Frozen):
    timeout_s: float = Field(900.0, gt=0)
    max_tool_calls: int = Field(30, ge=0)


class SentinelStop(Exception):
    def __init__(self, rule: str, value: float, limit: float) -> None:
        super().__init__(f"{rule}: {value:g} exceeds {limit:g}")
        self.rule = rule
        self.value = value
        self.limit = limit


class Sentinel:
    """The universal constraints of one run. ``emit(kind, data)`` is the run context's, so
    each enforcement is stamped with the run's engine, session and task."""

    def __init__(
        self,
        limits: SentinelLimits,
        emit: Emit,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self.emit = emit
        self.clock = clock
        self.started = clock()
        self.tool_calls = 0

    def _enforce(self, rule: str, value: float, limit: float) -> None:
        self.emit(
            EventKind.CONSTRAINT_ENFORCED,
            ConstraintEnforced(rule=rule, value=round(value, 6), limit=limit),
        )

    def remaining(self) -> float:
        """Seconds left; stops the run when none are."""
        left = self.limits.timeout_s - (self.clock() - self.started)
        if left <= 0:
            self.timed_out()
        return left

    def timed_out(self) -> NoReturn:
        elapsed = self.clock() - self.started
        self._enforce("timeout", elapsed, self.limits.timeout_s)
        raise SentinelStop("timeout", elapsed, self.limits.timeout_s)

    def tool_call(self) -> None:
        """Count one tool call; stops the run beyond the limit."""
        self.tool_calls += 1
        if self.tool_calls > self.limits.max_tool_calls:
            self._enforce("tool_limit", self.tool_calls, self.limits.max_tool_calls)
            raise SentinelStop("tool_limit", self.tool_calls, self.limits.max_tool_calls)

    def observe(self, decision: Decision, vectors: dict[str, float]) -> None:
        """Record the universal gates when the action rule enforced them."""
        if decision.rule == "engagement_gate":
            self._enforce("engagement_gate", vectors["engagement"], ENGAGEMENT_GATE)
        elif decision.rule == "coherence_minimum":
            self._enforce("coherence_minimum", vectors["coherence"], COHERENCE_MINIMUM)
