"""Decisions on calibrated numbers over a real store, on SQLite and on PostgreSQL: the map an
agent's decisions use (its own, its model's, the store's), kept in the store and refitted only
when outcomes arrive, and the release gate at CHECK."""

import json

import pytest

from noetic.assessment import Assessment
from noetic.calibration import calibration_report, record_outcome
from noetic.calibration.outcomes import Filters
from noetic.calibration.recalibrating import Settings, kept, read_settings
from noetic.errors import InvalidValueError
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import uniform

VECTORS = uniform(0.8, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def tracker(request, tmp_path):
    if request.param == "postgresql":
        from noetic.store.postgres import PostgresStore

        store = PostgresStore(
            request.getfixturevalue("postgres_server").new_schema(), home=tmp_path
        )
    else:
        store = Store(tmp_path, write_files=False)
    with store:
        yield Tracker(store, ProfileRegistry(tmp_path / "profiles"), checkpoints=False)


def spread(successes, n):
    return [int((i + 1) * successes / n) > int(i * successes / n) for i in range(n)]


def tasks(tracker, ai_id, said, successes, n, *, model=None):
    session, _ = tracker.bootstrap(ai_id=ai_id, ai_model=model)
    for ok in spread(successes, n):
        env = {"vectors": VECTORS, "p_success": said}
        r = tracker.preflight(session.id, "t", Assessment.from_input("preflight", env))
        tracker.postflight(session.id, Assessment.from_input("postflight", {"vectors": VECTORS}))
        record_outcome(tracker.store, r.cascade.id, score=float(ok), source="test", refit=False)
    return session


def preflight(tracker, session, said=0.8):
    env = {"vectors": VECTORS, "p_success": said}
    return tracker.preflight(
        session.id, "next", Assessment.from_input("preflight", env), abandon_open=True
    ).decision


def test_the_map_is_kept_and_refitted_only_when_outcomes_arrive(tracker):
    session = tasks(tracker, "over", 0.8, 14, 40)
    first = preflight(tracker, session)
    assert first.calibrated is not None and first.calibrated.outcomes == 40
    row = tracker.store.conn.execute("SELECT outcomes, fitted_at FROM calibration_maps").fetchall()
    assert [r[0] for r in row] == [40]
    preflight(tracker, session)  # no outcome since: the kept map is read, not refitted
    again = tracker.store.conn.execute(
        "SELECT outcomes, fitted_at FROM calibration_maps"
    ).fetchall()
    assert [tuple(r) for r in again] == [tuple(r) for r in row]
    done = tracker.store.open_cascade_of(session.id)
    receipt = record_outcome(tracker.store, done.id, score=0.0, source="test")
    assert receipt.calibrated is not None and receipt.calibrated.outcomes == 41
    assert receipt.calibrated.value == pytest.approx(receipt.calibrated.value)
    assert receipt.calibrated.stated == 0.8 and receipt.calibrated.value < 0.5
    after = preflight(tracker, session)
    assert after.calibrated is not None and after.calibrated.outcomes == 41
    # the assessment keeps both: the statement as made and what it was taken to mean
    stored = tracker.store.assessments(session_id=session.id)[-1]
    assert stored.assessment.p_success == 0.8
    assert stored.decision.calibrated == after.calibrated


def test_a_map_kept_by_an_earlier_fit_is_refitted_at_the_next_decision(tracker):
    """An agent that always said 0.95 and succeeded a third of the time: the fit before Newton's
    steps were halved kept a map not in force (it never settled), stamped with the newest
    outcome. A decision after an upgrade refits it rather than reading it as current."""
    session = tasks(tracker, "certain", 0.95, 10, 30)
    fresh = preflight(tracker, session, said=0.95)
    assert fresh.calibrated is not None and fresh.calibrated.value < 0.5
    (scope, body) = tracker.store.conn.execute(
        "SELECT scope, body FROM calibration_maps"
    ).fetchone()
    old = json.loads(body)
    assert old.pop("fit") == 2
    # what the earlier fit kept: a map reading 0.95 as 1.0, not in force
    old["fitted"] = {**old["fitted"], "in_force": False}
    old["fitted"]["map"] = {"method": "logistic", "params": [9.0, 3.94]}
    tracker.store.write("UPDATE calibration_maps SET body = ? WHERE scope = ?",
                        (json.dumps(old), scope))  # fmt: skip
    again = preflight(tracker, session, said=0.95)
    assert again.calibrated == fresh.calibrated  # refitted, not read as kept
    (kept_body,) = tracker.store.conn.execute("SELECT body FROM calibration_maps").fetchone()
    assert json.loads(kept_body)["fit"] == 2


def test_a_new_agent_borrows_its_models_map_then_the_stores(tracker):
    tasks(tracker, "veteran", 0.8, 14, 40, model="model-x")
    newcomer, _ = tracker.bootstrap(ai_id="newcomer", ai_model="model-x")
    by_model = preflight(tracker, newcomer)
    assert by_model.calibrated is not None and by_model.calibrated.scope == "model"
    stranger, _ = tracker.bootstrap(ai_id="stranger", ai_model="model-y")
    by_store = preflight(tracker, stranger)
    assert by_store.calibrated is not None and by_store.calibrated.scope == "store"
    assert by_store.action.value == "INVESTIGATE"


def test_an_agent_with_its_own_steady_record_is_not_corrected_by_others(tracker):
    tasks(tracker, "over", 0.8, 14, 40, model="m")
    steady = tasks(tracker, "steady", 0.8, 32, 40, model="m")
    decision = preflight(tracker, steady)
    assert decision.calibrated is None and decision.action.value == "PROCEED"


def test_the_profile_can_turn_it_off(tracker, tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "as-stated.yaml").write_text(
        "name: as-stated\ncalibration:\n  decide_on: stated\n"
    )
    session = tasks(tracker, "over", 0.8, 14, 40)
    assert preflight(tracker, session).calibrated is not None
    tracker = Tracker(tracker.store, ProfileRegistry(tmp_path / "profiles"), checkpoints=False)
    mine, _ = tracker.bootstrap(ai_id="over", profile="as-stated")
    decision = preflight(tracker, mine)
    assert decision.calibrated is None and decision.action.value == "PROCEED"


def gated_history(tracker):
    """60 tasks stated 0.95 (one failed) and 60 stated 0.70 (45 succeeded), interleaved."""
    session, _ = tracker.bootstrap(ai_id="gated")
    high, low = spread(59, 60), spread(45, 60)
    for ok_high, ok_low in zip(high, low, strict=True):
        for said, ok in ((0.95, ok_high), (0.70, ok_low)):
            env = {"vectors": VECTORS, "p_success": said}
            r = tracker.preflight(session.id, "t", Assessment.from_input("preflight", env))
            tracker.postflight(
                session.id, Assessment.from_input("postflight", {"vectors": VECTORS})
            )
            record_outcome(tracker.store, r.cascade.id, score=float(ok), source="test", refit=False)
    return session


def check(tracker, session, said):
    env = {"vectors": VECTORS, "p_success": said}
    tracker.preflight(
        session.id, "next", Assessment.from_input("preflight", env), abandon_open=True
    )
    return tracker.check(session.id, Assessment.from_input("check", env)).decision


def test_the_release_gate_holds_a_check_the_threshold_alone_would_release(tracker):
    session = gated_history(tracker)
    assert check(tracker, session, 0.70).action.value == "PROCEED"  # no gate configured
    (tracker.store.home / "config.toml").write_text("[gate]\nmax_failure_rate = 0.10\n")
    held = check(tracker, session, 0.70)
    assert held.action.value == "INVESTIGATE"
    assert "the release gate's threshold" in held.reason and "at most 10%" in held.reason
    released = check(tracker, session, 0.95)
    assert released.action.value == "PROCEED"
    assert "1 of 60 past released tasks failed" in released.reason
    # the gate is kept beside the map: a second CHECK reads it
    body, _ = kept(tracker.store, "gated", None, Settings(max_failure_rate=0.10))
    assert body["gates"]["0.1|0.95"]["threshold"] == 0.71
    report = calibration_report(tracker.store, Filters())
    assert report.gate is not None and report.gate.configured
    assert report.gate.threshold == 0.71 and report.gate.released == 60
    assert report.gate.failures_among_released.value == pytest.approx(1 / 60)
    dumped = json.loads(report.model_dump_json())
    assert set(dumped["gate"]) >= {
        "max_failure_rate", "confidence", "threshold", "released", "held",
        "failures_among_released",
    }  # fmt: skip


def test_a_gate_the_outcomes_cannot_support_says_so_and_the_profile_decides(tracker):
    session = tasks(tracker, "few", 0.8, 30, 40)
    (tracker.store.home / "config.toml").write_text("[gate]\nmax_failure_rate = 0.01\n")
    decision = check(tracker, session, 0.8)
    assert "the release gate has no threshold" in decision.reason
    assert "the profile's threshold applies" in decision.reason
    assert decision.threshold == 0.65


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ('[calibration]\ndecide_on = "maybe"\n', "decide_on must be calibrated or stated"),
        ("[gate]\nmax_failure_rate = 1.5\n", "max_failure_rate must be a number between 0 and 1"),
        ("[gate]\nconfidence = true\n", "confidence must be a number between 0 and 1"),
        ('calibration = "on"\n', r"\[calibration\] must be a table"),
    ],
)
def test_bad_settings_are_named(tmp_path, config, says):
    assert read_settings(tmp_path) == Settings()
    (tmp_path / "config.toml").write_text(config)
    with pytest.raises(InvalidValueError, match=says) as caught:
        read_settings(tmp_path)
    assert str(tmp_path / "config.toml") in caught.value.message


def test_the_agent_sees_its_record_in_prompts_and_at_bootstrap_once_it_has_outcomes(tracker):
    from noetic.assessment import Phase
    from noetic.operations.workflow import bootstrap

    fresh = bootstrap(tracker, ai_id="over", remember=False)
    assert fresh.record is None
    assert "Your record" not in tracker.prompt(fresh.session.id, Phase.PREFLIGHT, "t")
    tasks(tracker, "over", 0.8, 14, 40)
    preflight(tracker, fresh.session)  # a decision keeps the map (an outcome's receipt does too)
    again = bootstrap(tracker, ai_id="over", remember=False)
    assert again.record is not None
    assert again.record.startswith(
        "Your record in Noetic: your last 40 PREFLIGHT statements averaged 0.80; 35% of those "
        "tasks succeeded; calibrated, your 0.80 has meant 0.3"
    )
    assert again.record in tracker.prompt(again.session.id, Phase.PREFLIGHT, "t")
    assert bootstrap(tracker, ai_id="someone else", remember=False).record is None


def test_decisions_on_a_kept_map_read_its_body_once_and_a_refit_is_read_as_fitted(
    tracker, monkeypatch
):
    """Each decision reads the kept row (outcomes from elsewhere refit it), but a body read
    before, or just fitted and kept by an outcome, is not read into a map again; the decisions
    are those the map read afresh gives."""
    from noetic.calibration import recalibrating
    from noetic.calibration.recalibration import Fitted

    session = tasks(tracker, "over", 0.8, 14, 40)
    expected = preflight(tracker, session)  # the refit, then the map read from its body
    reads = []
    real = Fitted.from_json

    def from_json(data):
        reads.append(data)
        return real(data)

    monkeypatch.setattr(Fitted, "from_json", from_json)
    assert preflight(tracker, session) == expected  # the same body: read once before
    done = tracker.store.open_cascade_of(session.id)
    receipt = record_outcome(tracker.store, done.id, score=0.0, source="test")
    after = preflight(tracker, session)
    assert reads == []
    assert after.calibrated == receipt.calibrated and after.calibrated.outcomes == 41
    recalibrating._PARSED.clear()  # read afresh: the same decision
    assert preflight(tracker, session) == after
    assert len(reads) == 1


def test_an_outcome_records_the_statements_without_building_the_assessments_again(
    tracker, monkeypatch
):
    """The outcome keeps what the task's PREFLIGHT and last CHECK predicted, read as columns
    (the records built from them are not needed); the same values as the records hold."""
    from noetic.store import base

    session, _ = tracker.bootstrap(ai_id="a")
    env = {"vectors": VECTORS, "p_success": 0.7}
    r = tracker.preflight(session.id, "t", Assessment.from_input("preflight", env))
    tracker.check(session.id, Assessment.from_input("check", {"vectors": {"know": 0.6}}))
    tracker.postflight(session.id, Assessment.from_input("postflight", {"vectors": VECTORS}))
    history = tracker.store.assessments(cascade_id=r.cascade.id)

    def refused(row):
        raise AssertionError("an assessment record was built")

    monkeypatch.setattr(base, "assessment_record", refused)
    receipt = record_outcome(tracker.store, r.cascade.id, score=1.0, source="test")
    assert receipt.predicted_preflight == history[0].decision.confidence
    assert receipt.predicted_check == history[1].decision.confidence
    assert receipt.predicted_vectors == history[0].assessment.vectors
    assert list(receipt.predicted_vectors) == list(history[0].assessment.vectors)
    assert receipt.stated_preflight == 0.7 and receipt.stated == "p_success"
