"""Versioned schema migrations: an ordered list of ``mNNN_`` functions.

Each function receives a connection inside an open transaction and runs its statements. The
names of applied migrations are kept in ``schema_migrations``; :func:`migrate` runs the rest, in
order, when a store opens. Numbers are unique and rising (a test checks it); a database that has
a migration this code does not know was written by a newer Noetic, and opening it is refused.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from noetic.errors import MigrationError
from noetic.vector_names import VECTOR_NAMES

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


def _vector_columns() -> str:
    return ",\n    ".join(f'"{name}" REAL' for name in VECTOR_NAMES)


@migration
def m001_core(conn: sqlite3.Connection) -> None:
    statements = [
        """CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    ai_id TEXT NOT NULL,
    ai_model TEXT,
    domain TEXT,
    profile TEXT NOT NULL,
    project TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    created_at TEXT NOT NULL,
    ended_at TEXT
)""",
        "CREATE INDEX sessions_ai ON sessions (ai_id, created_at)",
        """CREATE TABLE cascades (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    task TEXT NOT NULL,
    status TEXT NOT NULL,
    profile TEXT NOT NULL,
    provider TEXT,
    created_at TEXT NOT NULL,
    ended_at TEXT,
    result TEXT NOT NULL DEFAULT '{}'
)""",
        "CREATE INDEX cascades_session ON cascades (session_id, created_at)",
        f"""CREATE TABLE assessments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    cascade_id TEXT REFERENCES cascades (id),
    seq INTEGER NOT NULL,
    phase TEXT NOT NULL,
    {_vector_columns()},
    confidence REAL NOT NULL,
    action TEXT NOT NULL,
    rule TEXT NOT NULL,
    reason TEXT NOT NULL,
    threshold REAL,
    gaps TEXT NOT NULL DEFAULT '[]',
    recommended_action TEXT,
    rationales TEXT NOT NULL DEFAULT '{{}}',
    evidence TEXT NOT NULL DEFAULT '{{}}',
    carried TEXT NOT NULL DEFAULT '[]',
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (session_id, seq)
)""",
        "CREATE INDEX assessments_cascade ON assessments (cascade_id, seq)",
        """CREATE TABLE investigations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    cascade_id TEXT REFERENCES cascades (id),
    round INTEGER,
    note TEXT NOT NULL DEFAULT '',
    tool TEXT,
    purpose TEXT,
    target_vector TEXT,
    success INTEGER,
    information_gained TEXT,
    created_at TEXT NOT NULL
)""",
        "CREATE INDEX investigations_cascade ON investigations (cascade_id, id)",
        """CREATE TABLE goals (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    cascade_id TEXT REFERENCES cascades (id),
    parent_id TEXT REFERENCES goals (id),
    description TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    target_vector TEXT,
    priority REAL NOT NULL DEFAULT 0.5,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
)""",
        "CREATE INDEX goals_session ON goals (session_id, created_at)",
        """CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    session_id TEXT,
    cascade_id TEXT,
    data TEXT NOT NULL DEFAULT '{}'
)""",
        "CREATE INDEX events_session ON events (session_id, id)",
        "CREATE INDEX events_kind ON events (kind, id)",
        """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END""",
        """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END""",
    ]
    for statement in statements:
        conn.execute(statement)


@migration
def m002_llm_calls(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE llm_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    latency_ms REAL NOT NULL DEFAULT 0,
    error_class TEXT,
    status INTEGER,
    session_id TEXT,
    cascade_id TEXT
)"""
    )
    conn.execute("CREATE INDEX llm_calls_session ON llm_calls (session_id, id)")


@migration
def m003_outcomes(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE outcomes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    cascade_id TEXT NOT NULL REFERENCES cascades (id),
    ai_id TEXT NOT NULL,
    profile TEXT NOT NULL,
    domain TEXT,
    source TEXT NOT NULL CHECK (source IN ('test', 'human', 'check')),
    score REAL NOT NULL CHECK (score >= 0 AND score <= 1),
    evidence TEXT NOT NULL DEFAULT '',
    predicted_preflight REAL,
    predicted_check REAL,
    predicted_vectors TEXT NOT NULL DEFAULT '{}'
)"""
    )
    conn.execute("CREATE INDEX outcomes_cascade ON outcomes (cascade_id, source, id)")
    conn.execute("CREATE INDEX outcomes_ai ON outcomes (ai_id, at)")
    conn.execute(
        """CREATE TABLE profile_adjustments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    profile TEXT NOT NULL,
    field TEXT NOT NULL,
    old REAL NOT NULL,
    new REAL NOT NULL,
    reason TEXT NOT NULL,
    evidence TEXT NOT NULL DEFAULT '{}',
    undone_at TEXT
)"""
    )


@migration
def m004_observer(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE observer_runs (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    query TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    stages INTEGER NOT NULL,
    reason TEXT NOT NULL,
    model_calls INTEGER NOT NULL,
    cache_hit INTEGER NOT NULL,
    stage_budget INTEGER NOT NULL,
    answer TEXT NOT NULL,
    confidence REAL NOT NULL,
    note TEXT NOT NULL DEFAULT ''
)"""
    )
    conn.execute(
        """CREATE TABLE observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES observer_runs (id),
    stage INTEGER NOT NULL,
    layers TEXT NOT NULL,
    confidence REAL NOT NULL,
    content TEXT NOT NULL,
    at TEXT NOT NULL
)"""
    )
    conn.execute(
        """CREATE TABLE pattern_cache (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    query TEXT NOT NULL,
    embedder TEXT NOT NULL,
    embedding BLOB NOT NULL,
    answer TEXT NOT NULL,
    answer_embedding BLOB NOT NULL,
    confidence REAL NOT NULL,
    layers TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_used_at REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)"""
    )
    conn.execute("CREATE INDEX pattern_cache_lru ON pattern_cache (last_used_at)")


@migration
def m005_session_summaries(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE session_summaries (
    cascade_id TEXT PRIMARY KEY REFERENCES cascades (id),
    session_id TEXT NOT NULL REFERENCES sessions (id),
    ai_id TEXT NOT NULL,
    project TEXT,
    task TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    pre TEXT NOT NULL,
    post TEXT NOT NULL,
    delta TEXT NOT NULL,
    learning REAL NOT NULL,
    calibration TEXT NOT NULL,
    confidence_pre REAL NOT NULL,
    confidence_post REAL NOT NULL,
    notes TEXT NOT NULL DEFAULT '',
    embedder TEXT,
    embedding BLOB
)"""
    )
    conn.execute("CREATE INDEX session_summaries_ai ON session_summaries (ai_id, ended_at)")


@migration
def m006_checkpoints(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    cascade_id TEXT,
    at TEXT NOT NULL,
    line TEXT NOT NULL
)"""
    )
    conn.execute("CREATE INDEX checkpoints_session ON checkpoints (session_id, id)")


@migration
def m007_summary_vectors(conn: sqlite3.Connection) -> None:
    """Pre-state and delta as packed float32 (13 each, NaN where absent), so recall scores
    every past task with array arithmetic instead of parsing JSON row by row."""
    import struct  # here: a store opened after this migration ran does not need it

    conn.execute("ALTER TABLE session_summaries ADD COLUMN pre_vec BLOB")
    conn.execute("ALTER TABLE session_summaries ADD COLUMN delta_vec BLOB")
    nan = float("nan")
    rows = conn.execute("SELECT cascade_id, pre, delta FROM session_summaries").fetchall()
    for cascade_id, pre, delta in rows:
        packed = [
            struct.pack(f"{len(VECTOR_NAMES)}f", *(d.get(v, nan) for v in VECTOR_NAMES))
            for d in (json.loads(pre), json.loads(delta))
        ]
        conn.execute(
            "UPDATE session_summaries SET pre_vec = ?, delta_vec = ? WHERE cascade_id = ?",
            (*packed, cascade_id),
        )


@migration
def m008_event_engine(conn: sqlite3.Connection) -> None:
    """Events name the engine whose run emitted them (NULL: the agent-driven workflow)."""
    conn.execute("ALTER TABLE events ADD COLUMN engine TEXT")


@migration
def m009_file_backlog(conn: sqlite3.Connection) -> None:
    """Sessions whose JSON document and reflex logs lag SQLite: written in the same transaction
    as the change, deleted once the files are written (see :mod:`noetic.store.mirror`)."""
    conn.execute(
        """CREATE TABLE file_backlog (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    assessment_id INTEGER,
    all_reflex INTEGER NOT NULL DEFAULT 0
)"""
    )


@migration
def m010_open_cascades(conn: sqlite3.Connection) -> None:
    """Finding a session's open task reads only open tasks, however many it has finished."""
    conn.execute(
        "CREATE INDEX cascades_open ON cascades (session_id, created_at, id) WHERE status = 'open'"
    )


@migration
def m011_recall_vectors(conn: sqlite3.Connection) -> None:
    """What recall scores with, apart from the summaries: one row per task and embedder, with
    the embedding and the scoring columns, appended in ``seq`` order so an index can catch up
    by reading only the rows after the last it saw. A deleted row bumps the embedder's
    ``generation``, which tells indexes to rebuild instead."""
    conn.execute(
        """CREATE TABLE recall_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    embedder TEXT NOT NULL,
    cascade_id TEXT NOT NULL,
    ai_id TEXT NOT NULL,
    project TEXT,
    calibration TEXT NOT NULL,
    learning REAL NOT NULL,
    ended REAL NOT NULL,
    pre_vec BLOB NOT NULL,
    delta_vec BLOB NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (embedder, cascade_id)
)"""
    )
    conn.execute("CREATE INDEX recall_vectors_cascade ON recall_vectors (cascade_id)")
    conn.execute("CREATE INDEX recall_vectors_seq ON recall_vectors (embedder, seq)")
    conn.execute(
        "CREATE TABLE recall_generations (embedder TEXT PRIMARY KEY, generation INTEGER NOT NULL)"
    )
    conn.execute(
        """CREATE TRIGGER recall_vectors_deleted AFTER DELETE ON recall_vectors BEGIN
    INSERT INTO recall_generations (embedder, generation) VALUES (old.embedder, 1)
    ON CONFLICT (embedder) DO UPDATE SET generation = generation + 1;
END"""
    )


def _applied(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}


def applied_in(conn: sqlite3.Connection) -> set[str]:
    """The migrations this database has (read only; none without the table)."""
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    return _applied(conn) if table else set()


def pending(conn: sqlite3.Connection) -> list[str]:
    """Migrations this database still needs (read only)."""
    applied = applied_in(conn)
    return [fn.__name__ for fn in MIGRATIONS if fn.__name__ not in applied]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations, each in its own transaction. Returns the names applied."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    known = {fn.__name__ for fn in MIGRATIONS}
    applied = _applied(conn)
    newer = sorted(applied - known)
    if newer:
        raise MigrationError(
            f"this database has migrations this Noetic does not know: {', '.join(newer)}",
            fix="upgrade noetic, or point --store at another directory",
        )
    done: list[str] = []
    for fn in MIGRATIONS:  # a current database needs no more than the query above
        if fn.__name__ in applied:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if fn.__name__ not in _applied(conn):  # another process may have won the race
                fn(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    (fn.__name__, datetime.now(UTC).isoformat()),
                )
                done.append(fn.__name__)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise MigrationError(f"migration {fn.__name__} failed: {exc}") from exc
    return done


@migration
def m012_llm_call_costs(conn: sqlite3.Connection) -> None:
    """What a model call cost: cached prompt tokens (read from and written to the provider's
    cache), the price in US dollars (NULL when the model has no known price, never 0), the stop
    reason, a note (a structured-output fallback), and the run's engine for ``noetic logs``."""
    for column in (
        "tokens_cached INTEGER NOT NULL DEFAULT 0",
        "tokens_cache_write INTEGER NOT NULL DEFAULT 0",
        "cost_usd REAL",
        "stop_reason TEXT",
        "note TEXT",
        "engine TEXT",
    ):
        conn.execute(f"ALTER TABLE llm_calls ADD COLUMN {column}")
    conn.execute("CREATE INDEX llm_calls_cascade ON llm_calls (cascade_id, id)")
    conn.execute("CREATE INDEX llm_calls_model ON llm_calls (model, id)")


@migration
def m013_agent_memory(conn: sqlite3.Connection) -> None:
    """The cognitive agent's persisted horizons (seed 004): a profile per user, and a workspace
    per task with its query and status, written after every step so a task can be resumed."""
    conn.execute(
        """CREATE TABLE user_profiles (
    user_id TEXT PRIMARY KEY,
    profile_data TEXT NOT NULL,
    updated_at TEXT NOT NULL
)"""
    )
    conn.execute(
        """CREATE TABLE task_workspaces (
    task_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES user_profiles (user_id),
    query TEXT NOT NULL,
    status TEXT NOT NULL,
    workspace_data TEXT NOT NULL,
    updated_at TEXT NOT NULL
)"""
    )
    conn.execute("CREATE INDEX task_workspaces_updated ON task_workspaces (updated_at)")


@migration
def m014_nova(conn: sqlite3.Connection) -> None:
    """NovaProcess deliberations: one row per run, its turns written as each one finishes (so a
    killed run resumes without repeating a call that succeeded)."""
    conn.execute(
        """CREATE TABLE nova_runs (
    id TEXT PRIMARY KEY,
    session_id TEXT,
    cascade_id TEXT,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    settings TEXT NOT NULL,
    inputs TEXT NOT NULL DEFAULT '[]',
    result TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    ended_at TEXT
)"""
    )
    conn.execute("CREATE INDEX nova_runs_created ON nova_runs (created_at)")
    conn.execute(
        """CREATE TABLE nova_turns (
    run_id TEXT NOT NULL REFERENCES nova_runs (id),
    seq INTEGER NOT NULL,
    key TEXT NOT NULL,
    turn TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, key)
)"""
    )


@migration
def m015_p_success(conn: sqlite3.Connection) -> None:
    """An assessment's stated probability of success and, for a POSTFLIGHT, how the review was
    asked for (standard or adversarial). Plain added columns, so older rows read as unstated."""
    conn.execute("ALTER TABLE assessments ADD COLUMN p_success REAL")
    conn.execute("ALTER TABLE assessments ADD COLUMN review TEXT")


@migration
def m016_requests(conn: sqlite3.Connection) -> None:
    """Idempotency keys: a write given a request id records it in the same transaction, so a
    retry of the same request finds it and is answered from ``response`` instead of applied
    again (:mod:`noetic.store.requests`)."""
    conn.execute(
        """CREATE TABLE requests (
    id TEXT PRIMARY KEY,
    operation TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response TEXT,
    created_at TEXT NOT NULL
)"""
    )


@migration
def m017_list_order(conn: sqlite3.Connection) -> None:
    """Indexes in the order the dashboard's sessions and tasks lists read (newest first, by
    ``created_at`` then ``id``), so a page is read off the index instead of sorting every row:
    without them the last page of 10,000 sessions cost about twice the first."""
    conn.execute("CREATE INDEX sessions_created ON sessions (created_at, id)")
    conn.execute("CREATE INDEX cascades_created ON cascades (created_at, id)")


@migration
def m018_tokens(conn: sqlite3.Connection) -> None:
    """Per-person access tokens for ``noetic serve`` (only a SHA-256 of each is kept; a revoked
    name stays, so the rows it wrote still name one token), and which token made a write: the
    ``written_by`` column of the rows a request over HTTP adds (empty for every other write)."""
    conn.execute(
        """CREATE TABLE tokens (
    name TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    read_only INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)"""
    )
    for table in ("assessments", "outcomes", "events"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN written_by TEXT")


@migration
def m019_written_by(conn: sqlite3.Connection) -> None:
    """``written_by`` on every table whose rows a request can create (m018 gave it to
    assessments, outcomes and events): sessions, tasks, investigations, goals, model calls,
    observer runs and their observations, Nova runs and turns, checkpoints and calibration
    adjustments (:data:`noetic.store.writer.STAMPED`). Rows written before stay empty. And an
    index of the live tokens, so a server's per-request question "is any token live?" is one
    index probe however many tokens were revoked."""
    for table in (
        "sessions",
        "cascades",
        "investigations",
        "goals",
        "llm_calls",
        "observer_runs",
        "observations",
        "nova_runs",
        "nova_turns",
        "checkpoints",
        "profile_adjustments",
    ):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN written_by TEXT")
    conn.execute("CREATE INDEX tokens_live ON tokens (name) WHERE revoked_at IS NULL")


@migration
def m020_eval_runs(conn: sqlite3.Connection) -> None:
    """``noetic eval`` runs and their problems: a run's row holds its settings and status, and
    each problem's row its state (pending, started, answered, done, error), written before and
    after every step, so a killed run resumes where it stopped and runs nothing twice."""
    conn.execute(
        """CREATE TABLE eval_runs (
    id TEXT PRIMARY KEY,
    task_set TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    ai_id TEXT NOT NULL,
    profile TEXT,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    settings TEXT NOT NULL,
    created_at TEXT NOT NULL,
    ended_at TEXT,
    written_by TEXT
)"""
    )
    conn.execute("CREATE INDEX eval_runs_created ON eval_runs (created_at, id)")
    conn.execute(
        """CREATE TABLE eval_tasks (
    run_id TEXT NOT NULL REFERENCES eval_runs (id),
    seq INTEGER NOT NULL,
    task_id TEXT NOT NULL,
    problem TEXT NOT NULL,
    state TEXT NOT NULL,
    review TEXT,
    session_id TEXT,
    cascade_id TEXT,
    code TEXT,
    passed INTEGER,
    reason TEXT,
    result TEXT NOT NULL DEFAULT '{}',
    updated_at TEXT NOT NULL,
    written_by TEXT,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, task_id)
)"""
    )


@migration
def m021_session_type(conn: sqlite3.Connection) -> None:
    """The seed's ``session_type`` of ``bootstrap_session`` (a free label such as
    ``development`` or ``review``), kept with the session and shown with it; older sessions
    read as unstated."""
    conn.execute("ALTER TABLE sessions ADD COLUMN session_type TEXT")


@migration
def m022_calibration_maps(conn: sqlite3.Connection) -> None:
    """The recalibration maps fitted on the outcomes (:mod:`noetic.calibration.recalibrating`),
    kept per agent and model beside the count and newest id of the outcomes they were fitted on,
    so a decision reads one row instead of refitting; and each assessment's calibrated value
    (``decision.calibrated``, JSON; empty when no map was in force)."""
    conn.execute(
        """CREATE TABLE calibration_maps (
    scope TEXT PRIMARY KEY,
    outcomes INTEGER NOT NULL,
    last_id INTEGER NOT NULL,
    fitted_at TEXT NOT NULL,
    body TEXT NOT NULL
)"""
    )
    conn.execute("ALTER TABLE assessments ADD COLUMN calibrated TEXT")


@migration
def m023_events_by_task(conn: sqlite3.Connection) -> None:
    """Events by task with the engine that wrote them, so the recalibration points of a newly
    judged task find its engine without reading every event
    (:class:`noetic.calibration.recalibrating.Points`)."""
    conn.execute("CREATE INDEX events_cascade ON events (cascade_id, engine)")
