"""Small reads the interfaces and engines ask of any store: the values a filter can take, the
live cursor's high-water marks, whether a task exists, an agent's totals, the earlier tasks a
session's briefing lists, and the outcomes a recall's verdicts come from.

Every function takes an open store (SQLite or PostgreSQL) and returns plain values or typed
rows; the statements are the store's, written once for both backends.
"""

from __future__ import annotations

from noetic.errors import InvalidValueError, NotFoundError
from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final, Literal

    from noetic.store.base import BaseStore

    Table = Literal["sessions", "outcomes"]
    Column = Literal["ai_id", "profile", "project"]

_NEWEST_SUMMARY: Final = {
    "sqlite": "SELECT max(rowid) FROM session_summaries",
    "postgresql": "SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables "
    "WHERE relid = 'session_summaries'::regclass",
}


def distinct(store: BaseStore, table: Table, column: Column) -> list[str]:
    """The values ``column`` of ``table`` takes, sorted, without NULL."""
    sql = f"SELECT DISTINCT {column} FROM {table} ORDER BY 1"
    return [r[0] for r in store.conn.execute(sql) if r[0] is not None]


class Counts(NamedTuple):
    """The newest session's creation time and how many sessions there are."""

    newest: str | None
    sessions: int


def session_counts(store: BaseStore) -> Counts:
    newest, count = store.conn.execute("SELECT MAX(created_at), COUNT(*) FROM sessions").fetchone()
    return Counts(newest, int(count))


def high_water(store: BaseStore) -> tuple[int, int, int]:
    """The largest id of the events, outcomes and profile adjustments (0 for none)."""
    row = store.conn.execute(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM events), "
        "(SELECT COALESCE(MAX(id), 0) FROM outcomes), "
        "(SELECT COALESCE(MAX(id), 0) FROM profile_adjustments)"
    ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def event_kinds_after(store: BaseStore, after: int, limit: int) -> list[str]:
    """The distinct kinds of the first ``limit`` events after id ``after``, sorted."""
    rows = store.conn.execute(
        "SELECT DISTINCT kind FROM (SELECT kind FROM events WHERE id > ? ORDER BY id LIMIT ?) AS e",
        (after, limit),
    )
    return sorted(r[0] for r in rows)


def task_exists(store: BaseStore, task_id: str) -> bool:
    found = store.conn.execute("SELECT 1 FROM cascades WHERE id = ?", (task_id,)).fetchone()
    return found is not None


class AgentTotals(NamedTuple):
    sessions: int
    tasks: int
    confidences: list[float]  # its PREFLIGHT confidences, oldest first (at most 500)


def agent_totals(store: BaseStore, ai_id: str) -> AgentTotals:
    conn = store.conn
    sessions = conn.execute("SELECT COUNT(*) FROM sessions WHERE ai_id = ?", (ai_id,)).fetchone()[0]
    if not sessions:
        return AgentTotals(0, 0, [])
    tasks = conn.execute(
        "SELECT COUNT(*) FROM cascades c JOIN sessions s ON s.id = c.session_id WHERE s.ai_id = ?",
        (ai_id,),
    ).fetchone()[0]
    confidences = [
        r[0]
        for r in conn.execute(
            "SELECT a.confidence FROM assessments a JOIN sessions s ON s.id = a.session_id "
            "WHERE s.ai_id = ? AND a.phase = 'preflight' ORDER BY a.created_at, a.id LIMIT 500",
            (ai_id,),
        )
    ]
    return AgentTotals(int(sessions), int(tasks), confidences)


class EarlierTask(NamedTuple):
    task: str
    calibration: str
    confidence_pre: float
    confidence_post: float
    notes: str | None
    outcome: float | None  # the task's latest outcome


def earlier_tasks(store: BaseStore, project: str | None, limit: int) -> list[EarlierTask]:
    """The newest finished tasks of ``project`` (``None``: of no project), newest first."""
    rows = store.conn.execute(
        "SELECT s.task, s.calibration, s.confidence_pre, s.confidence_post, s.notes, "
        "(SELECT o.score FROM outcomes o WHERE o.cascade_id = s.cascade_id "
        " ORDER BY o.at DESC, o.id DESC LIMIT 1) AS outcome "
        "FROM session_summaries s WHERE s.project IS ? ORDER BY s.ended_at DESC LIMIT ?",
        (project, limit),
    ).fetchall()
    return [EarlierTask(*r) for r in rows]


class Prediction(NamedTuple):
    cascade_id: str
    score: float
    predicted_preflight: float | None
    predicted_check: float | None


def predictions(store: BaseStore) -> list[Prediction]:
    """Every outcome's score beside the task's predictions, oldest first."""
    rows = store.conn.execute(
        "SELECT cascade_id, score, predicted_preflight, predicted_check FROM outcomes "
        "ORDER BY at, id"
    )
    return [Prediction(*r) for r in rows]


def last_outcome(store: BaseStore) -> int:
    """The newest outcome's id (0 for none)."""
    return int(store.conn.execute("SELECT coalesce(max(id), 0) FROM outcomes").fetchone()[0])


def newest_summary(store: BaseStore) -> int | None:
    """A number that grows whenever a session summary is written (None for none yet)."""
    found = store.conn.execute(_NEWEST_SUMMARY[store.dialect]).fetchone()[0]
    return None if found is None else int(found)


def vector_seqs(
    store: BaseStore, embedder: str, upto: int, cascade_ids: list[str]
) -> list[tuple[int, str]]:
    """The ``(seq, cascade_id)`` of the ``embedder``'s vectors up to ``upto`` for the given
    tasks (a few hundred at a time: the statement lists them)."""
    if not cascade_ids:
        return []
    rows = store.conn.execute(
        f"SELECT seq, cascade_id FROM recall_vectors WHERE embedder = ? AND seq <= ? "
        f"AND cascade_id IN ({','.join('?' * len(cascade_ids))})",
        [embedder, upto, *cascade_ids],
    ).fetchall()
    return [(int(r[0]), r[1]) for r in rows]


def database_errors(store: BaseStore) -> tuple[type[BaseException], ...]:
    """The exceptions the store's database driver raises."""
    import sqlite3

    if store.dialect == "postgresql":
        import psycopg

        return (sqlite3.Error, psycopg.Error)
    return (sqlite3.Error,)


_MAP_BODY: Final = (
    "SELECT body FROM calibration_maps WHERE substr(scope, 1, ?) = ? "
    "ORDER BY fitted_at DESC LIMIT 1"
)


def _scope_prefix(ai_id: str) -> tuple[int, str]:
    prefix = f"{ai_id}\x1f"
    return len(prefix), prefix


def newest_map_body(store: BaseStore, ai_id: str) -> str | None:
    """The body (JSON) of the agent's newest kept recalibration map, if one was kept."""
    row = store.conn.execute(_MAP_BODY, _scope_prefix(ai_id)).fetchone()
    return None if row is None else str(row[0])


def newest_map_body_in(home: Path, ai_id: str) -> str | None:
    """:func:`newest_map_body` from the SQLite file under ``home``, read-only with the standard
    library alone (a hook before every prompt opens no store); None for a store from before
    the table."""
    import sqlite3

    conn = sqlite3.connect(f"file:{home / 'noetic.db'}?mode=ro", uri=True)
    try:
        row = conn.execute(_MAP_BODY, _scope_prefix(ai_id)).fetchone()
    except sqlite3.OperationalError:  # a store from before the table: no record yet
        return None
    finally:
        conn.close()
    return None if row is None else str(row[0])


def newest_decision(store: BaseStore, cascade_id: str) -> tuple[str, str, float] | None:
    """The phase, the action and the confidence of the task's newest assessment (the last of
    :meth:`BaseStore.assessments` for it), read as plain values: no model is built."""
    row = store.conn.execute(
        "SELECT phase, action, confidence FROM assessments WHERE cascade_id = ? "
        "ORDER BY session_id DESC, seq DESC LIMIT 1",
        (cascade_id,),
    ).fetchone()
    return None if row is None else (row["phase"], row["action"], float(row["confidence"]))


_OPEN_TASK: Final = (
    "SELECT (SELECT count(*) FROM sessions WHERE id = ?), "
    "(SELECT count(*) FROM cascades WHERE session_id = ? AND status = 'open')"
)


def open_task_in(home: Path, session_id: str) -> tuple[bool, bool] | None:
    """Whether the SQLite file under ``home`` holds session ``session_id``, and an open task of
    it, read-only with the standard library alone (a test run with no task to record opens no
    store); None when the file cannot be read so (the store, opened, says why)."""
    import sqlite3

    try:  # the path as a URI, so a folder named with `?`, `#` or `%` is that folder
        conn = sqlite3.connect(f"{(home / 'noetic.db').absolute().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute(_OPEN_TASK, (session_id, session_id)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return bool(row[0]), bool(row[1])


def results_with(store: BaseStore, key: str, ai_id: str | None = None) -> list[Any]:
    """The results of the tasks whose result names ``key`` (``ai_id``: that agent's only)."""
    sql = (
        "SELECT c.result FROM cascades c JOIN sessions s ON s.id = c.session_id "
        "WHERE c.result LIKE ?"
    )
    args = [f'%"{key}"%']
    if ai_id is not None:
        sql += " AND s.ai_id = ?"
        args.append(ai_id)
    return [r[0] for r in store.conn.execute(sql, args)]


def run_row(
    store: BaseStore, table: Literal["eval_runs", "nova_runs"], run_id: str, kind: str, lists: str
) -> Any:
    """The row of ``table`` whose id is ``run_id``, else the one whose id begins with it; an
    empty id, none and an ambiguous prefix are refused, naming the ``kind`` of run and the
    command that ``lists`` them."""
    if not run_id or not run_id.strip():
        raise InvalidValueError(f"the {kind} id is empty", field="run", value=run_id)
    rows = store._by_id_or_prefix(table, run_id)
    if not rows:
        raise NotFoundError(f"no {kind} {run_id!r}", fix=f"`{lists}` lists them")
    if len(rows) > 1:
        raise InvalidValueError(
            f"{kind} id prefix {run_id!r} is ambiguous", field="run", value=run_id
        )
    return rows[0]
