"""Moving a store: ``noetic migrate --to postgresql://…`` (or ``--to`` another SQLite store's
folder) copies the local SQLite store into it and verifies it (see :mod:`noetic.store.copy`).
A target that already holds other rows is refused before anything is written, unless
``merge``: a team's second member brings their history into the shared store."""

from __future__ import annotations

from pathlib import Path

from noetic.errors import InvalidValueError, NotFoundError
from noetic.store.copy import CopyReport


def migrate_store(store: Path | None, to: str, *, merge: bool = False) -> CopyReport:
    """Copy the SQLite store at ``store`` (else the one the usual rules find) into the store at
    ``to`` (a PostgreSQL URL, or the folder of an existing SQLite store), in one transaction,
    verified per table. Running it again copies only what is new; a target holding rows of
    another store is refused (:class:`~noetic.errors.UsageError`) unless ``merge``."""
    from noetic.store.copy import copy_store
    from noetic.store.location import _locate, database_url, require_store, safe_url
    from noetic.store.sqlite import Store

    if database_url(store) is not None:
        raise InvalidValueError("--store names the SQLite store to copy from, not a URL")
    home = require_store(_locate(store, None)._replace(url=None))
    url = database_url(to)
    if url is not None:
        from noetic.store.postgres import PostgresStore

        with Store(home, write_files=False) as source, PostgresStore(url, home=home) as target:
            return copy_store(source, target, target_name=safe_url(url), merge=merge)
    folder = Path(to).expanduser()
    if "://" in to or not (folder / "noetic.db").is_file():
        raise NotFoundError(
            f"--to {to!r} is neither a PostgreSQL URL nor the folder of a Noetic store",
            fix="postgresql://user@host/db, or a store's folder (the one holding noetic.db)",
        )
    if folder.resolve() == home.resolve():
        raise InvalidValueError(f"--to {to!r} is this store itself", field="to", value=to)
    with Store(home, write_files=False) as source, Store(folder) as target:
        return copy_store(source, target, target_name=str(folder), merge=merge)
