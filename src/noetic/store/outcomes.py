"""Verified outcomes of tasks, and the profile adjustments the guardian applied."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.errors import NotFoundError, ValidationError
from noetic.profiles import Profile, ProfileRegistry, with_overrides
from noetic.store.sqlite import Store, now

SOURCES = ("test", "human", "check")


class OutcomeRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    at: str
    session_id: str
    cascade_id: str
    ai_id: str
    profile: str
    domain: str | None
    source: str
    score: float
    evidence: str
    predicted_preflight: float | None
    predicted_check: float | None
    predicted_vectors: dict[str, float]


class Adjustment(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    at: str
    profile: str
    field: str
    old: float
    new: float
    reason: str
    evidence: dict[str, Any]
    undone_at: str | None


def add_outcome(store: Store, **row: Any) -> OutcomeRecord:
    if row["source"] not in SOURCES:
        raise ValidationError(
            f"unknown outcome source {row['source']!r}",
            field="source",
            value=row["source"],
            fix=f"one of: {', '.join(SOURCES)}",
        )
    data = {**row, "at": now(), "predicted_vectors": json.dumps(row["predicted_vectors"])}
    cols = ", ".join(data)
    with store.transaction() as conn:
        cur = conn.execute(
            f"INSERT INTO outcomes ({cols}) VALUES ({', '.join('?' for _ in data)})",
            list(data.values()),
        )
    assert cur.lastrowid is not None  # an INSERT always sets it
    return get_outcome(store, cur.lastrowid)


def get_outcome(store: Store, outcome_id: int) -> OutcomeRecord:
    row = store.conn.execute("SELECT * FROM outcomes WHERE id = ?", (outcome_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"unknown outcome {outcome_id}")
    return _outcome(row)


def outcomes(
    store: Store,
    *,
    ai_id: str | None = None,
    profile: str | None = None,
    domain: str | None = None,
    since: str | None = None,
) -> list[OutcomeRecord]:
    """Every outcome matching the filters, oldest first."""
    clauses, args = [], []
    for col, value in (("ai_id", ai_id), ("profile", profile), ("domain", domain)):
        if value is not None:
            clauses.append(f"{col} = ?")
            args.append(value)
    if since is not None:
        clauses.append("at >= ?")
        args.append(since)
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    rows = store.conn.execute(f"SELECT * FROM outcomes{where} ORDER BY at, id", args)
    return [_outcome(r) for r in rows]


def _outcome(row: Any) -> OutcomeRecord:
    return OutcomeRecord(**{**dict(row), "predicted_vectors": json.loads(row["predicted_vectors"])})


def add_adjustment(
    store: Store, *, profile: str, field: str, old: float, new: float, reason: str, evidence: dict
) -> Adjustment:
    with store.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO profile_adjustments (at, profile, field, old, new, reason, evidence) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (now(), profile, field, old, new, reason, json.dumps(evidence)),
        )
    return adjustments(store, adjustment_id=cur.lastrowid)[0]


def undo_adjustment(store: Store, adjustment_id: int) -> Adjustment:
    with store.transaction() as conn:
        changed = conn.execute(
            "UPDATE profile_adjustments SET undone_at = ? WHERE id = ? AND undone_at IS NULL",
            (now(), adjustment_id),
        ).rowcount
    found = adjustments(store, adjustment_id=adjustment_id)
    if not found:
        raise NotFoundError(f"unknown adjustment {adjustment_id}")
    if not changed:
        raise ValidationError(f"adjustment {adjustment_id} was already undone", field="id")
    return found[0]


def adjustments(
    store: Store, *, profile: str | None = None, adjustment_id: int | None = None
) -> list[Adjustment]:
    sql, args = "SELECT * FROM profile_adjustments", list[str | int]()
    if profile is not None:
        sql, args = sql + " WHERE profile = ?", [profile]
    if adjustment_id is not None:
        sql += (" AND" if args else " WHERE") + " id = ?"
        args.append(adjustment_id)
    rows = store.conn.execute(sql + " ORDER BY id", args)
    return [Adjustment(**{**dict(r), "evidence": json.loads(r["evidence"])}) for r in rows]


def active_overrides(store: Store, profile: str) -> dict[str, float]:
    """The newest applied, not undone, value per field for a profile."""
    active: dict[str, float] = {}
    for adj in adjustments(store, profile=profile):
        if adj.undone_at is None:
            active[adj.field] = adj.new
    return active


def effective_profile(store: Store, registry: ProfileRegistry, name: str) -> Profile:
    """The profile as sessions use it: its file plus the guardian's active adjustments."""
    return with_overrides(registry.get(name), active_overrides(store, name))
