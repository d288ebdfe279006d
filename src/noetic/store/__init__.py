"""Persistence: SQLite as the source of truth, with JSON session files and reflex logs."""

from __future__ import annotations

import os
from pathlib import Path

from noetic.store.sqlite import Store

STORE_DIRNAME = ".noetic"


def resolve_home(explicit: str | Path | None = None, *, cwd: Path | None = None) -> Path:
    """Where the store lives: ``explicit``, else ``$NOETIC_HOME``, else the nearest ``.noetic``
    directory above the working directory, else ``.noetic`` at the enclosing git repository's
    root, else ``.noetic`` in the working directory."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("NOETIC_HOME")
    if env:
        return Path(env).expanduser()
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / STORE_DIRNAME).is_dir():
            return folder / STORE_DIRNAME
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder / STORE_DIRNAME
    return here / STORE_DIRNAME


__all__ = ["STORE_DIRNAME", "Store", "resolve_home"]
