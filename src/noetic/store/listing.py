"""The sessions and tasks lists' reads: one page of ids (filters, search and the sort in SQL,
the count one ``COUNT``), then the figures of those ids only, so a page costs the same on
page 1 and page 200 of a store of tens of thousands of sessions; and one session's view.

A :class:`ListQuery` holds the filters as plain values (checked by the operation that built
it); the statements are the store's, written once for SQLite and PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from noetic.frozen import Frozen

if TYPE_CHECKING:
    from noetic.store.base import BaseStore
    from noetic.store.records import SessionRecord

Outcome = Literal["success", "failure", "none"]


@dataclass(frozen=True)
class ListQuery:
    """One page of a list: the filters (None: not filtered), the page's size and offset."""

    agent: str | None = None
    profile: str | None = None
    project: str | None = None
    engine: str | None = None
    status: str | None = None
    outcome: Outcome | None = None
    since: date | None = None
    until: date | None = None
    q: str | None = None
    limit: int = 50
    offset: int = 0


class RowHead(Frozen):
    """What a session's or a task's row says first: its id, the agent (and model) that worked
    in it, its profile, its session's project, its status and when it was opened."""

    id: str
    agent: str
    model: str | None
    profile: str
    project: str | None
    status: str
    created_at: str


class SessionFigures(RowHead):
    """One row of the sessions list."""

    tasks: int
    latest_task: str | None
    latest_task_id: str | None
    confidence: float | None  # the latest assessment's
    outcome: float | None  # the mean of the session's outcomes
    engines: list[str]


class TaskFigures(RowHead):
    """One row of the tasks list."""

    task: str
    session_id: str
    ended_at: str | None
    assessments: int
    confidence: float | None  # the latest assessment's
    outcome: float | None  # the mean of the task's outcomes
    engines: list[str]


def _marks(values: list[Any]) -> str:
    return ",".join("?" * len(values))


def _created_between(parts: list[str], args: list[Any], column: str, f: ListQuery) -> None:
    """The day range on ``column`` (``until`` takes in its whole day)."""
    if f.since is not None:
        parts.append(f"{column} >= ?")
        args.append(f.since.isoformat())
    if f.until is not None and f.until < date.max:  # the last day there is: no bound
        parts.append(f"{column} < ?")
        args.append((f.until + timedelta(days=1)).isoformat())


def like_pattern(q: str) -> str:
    """``q`` as a LIKE pattern matching it anywhere, its ``%``, ``_`` and ``\\`` literal
    (with ``ESCAPE '\\'``)."""
    return "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _conditions(
    f: ListQuery,
    equal: dict[str, str | None],
    engine: str,
    no_outcome: str,
    outcome: str,
    created: str,
    search: str,
) -> tuple[str, list[Any]]:
    """A list's WHERE clause and its arguments: the ``equal`` columns compared with their
    filters, the ``engine`` clause (one argument), ``no_outcome`` or ``outcome`` (its ``{op}``
    the side of 0.5 a success or a failure is on), the day range on ``created``, and the
    ``search`` clause (five patterns of ``q``)."""
    parts = [f"{column} = ?" for column, value in equal.items() if value is not None]
    args: list[Any] = [value for value in equal.values() if value is not None]
    if f.engine is not None:
        parts.append(engine)
        args.append(f.engine)
    if f.outcome == "none":
        parts.append(no_outcome)
    elif f.outcome is not None:
        parts.append(outcome.format(op=">=" if f.outcome == "success" else "<"))
    _created_between(parts, args, created, f)
    if f.q:
        parts.append(search)
        args += [like_pattern(f.q)] * 5
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def _page(
    store: BaseStore, rows: str, alias: str, where: str, args: list[Any], f: ListQuery
) -> tuple[int, list[str]]:
    """How many of ``rows`` (a FROM clause naming them ``alias``) match, and the ids of the
    page's, newest first."""
    conn = store.conn
    total = int(conn.execute(f"SELECT COUNT(*) {rows}{where}", args).fetchone()[0])
    # the sort carries only (created_at, id); the page's rows are read by id afterwards
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT {alias}.id {rows}{where} ORDER BY {alias}.created_at DESC, {alias}.id DESC "
            f"LIMIT ? OFFSET ?",
            [*args, f.limit, f.offset],
        )
    ]
    return total, ids


def _latest_confidence(store: BaseStore, key: str, ids: list[str]) -> dict[str, float]:
    """The latest assessment's confidence of each of ``ids`` (a ``key`` of assessments) that
    has one."""
    return {
        r[key]: r["confidence"]
        for r in store.conn.execute(
            f"SELECT a.{key}, a.confidence FROM assessments a JOIN ("
            f"SELECT {key}, MAX(seq) seq FROM assessments WHERE {key} IN ({_marks(ids)}) "
            f"GROUP BY {key}) m ON a.{key} = m.{key} AND a.seq = m.seq",
            ids,
        )
    }


def _per(store: BaseStore, what: str, table: str, key: str, ids: list[str]) -> dict[str, Any]:
    """``what`` (an aggregate) of the rows of ``table`` per ``key``, for the ``key``s in
    ``ids`` that have rows."""
    sql = f"SELECT {key}, {what} FROM {table} WHERE {key} IN ({_marks(ids)}) GROUP BY {key}"
    return dict(store.conn.execute(sql, ids).fetchall())


def _engines(store: BaseStore, key: str, where: str, args: list[str]) -> dict[str, list[str]]:
    """The engines that wrote the events matching ``where``, sorted, per ``key``."""
    engines: dict[str, list[str]] = {}
    for r in store.conn.execute(
        f"SELECT DISTINCT {key}, engine FROM events WHERE {where} AND engine IS NOT NULL "
        "ORDER BY engine",
        args,
    ):
        engines.setdefault(r[key], []).append(r["engine"])
    return engines


# sessions ------------------------------------------------------------------------------------


def _session_conditions(f: ListQuery) -> tuple[str, list[Any]]:
    # outcomes has no index on session_id: one pass builds the set (an IN list), where a
    # correlated EXISTS would scan every outcome once per session
    return _conditions(
        f,
        {"s.ai_id": f.agent, "s.profile": f.profile, "s.project": f.project, "s.status": f.status},
        "EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id AND e.engine = ?)",
        "s.id NOT IN (SELECT session_id FROM outcomes)",
        "s.id IN (SELECT session_id FROM outcomes WHERE score {op} 0.5)",
        "s.created_at",
        "(s.id LIKE ? ESCAPE '\\' OR s.ai_id LIKE ? ESCAPE '\\' OR s.project LIKE ? ESCAPE '\\'"
        " OR EXISTS (SELECT 1 FROM cascades c WHERE c.session_id = s.id"
        " AND (c.task LIKE ? ESCAPE '\\' OR c.id LIKE ? ESCAPE '\\')))",
    )


def session_page(store: BaseStore, f: ListQuery) -> tuple[int, list[SessionFigures]]:
    """How many sessions match, and the page's, newest first."""
    total, ids = _page(store, "FROM sessions s", "s", *_session_conditions(f), f)
    return total, _session_figures(store, ids)


def _session_figures(store: BaseStore, ids: list[str]) -> list[SessionFigures]:
    if not ids:  # an empty page reads nothing more (PostgreSQL refuses "IN ()")
        return []
    marks = _marks(ids)
    conn = store.conn
    by_id = {r["id"]: r for r in conn.execute(f"SELECT * FROM sessions WHERE id IN ({marks})", ids)}
    tasks: dict[str, tuple[int, str | None]] = {}
    for r in conn.execute(
        "SELECT s.id, (SELECT COUNT(*) FROM cascades c WHERE c.session_id = s.id) n, "
        "(SELECT c.id FROM cascades c WHERE c.session_id = s.id "
        "ORDER BY c.created_at DESC, c.id DESC LIMIT 1) latest "
        f"FROM sessions s WHERE s.id IN ({marks})",
        ids,
    ):
        tasks[r["id"]] = (r["n"], r["latest"])
    latest = [cid for _, cid in tasks.values() if cid is not None]
    sql = f"SELECT id, task FROM cascades WHERE id IN ({_marks(latest)})"
    named = dict(conn.execute(sql, latest).fetchall()) if latest else {}
    confidence = _latest_confidence(store, "session_id", ids)
    outcome = _per(store, "AVG(score)", "outcomes", "session_id", ids)
    engines = _engines(store, "session_id", f"session_id IN ({marks})", ids)
    out = []
    for i in ids:
        r = by_id[i]
        n, cid = tasks.get(i, (0, None))
        out.append(SessionFigures(
            id=i, agent=r["ai_id"], model=r["ai_model"], profile=r["profile"],
            project=r["project"], status=r["status"], created_at=r["created_at"], tasks=n,
            latest_task=named.get(cid or ""), latest_task_id=cid, confidence=confidence.get(i),
            outcome=outcome.get(i), engines=engines.get(i, []),
        ))  # fmt: skip
    return out


def task_counts(store: BaseStore, session_ids: list[str]) -> dict[str, int]:
    """How many tasks each session has (0 for none), in one query."""
    if not session_ids:  # PostgreSQL refuses "IN ()"
        return {}
    found = _per(store, "COUNT(*)", "cascades", "session_id", session_ids)
    return {**dict.fromkeys(session_ids, 0), **{sid: int(n) for sid, n in found.items()}}


def find_session(store: BaseStore, session_id: str) -> SessionRecord | None:
    """The session whose id is exactly ``session_id``, if there is one."""
    from noetic.store.records import SessionRecord

    row = store.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else SessionRecord(**dict(row))


class SessionTasks(NamedTuple):
    """A session's confidence path per task (oldest first), mean outcome per task, and how
    many events it has."""

    paths: dict[str, list[float]]
    outcomes: dict[str, float]
    events: int


def session_tasks(store: BaseStore, session_id: str) -> SessionTasks:
    conn = store.conn
    paths: dict[str, list[float]] = {}
    for a in conn.execute(
        "SELECT cascade_id, confidence FROM assessments WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ):
        paths.setdefault(a["cascade_id"], []).append(a["confidence"])
    outcomes = dict(
        conn.execute(
            "SELECT cascade_id, AVG(score) FROM outcomes WHERE session_id = ? GROUP BY cascade_id",
            (session_id,),
        ).fetchall()
    )
    events = conn.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (session_id,))
    return SessionTasks(paths, outcomes, int(events.fetchone()[0]))


# tasks ---------------------------------------------------------------------------------------


def _task_conditions(f: ListQuery) -> tuple[str, list[Any]]:
    return _conditions(
        f,
        {"s.ai_id": f.agent, "c.profile": f.profile, "s.project": f.project, "c.status": f.status},
        # events are indexed by session: the task's session narrows them before its id does
        "EXISTS (SELECT 1 FROM events e WHERE e.session_id = c.session_id"
        " AND e.cascade_id = c.id AND e.engine = ?)",
        "c.id NOT IN (SELECT cascade_id FROM outcomes WHERE cascade_id IS NOT NULL)",
        "c.id IN (SELECT cascade_id FROM outcomes WHERE score {op} 0.5)",
        "c.created_at",
        "(c.task LIKE ? ESCAPE '\\' OR c.id LIKE ? ESCAPE '\\' OR s.id LIKE ? ESCAPE '\\'"
        " OR s.ai_id LIKE ? ESCAPE '\\' OR s.project LIKE ? ESCAPE '\\')",
    )


def task_page(store: BaseStore, f: ListQuery) -> tuple[int, list[TaskFigures]]:
    """How many tasks match, and the page's, newest first."""
    # every task has its session (a foreign key): the join is made only for a session's filter,
    # so an unfiltered page walks the tasks' index alone
    by_session = any(v is not None for v in (f.agent, f.project, f.q))
    joined = "FROM cascades c" + (" JOIN sessions s ON s.id = c.session_id" if by_session else "")
    total, ids = _page(store, joined, "c", *_task_conditions(f), f)
    return total, _task_figures(store, ids)


def task_statuses(store: BaseStore) -> list[str]:
    """The statuses the tasks have now."""
    return [r[0] for r in store.conn.execute("SELECT DISTINCT status FROM cascades")]


def _task_figures(store: BaseStore, ids: list[str]) -> list[TaskFigures]:
    if not ids:
        return []
    marks = _marks(ids)
    conn = store.conn
    by_id = {
        r["id"]: r
        for r in conn.execute(
            "SELECT c.id, c.task, c.session_id, c.profile, c.status, c.created_at, c.ended_at, "
            "s.ai_id, s.ai_model, s.project "
            f"FROM cascades c JOIN sessions s ON s.id = c.session_id WHERE c.id IN ({marks})",
            ids,
        )
    }
    counts = _per(store, "COUNT(*)", "assessments", "cascade_id", ids)
    confidence = _latest_confidence(store, "cascade_id", ids)
    outcome = _per(store, "AVG(score)", "outcomes", "cascade_id", ids)
    sessions = sorted({r["session_id"] for r in by_id.values()})
    within = f"session_id IN ({_marks(sessions)}) AND cascade_id IN ({marks})"
    engines = _engines(store, "cascade_id", within, [*sessions, *ids])
    out = []
    for i in ids:
        r = by_id[i]
        out.append(TaskFigures(
            id=i, task=r["task"], session_id=r["session_id"], agent=r["ai_id"],
            model=r["ai_model"], profile=r["profile"], project=r["project"], status=r["status"],
            created_at=r["created_at"], ended_at=r["ended_at"], assessments=counts.get(i, 0),
            confidence=confidence.get(i), outcome=outcome.get(i), engines=engines.get(i, []),
        ))  # fmt: skip
    return out


# a session's totals --------------------------------------------------------------------------


def session_turns(
    store: BaseStore, session_ids: list[str]
) -> tuple[dict[str, int], dict[str, tuple[int, float | None]]]:
    """Each session's task count (0 for none), and its assessments' count and mean confidence
    (rounded to 4 places; absent for a session without any)."""
    if not session_ids:  # PostgreSQL refuses "IN ()"
        return {}, {}
    turns: dict[str, tuple[int, float | None]] = {}
    for sid, n, mean in store.conn.execute(
        f"SELECT session_id, COUNT(*), AVG(confidence) FROM assessments "
        f"WHERE session_id IN ({_marks(session_ids)}) GROUP BY session_id",
        session_ids,
    ):
        turns[sid] = (int(n), None if mean is None else round(float(mean), 4))
    return task_counts(store, session_ids), turns


def session_agents(store: BaseStore, session_ids: list[str]) -> set[str]:
    """The agents of the given sessions."""
    if not session_ids:
        return set()
    sql = f"SELECT DISTINCT ai_id FROM sessions WHERE id IN ({_marks(session_ids)})"
    return {ai for (ai,) in store.conn.execute(sql, session_ids)}


def has_outcomes(store: BaseStore) -> bool:
    return store.conn.execute("SELECT 1 FROM outcomes LIMIT 1").fetchone() is not None


def sessions_of_tasks(store: BaseStore, task_ids: set[str], session_ids: list[str]) -> set[str]:
    """Which of ``session_ids`` hold one of ``task_ids``."""
    if not task_ids or not session_ids:
        return set()
    rows = store.conn.execute(
        f"SELECT DISTINCT session_id FROM cascades WHERE id IN ({_marks(list(task_ids))}) "
        f"AND session_id IN ({_marks(session_ids)})",
        [*task_ids, *session_ids],
    )
    return {sid for (sid,) in rows}
