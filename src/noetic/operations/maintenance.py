"""Keeping a store whole: regenerate its files from the database, or the database from them.

``noetic rebuild`` renders :func:`rebuild`. Sync; it opens and closes the store itself, since a
restore may first have to move a damaged database aside.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from noetic.store.recovery import Restored


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
