"""An assessment's p_success and review kind (migration m015) survive the store, the session
file, the reflex log and an export/import."""

import json
import sqlite3

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store
from noetic.store import migrations as m
from noetic.store.derived_files import reflex_path

from ..conftest import uniform

T = Thresholds(confidence_threshold=0.7)


def test_p_success_and_review_round_trip_everywhere(store, open_store, tmp_path):
    s = store.create_session(ai_id="a", profile="balanced")
    c = store.open_cascade(s.id, "task", profile="balanced")
    pre = Assessment.from_input("preflight", {"vectors": uniform(0.8), "p_success": 0.65})
    post = Assessment.from_input(
        "postflight", {"vectors": uniform(0.8), "p_success": 0.4, "review": "adversarial"}
    )
    store.add_assessment(s.id, pre, decide(pre, T), cascade_id=c.id)
    rec = store.add_assessment(s.id, post, decide(post, T), cascade_id=c.id)
    got = [a.assessment for a in store.assessments(cascade_id=c.id)]
    assert [(a.p_success, a.review) for a in got] == [(0.65, None), (0.4, "adversarial")]
    if store.queues_files:  # a PostgreSQL store writes no session files
        store.flush_files()
        frames = reflex_path(store.home, "a", rec.created_at, s.id).read_text().splitlines()
        assert [json.loads(f)["p_success"] for f in frames] == [0.65, 0.4]
    doc = store.export_session(s.id)
    with open_store(tmp_path / "other") as other:
        other.import_session(doc)
        assert other.export_session(s.id) == doc
        again = other.assessments(cascade_id=c.id)[1].assessment
        assert again.p_success == 0.4 and again.review == "adversarial"


def test_a_store_from_before_m015_reads_its_assessments_as_unstated(tmp_path):
    home = tmp_path / "old"
    home.mkdir()
    conn = sqlite3.connect(home / "noetic.db")
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for fn in m.MIGRATIONS:
        if fn.__name__ < "m015":
            fn(conn)
            conn.execute("INSERT INTO schema_migrations VALUES (?, 'then')", (fn.__name__,))
    conn.commit()
    conn.close()
    with Store(home, write_files=False) as old:
        s = old.create_session(ai_id="a", profile="balanced")
        a = Assessment.from_input("preflight", uniform(0.8))
        old.add_assessment(s.id, a, decide(a, T))
        assert old.assessments(session_id=s.id)[0].assessment.p_success is None
        cols = {r[1] for r in old.conn.execute("PRAGMA table_info(assessments)")}
        assert {"p_success", "review"} <= cols
