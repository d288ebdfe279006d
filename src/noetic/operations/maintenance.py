"""Keeping a store whole (``noetic rebuild``: :func:`rebuild`, which opens and closes the store
itself, since a restore may first have to move a damaged database aside), and moving it
(``noetic migrate --to``: :func:`migrate_store`, see :mod:`noetic.store.copy`; ``merge`` lets a
team's second member bring their history into a shared store that holds other rows).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from noetic.errors import InvalidValueError, NotFoundError
from noetic.store.recovery import Restored

if TYPE_CHECKING:
    from noetic.store.copy import CopyReport


class Rebuilt(BaseModel):
    """What was rewritten, what was swept, and (with ``from_files``) what was restored."""

    home: Path
    sessions: int
    reflex_logs: int
    """Reflex-log lines written, one per assessment."""
    temporary_files_removed: int
    restored: Restored | None = None


def rebuild(store: Path | None, *, from_files: bool = False) -> Rebuilt:
    """Regenerate every session JSON file and reflex log from the database and remove
    temporary files killed writers left; with ``from_files``, first restore the database from
    the session files, verifying the counts. Files that could not be restored are an error that
    names each, raised after the rest is done. Sync."""
    from noetic.errors import StoreError
    from noetic.store import open_store, resolve_home
    from noetic.store.derived_files import sweep_temporary_files

    home = resolve_home(store)
    restored = None
    if from_files:
        from noetic.store.recovery import restore_from_files

        restored = restore_from_files(home)
    with open_store(store) as opened:
        counts = opened.rebuild_files()
    result = Rebuilt(
        home=home,
        sessions=counts["sessions"],
        reflex_logs=counts["reflex_logs"],
        temporary_files_removed=sweep_temporary_files(home),
        restored=restored,
    )
    if restored is not None and restored.unreadable:
        problems = "; ".join(f"{u.file}: {u.problem}" for u in restored.unreadable)
        raise StoreError(
            f"restored {restored.sessions} sessions, but {len(restored.unreadable)} "
            f"session files could not be restored: {problems}",
            fix="repair or remove those files and run the command again",
        )
    return result


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
