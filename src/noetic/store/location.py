"""Which store a command uses, and why.

The rules, first match wins:

1. ``--store DIR``;
2. ``$NOETIC_HOME``;
3. inside a git repository: the nearest ``.noetic`` directory from the working directory up to
   the repository's root, else ``.noetic`` at that root. Nothing above the root is looked at, so
   a stray ``~/.noetic`` or ``/tmp/.noetic`` never captures the projects below it;
4. outside a repository: ``.noetic`` in the working directory.

Finding a store creates nothing. Only commands that write create one (:func:`require_store`
is what the others call), so a mistyped command in the wrong directory leaves no trace.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from noetic.errors import NotFoundError

STORE_DIRNAME = ".noetic"
DB_NAME = "noetic.db"


class StoreLocation(BaseModel):
    """Where the store is, which rule chose it, and every place that rule looked."""

    model_config = ConfigDict(frozen=True)

    home: Path
    rule: str
    reason: str
    looked_in: list[Path]
    git_root: Path | None = None

    @property
    def exists(self) -> bool:
        return (self.home / DB_NAME).is_file()


def locate_store(explicit: str | Path | None = None, *, cwd: Path | None = None) -> StoreLocation:
    """Apply the rules above; touches nothing on disk."""
    if explicit:
        home = Path(explicit).expanduser()
        return StoreLocation(
            home=home, rule="--store", reason="given with --store", looked_in=[home]
        )
    env = os.environ.get("NOETIC_HOME")
    if env:
        home = Path(env).expanduser()
        return StoreLocation(
            home=home, rule="NOETIC_HOME", reason="set by $NOETIC_HOME", looked_in=[home]
        )
    here = (cwd or Path.cwd()).resolve()
    root = _git_root(here)
    if root is None:
        home = here / STORE_DIRNAME
        return StoreLocation(
            home=home,
            rule="cwd",
            reason="the working directory (not inside a git repository)",
            looked_in=[home],
        )
    path = [here, *here.parents]
    candidates = [folder / STORE_DIRNAME for folder in path[: path.index(root) + 1]]
    for candidate in candidates:
        if candidate.is_dir():
            return StoreLocation(
                home=candidate,
                rule="repository",
                reason=f"the nearest .noetic inside the git repository {root}",
                looked_in=candidates,
                git_root=root,
            )
    return StoreLocation(
        home=root / STORE_DIRNAME,
        rule="repository-root",
        reason=f"the root of the git repository {root} (no .noetic there yet)",
        looked_in=candidates,
        git_root=root,
    )


def require_store(location: StoreLocation) -> Path:
    """The store's home if a store is there; otherwise a :class:`NotFoundError` that says where
    it looked and how to start one. Creates nothing."""
    if location.exists:
        return location.home
    from noetic.store.files import refuse_lost_database

    refuse_lost_database(location.home, location.home / DB_NAME, "missing")
    looked = ", ".join(str(p) for p in location.looked_in)
    raise NotFoundError(
        f"no Noetic store here (looked in {looked}; {location.reason})",
        fix="start one with `noetic bootstrap`, or point at one with --store DIR or NOETIC_HOME",
    )


def _git_root(here: Path) -> Path | None:
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None
