"""A store with something on every page, written the way Noetic writes it: the tracker for the
workflow (sessions, assessments, decisions, investigations), the event bus for engine events,
``record_outcome`` for outcomes and the ``llm_calls`` table for a model call."""

from __future__ import annotations

import random
from pathlib import Path

from noetic.assessment import Assessment
from noetic.calibration.learning import record_outcome
from noetic.events import EventKind
from noetic.llm.base import LLMCall
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import open_store
from noetic.store.llm_calls import record_llm_call
from noetic.vectors import VECTOR_NAMES


def vectors(value: float, **overrides: float) -> dict[str, float]:
    v = {name: value for name in VECTOR_NAMES}
    v["density"] = round(1 - value, 6)
    v["uncertainty"] = round(1 - value, 6)
    v.update(overrides)
    return v


def assessment(phase: str, value: float, **overrides: float) -> Assessment:
    return Assessment(
        phase=phase,
        vectors=vectors(value, **overrides),
        rationales={"know": "read the module"},
        evidence={"know": "src/noetic/vectors.py"},
    )


class Seeded:
    """Ids of what :func:`seed` wrote, for the tests to visit."""

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.tasks: list[str] = []
        self.full_task = ""
        self.engine_task = ""


def seed(home: Path, *, scored: int = 30) -> Seeded:
    """Fill the store at ``home`` (SQLite, or the PostgreSQL its ``config.toml`` names)."""
    out = Seeded()
    rng = random.Random(7)
    with open_store(home, create=True) as store:
        tracker = Tracker(store, ProfileRegistry(store.home / "profiles"), checkpoints=False)
        session, _ = tracker.bootstrap(
            ai_id="claude", ai_model="claude-sonnet-4-5", project="noetic"
        )
        out.sessions.append(session.id)
        pre = tracker.preflight(
            session.id, "Fix the flaky login test", assessment("preflight", 0.72, know=0.6)
        )
        tracker.investigate(
            session.id,
            "read the test and the fixture",
            tool="read_file",
            target_vector="know",
            success=True,
        )
        tracker.check(session.id, assessment("check", 0.84, know=0.85))
        tracker.postflight(session.id, assessment("postflight", 0.93, density=0.4))
        out.full_task = pre.cascade.id
        record_outcome(store, pre.cascade.id, score=1.0, source="test", evidence="12 passed")
        record_llm_call(
            store,
            LLMCall(
                provider="anthropic",
                model="claude-sonnet-4-5",
                attempt=1,
                outcome="ok",
                tokens_in=1200,
                tokens_out=340,
                latency_ms=812.5,
                session_id=session.id,
                cascade_id=pre.cascade.id,
                cost_usd=0.0087,
                engine="cascade",
            ),
        )
        for engine in ("cascade",):
            bus = tracker.bus
            sid, cid = session.id, pre.cascade.id
            bus.emit(
                EventKind.PHASE_ENTERED,
                data={"phase": "THINK"},
                engine=engine,
                session_id=sid,
                cascade_id=cid,
            )
            bus.emit(
                EventKind.PHASE_COMPLETED,
                data={"phase": "THINK", "ms": 12.5},
                engine=engine,
                session_id=sid,
                cascade_id=cid,
            )
            bus.emit(
                EventKind.TOOL_CALL,
                data={"tool": "read_file", "success": False, "error": "no such file"},
                engine=engine,
                session_id=sid,
                cascade_id=cid,
            )
            bus.emit(
                EventKind.CONSTRAINT_ENFORCED,
                data={"rule": "max_tool_calls", "value": 31, "limit": 30},
                engine=engine,
                session_id=sid,
                cascade_id=cid,
            )
            bus.emit(
                EventKind.DECISION,
                data={
                    "action": "escalate",
                    "reason": "the CAE found a critical risk",
                    "rule": "cae_severity",
                },
                engine="nova",
                session_id=sid,
                cascade_id=cid,
            )
        out.engine_task = pre.cascade.id
        out.tasks.append(pre.cascade.id)
        for i in range(scored):
            agent = "claude" if i % 2 else "gpt"
            s, _ = tracker.bootstrap(
                ai_id=agent, ai_model=f"{agent}-model", project="noetic" if i % 3 else "other"
            )
            stated = 0.55 + 0.4 * rng.random()
            r = tracker.preflight(s.id, f"task number {i}", assessment("preflight", stated))
            success = 1.0 if rng.random() < stated - (0.2 if agent == "gpt" else 0.0) else 0.0
            if agent == "claude":  # a POSTFLIGHT review, standard and adversarial in turn
                review = "standard" if i % 4 == 1 else "adversarial"
                post = Assessment(
                    phase="postflight",
                    vectors=vectors(stated),
                    p_success=0.9 if review == "standard" else 0.6,
                    review=review,
                )
                tracker.postflight(s.id, post)
            record_outcome(store, r.cascade.id, score=success, source="test")
            out.sessions.append(s.id)
            out.tasks.append(r.cascade.id)
    return out
