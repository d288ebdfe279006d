"""Browse the store: the sessions list (filters, search, paging) and one session with its tasks.

Read models for the dashboard (and any other reader): every function takes an open store
(SQLite or PostgreSQL, :class:`~noetic.store.base.BaseStore`) and plain arguments and returns a
frozen pydantic model, so a page only renders what it is given. Nothing here writes.

The list is built for stores of tens of thousands of sessions: one query finds the page's ids
(filters, search and the sort are SQL, the count is one ``COUNT``), a second gathers the
figures of those ids only, so a page costs the same on page 1 and page 200.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from noetic.errors import InvalidValueError, NotFoundError
from noetic.operations.session_totals import SessionTotals, session_totals
from noetic.store.base import BaseStore

PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 500
OUTCOMES: Final = ("success", "failure", "none")
ENGINES: Final = ("cascade", "observer", "nova", "agent")  # what events name as their engine
STATUSES: Final = ("active", "ended")
_NAME: Final = re.compile(r"^[\w.:@/+-]{1,200}$")


class SessionFilters(BaseModel):
    """What the list shows; every field is a URL query parameter of the same name."""

    model_config = ConfigDict(frozen=True)

    agent: str | None = None
    profile: str | None = None
    project: str | None = None
    engine: str | None = None
    status: str | None = None
    outcome: str | None = None
    since: date | None = None
    until: date | None = None
    q: str | None = Field(None, max_length=200)
    page: int = Field(1, ge=1, le=1_000_000)
    per_page: int = Field(PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)

    @field_validator("agent", "profile", "project", "engine", "status", mode="before")
    @classmethod
    def _name(cls, value: Any, info: Any) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str) or not _NAME.match(value):
            raise InvalidValueError(
                f"{info.field_name} {value!r} is not a name", field=info.field_name, value=value
            )
        return value

    @field_validator("outcome", mode="before")
    @classmethod
    def _outcome(cls, value: Any) -> str | None:
        if value is None or value == "":
            return None
        if value not in OUTCOMES:
            raise InvalidValueError(
                f"outcome must be one of {', '.join(OUTCOMES)}, got {value!r}",
                field="outcome",
                value=value,
            )
        return str(value)

    @field_validator("q", "since", "until", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return None if value == "" else value

    def query(self, **changes: Any) -> dict[str, str]:
        """The filters as URL parameters (defaults left out), with ``changes`` applied."""
        data = {**self.model_dump(mode="json"), **changes}
        defaults = SessionFilters().model_dump(mode="json")
        return {k: str(v) for k, v in data.items() if v is not None and v != defaults.get(k)}


class SessionRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    agent: str
    model: str | None
    profile: str
    project: str | None
    status: str
    created_at: str
    tasks: int
    latest_task: str | None
    latest_task_id: str | None
    confidence: float | None
    outcome: float | None
    engines: list[str]


class Choices(BaseModel):
    """The values each filter can take in this store (for the filter form's menus)."""

    model_config = ConfigDict(frozen=True)

    agents: list[str]
    profiles: list[str]
    projects: list[str]
    engines: list[str]
    statuses: list[str]


class SessionsPage(BaseModel):
    model_config = ConfigDict(frozen=True)

    filters: SessionFilters
    rows: list[SessionRow]
    total: int
    pages: int
    choices: Choices


def list_sessions(store: BaseStore, filters: SessionFilters) -> SessionsPage:
    """One page of sessions, newest first, with each one's tasks, confidence and outcome."""
    where, args = _conditions(filters)
    conn = store.conn
    total = conn.execute(f"SELECT COUNT(*) FROM sessions s{where}", args).fetchone()[0]
    offset = (filters.page - 1) * filters.per_page
    # the sort carries only (created_at, id); the page's rows are read by id afterwards
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT s.id FROM sessions s{where} ORDER BY s.created_at DESC, s.id DESC "
            f"LIMIT ? OFFSET ?",
            [*args, filters.per_page, offset],
        )
    ]
    # an empty page reads nothing more (PostgreSQL refuses "IN ()")
    by_id = (
        {
            r["id"]: r
            for r in conn.execute(
                f"SELECT * FROM sessions WHERE id IN ({','.join('?' * len(ids))})", ids
            )
        }
        if ids
        else {}
    )
    rows = _rows(store, [by_id[i] for i in ids])
    return SessionsPage(
        filters=filters,
        rows=rows,
        total=total,
        pages=max(1, -(-total // filters.per_page)),
        choices=filter_choices(store),
    )


def _conditions(f: SessionFilters) -> tuple[str, list[Any]]:
    parts: list[str] = []
    args: list[Any] = []
    equal_to(
        parts,
        args,
        {"s.ai_id": f.agent, "s.profile": f.profile, "s.project": f.project, "s.status": f.status},
    )
    if f.engine is not None:
        parts.append("EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id AND e.engine = ?)")
        args.append(f.engine)
    # outcomes has no index on session_id: one pass builds the set (an IN list), where a
    # correlated EXISTS would scan every outcome once per session
    if f.outcome == "none":
        parts.append("s.id NOT IN (SELECT session_id FROM outcomes)")
    elif f.outcome is not None:
        op = ">=" if f.outcome == "success" else "<"
        parts.append(f"s.id IN (SELECT session_id FROM outcomes WHERE score {op} 0.5)")
    created_between(parts, args, "s.created_at", f)
    if f.q:
        like = like_pattern(f.q)
        parts.append(
            "(s.id LIKE ? ESCAPE '\\' OR s.ai_id LIKE ? ESCAPE '\\' OR s.project LIKE ? ESCAPE '\\'"
            " OR EXISTS (SELECT 1 FROM cascades c WHERE c.session_id = s.id"
            " AND (c.task LIKE ? ESCAPE '\\' OR c.id LIKE ? ESCAPE '\\')))"
        )
        args += [like] * 5
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def equal_to(parts: list[str], args: list[Any], columns: dict[str, str | None]) -> None:
    """``column = value`` for each filter given (None: not filtered)."""
    for column, value in columns.items():
        if value is not None:
            parts.append(f"{column} = ?")
            args.append(value)


def created_between(parts: list[str], args: list[Any], column: str, f: SessionFilters) -> None:
    """The filters' day range on ``column`` (``until`` takes in its whole day)."""
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


def task_counts(store: BaseStore, session_ids: list[str]) -> dict[str, int]:
    """How many tasks each session has (0 for none), in one query."""
    if not session_ids:  # PostgreSQL refuses "IN ()"
        return {}
    marks = ", ".join("?" for _ in session_ids)
    found = store.conn.execute(
        f"SELECT session_id, COUNT(*) FROM cascades WHERE session_id IN ({marks}) "
        "GROUP BY session_id",
        session_ids,
    )
    return {**dict.fromkeys(session_ids, 0), **{sid: int(n) for sid, n in found}}


def _rows(store: BaseStore, page: list[Any]) -> list[SessionRow]:
    if not page:
        return []
    ids = [r["id"] for r in page]
    marks = ",".join("?" * len(ids))
    conn = store.conn
    tasks: dict[str, tuple[int, str | None, str | None]] = {}
    for r in conn.execute(
        "SELECT s.id, (SELECT COUNT(*) FROM cascades c WHERE c.session_id = s.id) n, "
        "(SELECT c.id FROM cascades c WHERE c.session_id = s.id "
        "ORDER BY c.created_at DESC, c.id DESC LIMIT 1) latest "
        f"FROM sessions s WHERE s.id IN ({marks})",
        ids,
    ):
        tasks[r["id"]] = (r["n"], r["latest"], None)
    latest = [t[1] for t in tasks.values() if t[1] is not None]
    if latest:
        named = dict(
            conn.execute(
                f"SELECT id, task FROM cascades WHERE id IN ({','.join('?' * len(latest))})",
                latest,
            ).fetchall()
        )
        tasks = {k: (n, cid, named.get(cid or "")) for k, (n, cid, _) in tasks.items()}
    confidence = {
        r["session_id"]: r["confidence"]
        for r in conn.execute(
            f"SELECT a.session_id, a.confidence FROM assessments a JOIN ("
            f"SELECT session_id, MAX(seq) seq FROM assessments WHERE session_id IN ({marks}) "
            f"GROUP BY session_id) m ON a.session_id = m.session_id AND a.seq = m.seq",
            ids,
        )
    }
    outcome = {
        r["session_id"]: r["score"]
        for r in conn.execute(
            f"SELECT session_id, AVG(score) score FROM outcomes WHERE session_id IN ({marks}) "
            f"GROUP BY session_id",
            ids,
        )
    }
    engines: dict[str, list[str]] = {}
    for r in conn.execute(
        f"SELECT DISTINCT session_id, engine FROM events WHERE session_id IN ({marks}) "
        f"AND engine IS NOT NULL ORDER BY engine",
        ids,
    ):
        engines.setdefault(r["session_id"], []).append(r["engine"])
    out = []
    for r in page:
        n, cid, task = tasks.get(r["id"], (0, None, None))
        out.append(
            SessionRow(
                id=r["id"],
                agent=r["ai_id"],
                model=r["ai_model"],
                profile=r["profile"],
                project=r["project"],
                status=r["status"],
                created_at=r["created_at"],
                tasks=n,
                latest_task=task,
                latest_task_id=cid,
                confidence=confidence.get(r["id"]),
                outcome=outcome.get(r["id"]),
                engines=engines.get(r["id"], []),
            )
        )
    return out


_CHOICES: dict[tuple[str, str | None, int], Choices] = {}


def filter_choices(store: BaseStore) -> Choices:
    """The filter menus' values. Reading them scans the sessions, so they are kept per store
    until a session is added (a session's agent, profile and project never change)."""
    conn = store.conn
    newest, count = conn.execute("SELECT MAX(created_at), COUNT(*) FROM sessions").fetchone()
    key = (f"{type(store).__name__}:{store.home}", newest, int(count))
    if key in _CHOICES:
        return _CHOICES[key]

    def distinct(sql: str) -> list[str]:
        return [r[0] for r in conn.execute(sql) if r[0] is not None]

    choices = Choices(
        agents=distinct("SELECT DISTINCT ai_id FROM sessions ORDER BY 1"),
        profiles=distinct("SELECT DISTINCT profile FROM sessions ORDER BY 1"),
        projects=distinct("SELECT DISTINCT project FROM sessions ORDER BY 1"),
        engines=list(ENGINES),
        statuses=list(STATUSES),
    )
    if len(_CHOICES) > 16:
        _CHOICES.clear()
    _CHOICES[key] = choices
    return choices


class TaskRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    task: str
    status: str
    profile: str
    created_at: str
    ended_at: str | None
    assessments: int
    confidences: list[float]
    outcome: float | None


class SessionView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    agent: str
    model: str | None
    profile: str
    project: str | None
    domain: str | None
    status: str
    created_at: str
    ended_at: str | None
    tasks: list[TaskRow]
    events: int
    session_type: str | None = None
    totals: SessionTotals = SessionTotals()


def session_view(store: BaseStore, session_id: str) -> SessionView:
    """One session and its tasks, each with its confidence path and outcome."""
    row = store.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"unknown session {session_id!r}")
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
    tasks = [
        TaskRow(
            id=c.id,
            task=c.task,
            status=c.status,
            profile=c.profile,
            created_at=c.created_at,
            ended_at=c.ended_at,
            assessments=len(paths.get(c.id, [])),
            confidences=paths.get(c.id, []),
            outcome=outcomes.get(c.id),
        )
        for c in store.cascades(session_id)
    ]
    events = conn.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (session_id,))
    return SessionView(
        id=row["id"],
        agent=row["ai_id"],
        model=row["ai_model"],
        profile=row["profile"],
        project=row["project"],
        domain=row["domain"],
        status=row["status"],
        created_at=row["created_at"],
        ended_at=row["ended_at"],
        tasks=tasks,
        events=events.fetchone()[0],
        session_type=row["session_type"],
        totals=session_totals(store, [row["id"]])[row["id"]],
    )
