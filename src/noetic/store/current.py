"""Each agent's current session in a store: what its commands act on when no session is named.

One small JSON file per agent (``current/<ai_id>-<hash>.json``, holding the ``ai_id`` and the
``session_id``), replaced atomically by that agent's ``bootstrap``, so agents with different ids
never touch each other's. An agent that names no id is :data:`DEFAULT_AI_ID`, which still reads
the one ``current_session`` file of older stores when it has none (``docs/storage.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

from noetic.cached import sha256
from noetic.errors import StoreError
from noetic.store.derived_files import atomic_write_json, safe_name

DEFAULT_AI_ID = "agent"
_LEGACY = "current_session"


def current_session_path(home: Path, ai_id: str) -> Path:
    # The hash keeps ids apart that ``safe_name`` would make equal ("a b" and "a_b").
    digest = sha256(ai_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return home / "current" / f"{safe_name(ai_id)[:64]}-{digest}.json"


def read_current_session(home: Path, ai_id: str = DEFAULT_AI_ID) -> str | None:
    """The session ``ai_id`` last bootstrapped in this store, if any."""
    path = current_session_path(home, ai_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _legacy(home) if ai_id == DEFAULT_AI_ID else None
    except (OSError, ValueError) as exc:
        raise StoreError(
            f"cannot read the current session of agent {ai_id!r} from {path}: {exc}",
            fix=f"run `noetic bootstrap --ai-id {ai_id}` again, or pass --session ID",
        ) from None
    if not isinstance(data, dict) or data.get("ai_id") != ai_id:
        raise StoreError(
            f"{path} does not hold agent {ai_id!r}'s current session",
            fix=f"run `noetic bootstrap --ai-id {ai_id}` again, or pass --session ID",
        )
    session_id = data.get("session_id")
    return session_id if isinstance(session_id, str) and session_id else None


def write_current_session(home: Path, session_id: str, ai_id: str = DEFAULT_AI_ID) -> None:
    """Make ``session_id`` the current session of ``ai_id`` (and of nobody else)."""
    atomic_write_json(current_session_path(home, ai_id), {"ai_id": ai_id, "session_id": session_id})


def agents_with_current_sessions(home: Path) -> dict[str, str]:
    """Every agent that has a current session here: ``ai_id`` → session id."""
    found: dict[str, str] = {}
    for path in sorted((home / "current").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("ai_id"), str):
            found[data["ai_id"]] = str(data.get("session_id"))
    legacy = _legacy(home)
    if legacy is not None:
        found.setdefault(DEFAULT_AI_ID, legacy)
    return found


def _legacy(home: Path) -> str | None:
    try:
        value = (home / _LEGACY).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return value or None
