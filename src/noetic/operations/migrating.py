"""Moving a store: ``noetic migrate --to postgresql://…`` copies the local SQLite store into a
PostgreSQL one and verifies it (see :mod:`noetic.store.copy`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from noetic.errors import InvalidValueError, StoreError
from noetic.store.copy import CopyReport


def migrate_store(store: Path | None, to: str) -> CopyReport:
    """Copy the SQLite store at ``store`` (else the one the usual rules find) into the
    PostgreSQL store at ``to``; raises :class:`StoreError` naming each table that does not
    match after the copy. Running it again copies only what is new."""
    from noetic.store.location import _locate, database_url, require_store, safe_url
    from noetic.store.postgres import PostgresStore
    from noetic.store.sqlite import Store

    url = database_url(to)
    if url is None:
        raise InvalidValueError(
            f"--to {to!r} is not a PostgreSQL URL", field="to", fix="postgresql://user@host/db"
        )
    if database_url(store) is not None:
        raise InvalidValueError("--store names the SQLite store to copy from, not a URL")
    home = require_store(replace(_locate(store, None), url=None))
    from noetic.store.copy import copy_store

    with Store(home, write_files=False) as source, PostgresStore(url, home=home) as target:
        report = copy_store(source, target, target_name=safe_url(url))
    bad = [t for t in report.tables if not t.verified]
    if bad:
        found = "; ".join(
            f"{t.table}: {t.source_rows} rows here, {t.target_rows} there"
            + ("" if t.source_rows != t.target_rows else ", contents differ")
            for t in bad
        )
        raise StoreError(
            f"the copy in {report.target} does not match this store: {found}",
            fix="the target must hold only this store: migrate into an empty database, or "
            "move sessions one by one with `noetic sessions export` and `import`",
        )
    return report
