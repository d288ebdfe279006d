"""The outcomes, profile adjustments and the rows calibration scores them against.

Rows are plain dicts of a table's columns, their JSON columns still encoded
(:mod:`noetic.calibration.outcomes` turns them into its records); the statements are the
store's, written once for SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Collection

from noetic.named import NamedTuple
from noetic.store.rows import now, where

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from noetic.store.base import BaseStore

# what calibration reads of an outcome
PREDICTION_COLUMNS: Final = (
    "id, at, cascade_id, source, score, predicted_preflight, predicted_check, predicted_vectors"
)


def insert_outcome(store: BaseStore, row: dict[str, Any]) -> dict[str, Any]:
    """Store an outcome; returns it as stored (its id filled in)."""
    with store.transaction() as conn:
        return dict(store.insert_returning(conn, "outcomes", row))


def _filtered(
    ai_id: str | None,
    profile: str | None,
    domain: str | None,
    since: str | None = None,
    tasks: Collection[str] | None = None,
) -> tuple[str, list[Any]]:
    more = [] if since is None else [("at >= ?", [since])]
    if tasks is not None:
        more.append((_among(tasks), list(tasks)))
    return where(*more, ai_id=ai_id, profile=profile, domain=domain)


def _among(tasks: Collection[str] | None, column: str = "cascade_id") -> str:
    """The rows of ``tasks`` (None: of every task that has an outcome)."""
    if tasks is None:
        return f"{column} IN (SELECT cascade_id FROM outcomes)"
    return f"{column} IN ({', '.join('?' * len(tasks))})" if tasks else "1 = 0"


def outcomes(
    store: BaseStore,
    *,
    ai_id: str | None = None,
    profile: str | None = None,
    domain: str | None = None,
    since: str | None = None,
    tasks: Collection[str] | None = None,
    columns: str = "*",
) -> list[dict[str, Any]]:
    """Every outcome matching the filters (None: any), oldest first: its ``columns`` (all, or
    :data:`PREDICTION_COLUMNS`)."""
    where, args = _filtered(ai_id, profile, domain, since, tasks)
    rows = store.conn.execute(f"SELECT {columns} FROM outcomes{where} ORDER BY at, id", args)
    return [dict(r) for r in rows]


def count_outcomes(
    store: BaseStore,
    *,
    ai_id: str | None = None,
    profile: str | None = None,
    domain: str | None = None,
) -> int:
    where, args = _filtered(ai_id, profile, domain)
    return int(store.conn.execute(f"SELECT COUNT(*) FROM outcomes{where}", args).fetchone()[0])


def insert_adjustment(store: BaseStore, row: dict[str, Any]) -> int:
    """Store a profile adjustment; returns its id."""
    with store.transaction() as conn:
        adjustment_id = store.insert(conn, "profile_adjustments", row)
    assert adjustment_id is not None  # the table has an integer id
    return adjustment_id


def undo_adjustment(store: BaseStore, adjustment_id: int) -> bool:
    """Mark the adjustment undone now; False when it is unknown or already undone."""
    sql = "UPDATE profile_adjustments SET undone_at = ? WHERE id = ? AND undone_at IS NULL"
    return bool(store.write(sql, (now(), adjustment_id)))


def adjustments(
    store: BaseStore, *, profile: str | None = None, adjustment_id: int | None = None
) -> list[dict[str, Any]]:
    """The adjustments of ``profile`` (or the one ``adjustment_id``), oldest first."""
    cond, args = where(profile=profile, id=adjustment_id)
    sql = f"SELECT * FROM profile_adjustments{cond} ORDER BY id"
    return [dict(r) for r in store.conn.execute(sql, args)]


class Who(NamedTuple):
    profile: str
    ai_id: str
    ai_model: str | None


class Scored(NamedTuple):
    """What calibration needs of the tasks that have an outcome: who ran each, the first
    engine and model that worked on it, and its assessments (by task, in order)."""

    who: dict[str, Who]
    engines: dict[str, str]
    models: dict[str, str]
    assessments: list[dict[str, Any]]


def scored_tasks(store: BaseStore, tasks: Collection[str] | None = None) -> Scored:
    """:class:`Scored` for every task that has an outcome, or for ``tasks`` only."""
    conn, among, args = store.conn, _among(tasks), list(tasks or ())
    who = {
        r["id"]: Who(r["profile"], r["ai_id"], r["ai_model"])
        for r in conn.execute(
            "SELECT c.id, c.profile, s.ai_id, s.ai_model FROM cascades c "
            f"JOIN sessions s ON s.id = c.session_id WHERE {_among(tasks, 'c.id')}",
            args,
        )
    }
    engines = dict(
        conn.execute(
            "SELECT cascade_id, MIN(engine) FROM events WHERE engine IS NOT NULL "
            f"AND {among} GROUP BY cascade_id",
            args,
        ).fetchall()
    )
    models = dict(
        conn.execute(
            f"SELECT cascade_id, MIN(model) FROM llm_calls WHERE {among} GROUP BY cascade_id", args
        ).fetchall()
    )
    assessments = [
        dict(r)
        for r in conn.execute(
            "SELECT cascade_id, phase, confidence, p_success, review, created_at FROM assessments "
            f"WHERE {among} ORDER BY cascade_id, seq",
            args,
        )
    ]
    return Scored(who, engines, models, assessments)


def nova_turn_keys(store: BaseStore, tasks: Collection[str] | None = None) -> list[tuple[str, str]]:
    """``(task, turn key)`` of the Nova turns of every task with an outcome (or of ``tasks``),
    by turn."""
    rows = store.conn.execute(
        "SELECT r.cascade_id, t.key FROM nova_runs r JOIN nova_turns t ON t.run_id = r.id "
        f"WHERE {_among(tasks, 'r.cascade_id')} ORDER BY t.seq",
        list(tasks or ()),
    )
    return [(r[0], r[1]) for r in rows]


# recalibration maps ----------------------------------------------------------------------------


def keep_map(store: BaseStore, scope: str, stamp: tuple[int, int], body: str) -> None:
    """Keep the map of ``scope`` fitted on the outcomes ``stamp`` counts, replacing any."""
    store.write(
        "INSERT INTO calibration_maps (scope, outcomes, last_id, fitted_at, body) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET outcomes = "
        "excluded.outcomes, last_id = excluded.last_id, fitted_at = excluded.fitted_at, "
        "body = excluded.body",
        (scope, stamp[0], stamp[1], now(), body),
    )


class KeptMap(NamedTuple):
    outcomes: int
    last_id: int  # the newest outcome when it was fitted
    body: str  # JSON


def kept_map(store: BaseStore, scope: str) -> KeptMap | None:
    row = store.conn.execute(
        "SELECT outcomes, last_id, body FROM calibration_maps WHERE scope = ?", (scope,)
    ).fetchone()
    return None if row is None else KeptMap(int(row[0]), int(row[1]), str(row[2]))


def outcomes_from(store: BaseStore, first_id: int) -> list[tuple[int, str, str]]:
    """``(id, at, task)`` of the outcomes from ``first_id`` on, by id."""
    rows = store.conn.execute(
        "SELECT id, at, cascade_id FROM outcomes WHERE id >= ? ORDER BY id", (first_id,)
    )
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


class Stated(NamedTuple):
    """What one of a task's assessments predicted: its phase, the decision's confidence, the
    stated ``p_success`` and the vectors given (as the assessment's record holds them)."""

    phase: str
    confidence: float
    p_success: float | None
    vectors: dict[str, float]


def statements(store: BaseStore, cascade_id: str) -> list[Stated]:
    """A task's assessments, in order, as much of them as an outcome records beside it: read
    without building each assessment again."""
    from noetic.vector_names import VECTOR_NAMES

    columns = ", ".join(f'"{v}"' for v in VECTOR_NAMES)
    rows = store.conn.execute(
        f"SELECT phase, confidence, p_success, {columns} FROM assessments "
        "WHERE cascade_id = ? ORDER BY session_id, seq",
        (cascade_id,),
    )
    return [
        Stated(
            r["phase"],
            r["confidence"],
            r["p_success"],
            {v: r[v] for v in VECTOR_NAMES if r[v] is not None},
        )
        for r in rows
    ]
