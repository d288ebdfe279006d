"""``noetic migrate --merge`` as a property: whatever ids two members' stores share (integer ids
always, text ids when one's history began as a copy of the other's), every session of the
merged store reads back in the shared one as it was, the first member's as before, and merging
again adds nothing."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store
from noetic.store.copy import copy_store

T = Thresholds(confidence_threshold=0.7)


def _assess(store: Store, sid: str, cid: str | None, know: float) -> None:
    a = Assessment.from_input("check", {"know": know})
    store.add_assessment(sid, a, decide(a, T), cascade_id=cid)


def _sessions(store: Store) -> dict[tuple[str, str], list[tuple]]:
    """Each session, by (agent, created at), with its tasks and assessments as content."""
    found = {}
    for (sid,) in store.conn.execute("SELECT id FROM sessions").fetchall():
        doc = store.export_session(sid)
        tasks = sorted((c["task"], c["status"]) for c in doc["cascades"])
        rows = [(a["seq"], a["assessment"]["vectors"].get("know")) for a in doc["assessments"]]
        found[(doc["session"]["ai_id"], doc["session"]["created_at"])] = [tasks, rows]
    return found


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(
    tasks=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    renamed=st.lists(st.booleans(), min_size=3, max_size=3),
    later=st.lists(st.tuples(st.integers(0, 2), st.floats(0, 1)), max_size=4),
    copied=st.booleans(),
)
def test_a_merge_keeps_every_session_of_both_members(tasks, renamed, later, copied):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Store(root / "first", write_files=False) as one:
            for i, n in enumerate(tasks):
                s = one.create_session(ai_id=f"a{i}", profile="balanced")
                c = one.open_cascade(s.id, f"task {i}", profile="balanced")
                for k in range(n):
                    _assess(one, s.id, c.id, k / 4)
        if copied:  # the second's history began as the first's
            shutil.copytree(root / "first", root / "second")
        with Store(root / "second", write_files=False) as two:
            ids = [r[0] for r in two.conn.execute("SELECT id FROM sessions ORDER BY rowid")]
            for sid, rename in zip(ids, renamed, strict=False):
                if rename:
                    with two.transaction() as c:
                        c.execute("UPDATE sessions SET ai_id = ai_id || 'b' WHERE id = ?", (sid,))
            if not ids:
                ids = [two.create_session(ai_id="b", profile="balanced").id]
            for which, know in later:
                _assess(two, ids[which % len(ids)], None, know)
            second = _sessions(two)
        with Store(root / "first", write_files=False) as one, Store(root / "team") as team:
            first = _sessions(one)
            copy_store(one, team, target_name="team")
        with Store(root / "second", write_files=False) as two, Store(root / "team") as team:
            report = copy_store(two, team, target_name="team", merge=True)
            assert report.verified
            merged = _sessions(team)
            again = copy_store(two, team, target_name="team", merge=True)
            assert again.copied == 0
            assert _sessions(team) == merged
    # a session both hold as one row is one session, with what each added to it
    assert {k: merged[k] for k in first} == {k: second.get(k, v) for k, v in first.items()}
    assert {k: merged[k] for k in second} == second
    assert set(merged) == set(first) | set(second)
