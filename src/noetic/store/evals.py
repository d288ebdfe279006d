"""``noetic eval`` runs and their problems.

A run's row holds what was asked (the task set, the model, the profile, the settings) and how
it stands (``running``, ``completed``, ``failed``, ``interrupted``). Each problem has a row from
the start, with the problem itself (so a resume needs neither the task file nor the package
again) and its state (:data:`STATES`), written after every step in the step's own transaction
(where the backend joins transactions, :meth:`~noetic.store.base.BaseStore.unit`), so a resumed
run runs no finished step twice (``docs/eval.md``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from noetic.frozen import Frozen
from noetic.store import reads
from noetic.store.base import BaseStore
from noetic.store.rows import new_id, now, update_sql

STATES: Final = ("pending", "started", "answered", "done", "error")


class EvalRunRecord(Frozen):
    id: str
    task_set: str
    provider: str | None
    model: str | None
    ai_id: str
    profile: str | None
    status: str
    detail: str = ""
    settings: dict[str, Any]
    created_at: str
    ended_at: str | None = None


class EvalTaskRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    seq: int
    task_id: str
    problem: dict[str, Any]
    state: str
    review: str | None = None
    session_id: str | None = None
    cascade_id: str | None = None
    code: str | None = None
    passed: bool | None = None
    reason: str | None = None
    result: dict[str, Any] = {}
    updated_at: str


def create_run(
    store: BaseStore,
    *,
    task_set: str,
    provider: str | None,
    model: str | None,
    ai_id: str,
    profile: str | None,
    settings: dict[str, Any],
    problems: list[tuple[dict[str, Any], str | None]],
) -> EvalRunRecord:
    """A new run in ``running`` state with every problem ``pending`` (each with the review
    it is to get), in one transaction."""
    run_id = new_id("e")
    at = now()
    with store.transaction() as conn:
        store.insert(conn, "eval_runs", {
            "id": run_id, "task_set": task_set, "provider": provider, "model": model,
            "ai_id": ai_id, "profile": profile, "status": "running", "detail": "",
            "settings": json.dumps(settings), "created_at": at,
        })  # fmt: skip
        for seq, (problem, review) in enumerate(problems, 1):
            store.insert(conn, "eval_tasks", {
                "run_id": run_id, "seq": seq, "task_id": problem["task_id"],
                "problem": json.dumps(problem), "state": "pending", "review": review,
                "result": "{}", "updated_at": at,
            })  # fmt: skip
    return get_run(store, run_id)


def get_run(store: BaseStore, run_id: str) -> EvalRunRecord:
    """A run by id or unique id prefix."""
    return _run(reads.run_row(store, "eval_runs", run_id, "eval run", "noetic eval list"))


def runs(store: BaseStore) -> list[EvalRunRecord]:
    """Every eval run, oldest first."""
    return [_run(r) for r in store.conn.execute("SELECT * FROM eval_runs ORDER BY created_at, id")]


def update_run(store: BaseStore, run_id: str, **fields: Any) -> None:
    """Set ``status``, ``detail``, ``ended_at`` or ``settings``."""
    allowed = ("status", "detail", "ended_at", "settings")
    sql, values = update_sql("eval_runs", fields, allowed, ("settings",))
    store.write(sql + " WHERE id = ?", [*values, run_id])


def tasks(store: BaseStore, run_id: str) -> list[EvalTaskRecord]:
    """A run's problems in their order."""
    rows = store.conn.execute("SELECT * FROM eval_tasks WHERE run_id = ? ORDER BY seq", (run_id,))
    return [_task(r) for r in rows]


def update_task(store: BaseStore, run_id: str, seq: int, **fields: Any) -> None:
    """Move a problem on: ``state`` and whatever it learned (``session_id``, ``cascade_id``,
    ``code``, ``passed``, ``reason``, ``result``), in one transaction."""
    allowed = ("state", "session_id", "cascade_id", "code", "passed", "reason", "result")
    if fields.get("passed") is not None:
        fields["passed"] = int(bool(fields["passed"]))
    sql, values = update_sql("eval_tasks", fields, allowed, ("result",), updated_at=now())
    if "state" in fields and fields["state"] not in STATES:
        raise ValueError(f"unknown eval task state {fields['state']!r}")
    store.write(sql + " WHERE run_id = ? AND seq = ?", [*values, run_id, seq])


def _run(row: Any) -> EvalRunRecord:
    data = {k: row[k] for k in EvalRunRecord.model_fields}
    data["settings"] = json.loads(data["settings"])
    return EvalRunRecord(**data)


def _task(row: Any) -> EvalTaskRecord:
    data = {k: row[k] for k in EvalTaskRecord.model_fields}
    data["problem"] = json.loads(data["problem"])
    data["result"] = json.loads(data["result"] or "{}")
    return EvalTaskRecord(**data)  # passed: pydantic reads the stored 0 or 1 as a bool


def done_assessments(store: BaseStore, run_id: str) -> list[dict[str, Any]]:
    """The assessments of the run's problems that have a verdict, by task, in order."""
    rows = store.conn.execute(
        "SELECT a.cascade_id, a.phase, a.confidence, a.p_success, a.review, a.created_at "
        "FROM assessments a WHERE a.cascade_id IN "
        "(SELECT cascade_id FROM eval_tasks WHERE run_id = ? AND state = 'done') "
        "ORDER BY a.cascade_id, a.seq",
        (run_id,),
    ).fetchall()
    return [dict(r) for r in rows]


def recorded_test_score(store: BaseStore, cascade_id: str) -> float | None:
    """The task's newest test outcome, if one was recorded."""
    row = store.conn.execute(
        "SELECT score FROM outcomes WHERE cascade_id = ? AND source = 'test' ORDER BY id DESC",
        (cascade_id,),
    ).fetchone()
    return None if row is None else float(row[0])
