"""The numbered migrations of :mod:`noetic.store.migrations`, applied to PostgreSQL.

The same functions run, in the same order, and their names are recorded in the same
``schema_migrations`` table, so a database on either backend says which migrations it has and a
newer one is refused the same way. Each function runs through :class:`_Translating`, which gives
its ``CREATE TABLE`` and ``ALTER TABLE`` statements PostgreSQL's column types
(:func:`noetic.store.pg_sql.ddl`). SQLite's triggers have no common syntax; each one a migration
creates is named in :data:`TRIGGERS` with its PostgreSQL form, and a trigger not named there
stops the migration rather than being dropped silently.

Each migration is one transaction holding a transaction-level advisory lock, so two processes
opening a new database at once apply each migration once.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from noetic.errors import MigrationError
from noetic.store.migrations import MIGRATIONS
from noetic.store.pg_sql import ddl, statement

LOCK_KEY: Final = 0x6E6F6574  # "noet": one advisory lock for every Noetic schema change

_APPEND_ONLY: Final = """CREATE OR REPLACE FUNCTION noetic_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '% are append-only', TG_TABLE_NAME; END $$"""

_GENERATION: Final = """CREATE OR REPLACE FUNCTION noetic_recall_generation() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO recall_generations (embedder, generation) VALUES (OLD.embedder, 1)
    ON CONFLICT (embedder) DO UPDATE SET generation = recall_generations.generation + 1;
    RETURN NULL;
END $$"""

# SQLite trigger name -> the PostgreSQL statements that do the same.
TRIGGERS: Final[dict[str, tuple[str, ...]]] = {
    "events_no_update": (
        _APPEND_ONLY,
        "CREATE TRIGGER events_no_update BEFORE UPDATE ON events "
        "FOR EACH ROW EXECUTE FUNCTION noetic_append_only()",
    ),
    "events_no_delete": (
        "CREATE TRIGGER events_no_delete BEFORE DELETE ON events "
        "FOR EACH ROW EXECUTE FUNCTION noetic_append_only()",
        # TRUNCATE fires no row trigger: refuse it too
        "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
        "FOR EACH STATEMENT EXECUTE FUNCTION noetic_append_only()",
    ),
    "recall_vectors_deleted": (
        _GENERATION,
        "CREATE TRIGGER recall_vectors_deleted AFTER DELETE ON recall_vectors "
        "FOR EACH ROW EXECUTE FUNCTION noetic_recall_generation()",
    ),
}
_TRIGGER: Final = re.compile(r"^\s*CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)


class _Translating:
    """The connection a migration function sees: SQLite's statements, run as PostgreSQL's."""

    def __init__(self, conn: Any, name: str) -> None:
        self._conn = conn
        self._name = name

    def execute(self, sql: str, params: Any = ()) -> Any:
        """The statement's cursor (a trigger's: that of its last PostgreSQL statement)."""
        trigger = _TRIGGER.match(sql)
        if trigger:
            forms = TRIGGERS.get(trigger.group(1))
            if forms is None:
                raise MigrationError(
                    f"migration {self._name} creates the trigger {trigger.group(1)}, which has "
                    "no PostgreSQL form",
                    fix="add its PostgreSQL statements to noetic.store.pg_migrations.TRIGGERS",
                )
            for form in forms:
                cursor = self._conn.execute(form)
            return cursor
        return self._conn.execute(statement(ddl(sql)), list(params))


def applied(conn: Any) -> set[str]:
    """The migrations recorded in this database (none if it has no Noetic tables)."""
    found = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0]
    if found is None:
        return set()
    return {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}


def refuse_newer(done: set[str], where: str) -> None:
    newer = sorted(done - {fn.__name__ for fn in MIGRATIONS})
    if newer:
        raise MigrationError(
            f"the PostgreSQL store {where} has migrations this Noetic does not know: "
            f"{', '.join(newer)} (it was written by a newer Noetic)",
            fix="upgrade noetic on this machine; the store is left as it is",
        )


def migrate(conn: Any, where: str) -> list[str]:
    """Apply the pending migrations on ``conn`` (autocommit), each in its own transaction;
    returns the names applied. Refuses a database with a migration this code does not know."""
    import psycopg

    have = applied(conn)
    refuse_newer(have, where)
    if all(fn.__name__ in have for fn in MIGRATIONS):
        return []  # the usual case: one query
    done: list[str] = []
    for fn in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            conn.execute(
                'CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT COLLATE "C" '
                "PRIMARY KEY, applied_at TEXT)"
            )
            have = applied(conn)
            refuse_newer(have, where)
            if fn.__name__ in have:
                continue
            try:
                fn(_Translating(conn, fn.__name__))  # type: ignore[arg-type]
            except psycopg.Error as exc:
                failed = f"migration {fn.__name__} failed on PostgreSQL: {exc}"
                raise MigrationError(failed) from exc
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (%s, %s)",
                (fn.__name__, datetime.now(UTC).isoformat()),
            )
            done.append(fn.__name__)
    return done
