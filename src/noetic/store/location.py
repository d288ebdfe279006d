"""Which store a command uses, and why: ``--store DIR``, ``$NOETIC_HOME``, the nearest ``.noetic``
up to the git repository's root (nothing above it), else ``.noetic`` in the working directory;
the database may instead be a PostgreSQL one named by a URL (``--store``, which this process and
its children then take as ``$NOETIC_STORE_URL``, ``$NOETIC_STORE_URL``, or ``[store] url``).
``docs/storage.md`` ("Which store") states the rules whole.

Finding a store creates nothing. Only commands that write create one (:func:`require_store`
is what the others call), so a mistyped command in the wrong directory leaves no trace.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from noetic.errors import InvalidValueError, NotFoundError
from noetic.named import NamedTuple

STORE_DIRNAME = ".noetic"
DB_NAME = "noetic.db"


class StoreLocation(NamedTuple):
    """Where the store is, which rule chose it, and every place that rule looked (a named
    tuple: finding the store is on every hook's path, which needs neither pydantic nor the
    dataclasses module)."""

    home: Path
    rule: str
    reason: str
    looked_in: list[Path]
    git_root: Path | None = None
    url: str | None = None

    @property
    def exists(self) -> bool:
        return self.url is not None or (self.home / DB_NAME).is_file()


_DATABASE_URL = re.compile(r"^(postgres(?:ql)?):/+")


def database_url(value: str | Path | None) -> str | None:
    """``value`` as a PostgreSQL URL if it is one (a ``Path`` made of one has lost a slash)."""
    if value is None:
        return None
    text = str(value)
    match = _DATABASE_URL.match(text)
    if match is None:
        return None
    return f"{match.group(1)}://{text[match.end() :]}"


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    netloc = f"{parts.username}:***@{host}" if parts.username else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def shown(location: StoreLocation) -> str:
    """The store as a person is told it: the PostgreSQL database (its password masked) where
    one is configured, else the directory."""
    return safe_url(location.url) if location.url else str(location.home)


def store_url(home: Path) -> str | None:
    """The PostgreSQL URL this store directory uses, if any: ``$NOETIC_STORE_URL``, else
    ``[store] url`` in ``home/config.toml``."""
    env = os.environ.get("NOETIC_STORE_URL")
    if env:
        return _checked(env, "$NOETIC_STORE_URL")
    from noetic.config import config_path, load

    url = load(home).store.url
    if url is None:
        return None
    return _checked(url, f"{config_path(home)}: [store] url")


def store_files(home: Path) -> bool:
    """Whether a PostgreSQL store should write its session files under ``home`` too
    (``files = true`` under ``[store]`` in ``home/config.toml``)."""
    from noetic.config import load

    return load(home).store.files


def store_hnsw(home: Path) -> bool:
    """Whether recall on a PostgreSQL store searches pgvector's HNSW index (``hnsw = true``
    under ``[store]``); off by default, see ``docs/teams.md`` for the figures."""
    from noetic.config import load

    return load(home).store.hnsw


def _checked(url: object, where: str) -> str:
    found = database_url(url) if isinstance(url, str) else None
    if found is None:
        shown_url = safe_url(url) if isinstance(url, str) else url
        raise InvalidValueError(
            f"{where} {shown_url!r} is not a PostgreSQL URL (postgresql://user@host:port/database)",
            field="store.url",
            value=shown_url,
        )
    return found


def locate_store(explicit: str | Path | None = None, *, cwd: Path | None = None) -> StoreLocation:
    """Apply the rules above; touches nothing on disk."""
    url = database_url(explicit)
    if url is not None:
        os.environ["NOETIC_STORE_URL"] = url  # for this process's stores and its children
        explicit = None
    location = _locate(explicit, cwd)
    found = store_url(location.home)
    return location._replace(url=found) if found else location


def locate_home(explicit: str | Path | None = None, *, cwd: Path | None = None) -> Path:
    """The store directory :func:`locate_store` finds, without reading its configuration."""
    return _locate(None if database_url(explicit) else explicit, cwd).home


def _locate(explicit: str | Path | None, cwd: Path | None) -> StoreLocation:
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
    root = find_git_root(here)
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
    from noetic.store.derived_files import refuse_lost_database

    refuse_lost_database(location.home, location.home / DB_NAME, "missing")
    looked = ", ".join(str(p) for p in location.looked_in)
    raise NotFoundError(
        f"no Noetic store here (looked in {looked}; {location.reason})",
        fix="start one with `noetic bootstrap`, or point at one with --store DIR or NOETIC_HOME",
    )


def find_git_root(here: Path) -> Path | None:
    """The nearest folder from ``here`` up that holds ``.git``; None when none does."""
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None
