"""Calibration per phase over real tracked tasks: what was stated at each phase, which number it
was, and what a few outcomes already say."""

import json

import pytest

from noetic.assessment import Assessment
from noetic.calibration import PHASES, Filters, calibration_report, phase_points, record_outcome
from noetic.calibration.rates import wilson
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import uniform

VECTORS = uniform(0.7, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)


@pytest.fixture
def tracker(tmp_path):
    with Store(tmp_path / "phases", write_files=False) as store:
        yield Tracker(store, ProfileRegistry(store.home / "profiles"), checkpoints=False)


def task(tracker, sid, *, pre=None, check=None, post=None, review=None, success=True):
    """One task: PREFLIGHT, optionally a CHECK, a POSTFLIGHT, then its outcome."""

    def envelope(p):
        return {"vectors": VECTORS, "note": "n", **({"p_success": p} if p is not None else {})}

    opened = tracker.preflight(sid, "a task", Assessment.from_input("preflight", envelope(pre)))
    if check is not None:
        tracker.check(sid, Assessment.from_input("check", envelope(check)))
    post_input = envelope(post)
    if review is not None:
        post_input["review"] = review
    tracker.postflight(sid, Assessment.from_input("postflight", post_input))
    record_outcome(tracker.store, opened.cascade.id, score=1.0 if success else 0.0, source="test")
    return opened


def test_one_outcome_already_gives_a_summary_and_says_what_more_would_add(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    task(tracker, session.id, pre=0.8, post=0.9, success=True)
    report = calibration_report(tracker.store, Filters())
    s = report.summary
    assert (s.n, s.successes, s.mean_stated, s.stated) == (1, 1.0, 0.8, "p_success")
    assert s.success_rate.value == 1.0 and s.success_rate.low == pytest.approx(0.2065, abs=1e-4)
    assert s.gap.value == pytest.approx(-0.2)
    assert s.gap.high == pytest.approx(0.8 - 0.2065, abs=1e-4) and not s.significant
    assert any("19 more" in line for line in s.more)
    assert any("AUROC" in line and "1 and 0" in line for line in s.more)
    assert report.metrics.ece.value is None  # the 20-outcome metrics still say so
    assert "insufficient data" in report.metrics.ece.reason
    assert report.metrics.brier == report.by_phase["preflight"].brier  # one Brier, not two
    assert report.stated == "p_success"


def test_each_phase_is_scored_on_what_was_stated_then(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    task(tracker, session.id, pre=0.6, check=0.7, post=0.9, success=False)
    task(tracker, session.id, pre=0.8, post=0.95, success=True)
    task(tracker, session.id, pre=0.4, check=0.5, post=0.9, review="adversarial", success=False)
    phases = calibration_report(tracker.store, Filters()).by_phase
    assert list(phases) == list(PHASES)
    assert phases["preflight"].n == 3 and phases["preflight"].mean_stated == pytest.approx(0.6)
    assert phases["check"].n == 2 and phases["check"].mean_stated == pytest.approx(0.6)
    assert phases["postflight"].n == 2 and phases["postflight"].mean_stated == pytest.approx(0.925)
    assert phases["adversarial_review"].n == 1
    assert phases["adversarial_review"].mean_stated == pytest.approx(0.9)
    post = phases["postflight"]
    assert post.success_rate == wilson(1, 2)
    assert post.gap.value == pytest.approx(0.925 - 0.5)
    assert post.brier.value == pytest.approx((0.9**2 + 0.05**2) / 2)
    assert post.brier.low is None and "5 needed" in post.brier.reason
    assert post.auroc.value == 1.0 and "no interval yet" in post.auroc.reason
    assert phases["preflight"].decomposition.uncertainty == pytest.approx(2 / 9)


def test_the_report_says_which_number_it_scored(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    task(tracker, session.id, pre=None, success=True)
    only_vectors = calibration_report(tracker.store, Filters())
    assert only_vectors.stated == "confidence"
    confidence = phase_points(tracker.store, Filters())[0].stated
    assert only_vectors.summary.mean_stated == confidence
    task(tracker, session.id, pre=0.3, success=False)
    mixed = calibration_report(tracker.store, Filters())
    assert mixed.stated == "mixed"
    assert mixed.summary.stated_from == {"p_success": 1, "confidence": 1}


def test_phases_are_reported_per_agent_model_engine_and_profile(tracker):
    a, _ = tracker.bootstrap(ai_id="alice", ai_model="m-large", profile="balanced")
    b, _ = tracker.bootstrap(ai_id="bob", ai_model="m-small", profile="exploratory")
    task(tracker, a.id, pre=0.9, success=True)
    task(tracker, b.id, pre=0.9, success=False)
    task(tracker, b.id, pre=0.7, success=False)
    for by, values in (
        ("agent", ["alice", "bob"]),
        ("model", ["m-large", "m-small"]),
        ("profile", ["balanced", "exploratory"]),
        ("engine", ["workflow"]),
        ("persona", ["(none)"]),
    ):
        report = calibration_report(tracker.store, Filters(), by=by)
        assert [g.value for g in report.groups] == values, by
    bob = calibration_report(tracker.store, Filters(), by="agent").groups[1]
    assert bob.tasks == 2 and bob.by_phase["preflight"].gap.value == pytest.approx(0.8)
    assert calibration_report(tracker.store, Filters()).groups == []


def test_standard_and_adversarial_reviews_of_one_agent_are_compared(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    for i in range(6):
        task(tracker, session.id, pre=0.7, post=0.9, success=i < 2)
        task(tracker, session.id, pre=0.7, post=0.6, review="adversarial", success=i < 2)
    other, _ = tracker.bootstrap(ai_id="only-standard")
    task(tracker, other.id, pre=0.7, post=0.9, success=True)
    (comparison,) = calibration_report(tracker.store, Filters()).reviews
    assert comparison.agent == "a"
    assert comparison.standard.gap.value == pytest.approx(0.9 - 1 / 3)
    assert comparison.adversarial.gap.value == pytest.approx(0.6 - 1 / 3)
    assert comparison.difference.value == pytest.approx(0.3)
    assert comparison.difference.low < 0.3 < comparison.difference.high


def test_the_json_shape_is_stable(tracker):
    report = calibration_report(tracker.store, Filters())
    doc = json.loads(report.model_dump_json())
    assert set(doc["by_phase"]) == set(PHASES)
    assert doc["by_phase"]["check"]["gap"] == {"value": None, "low": None, "high": None}
    assert set(doc["summary"]) >= {"n", "successes", "success_rate", "mean_stated", "gap", "more"}
    assert doc["summary"]["n"] == 0 and "no outcomes yet" in doc["summary"]["more"][0]
    session, _ = tracker.bootstrap(ai_id="a")
    task(tracker, session.id, pre=0.8, success=False)
    doc = json.loads(calibration_report(tracker.store, Filters()).model_dump_json())
    gap = doc["by_phase"]["preflight"]["gap"]
    assert set(gap) == {"value", "low", "high"} and gap["value"] == pytest.approx(0.8)
    parts = doc["by_phase"]["preflight"]["decomposition"]
    assert set(parts) >= {"reliability", "resolution", "uncertainty", "base_rate_brier"}


def test_the_command_reports_per_phase_and_per_group_and_refuses_unknown_ones(tracker):
    from typer.testing import CliRunner

    from noetic.cli import app

    runner = CliRunner()
    session, _ = tracker.bootstrap(ai_id="a")
    task(tracker, session.id, pre=0.8, post=0.9, success=False)
    task(tracker, session.id, pre=0.8, post=0.5, review="adversarial", success=False)
    tracker.store.close()
    args = ["--store", str(tracker.store.home)]
    human = runner.invoke(app, ["calibration", "report", "--by", "agent", *args])
    assert human.exit_code == 0, human.output
    assert "summary (preflight, stated as p_success): 2 tasks, 0 successes" in human.stdout
    assert "adversarial_review" in human.stdout and "agent a (2 tasks)" in human.stdout
    assert "a: standard review gap +0.90" in human.stdout
    body = runner.invoke(
        app, ["calibration", "report", "--at", "postflight", "--by", "profile", "--json", *args]
    )
    doc = json.loads(body.stdout)
    assert doc["prediction"] == "postflight" and doc["summary"]["mean_stated"] == 0.9
    assert doc["by"] == "profile" and [g["value"] for g in doc["groups"]] == ["balanced"]
    for option, value, says in (("--at", "act", "--at must be one of"), ("--by", "x", "--by")):
        refused = runner.invoke(app, ["calibration", "report", option, value, *args])
        assert refused.exit_code == 1 and says in refused.stderr


def test_outcomes_written_without_assessments_fall_back_to_what_was_kept_beside_them(tracker):
    store = tracker.store
    with store.transaction() as c:
        c.execute(
            "INSERT INTO sessions (id, ai_id, profile, created_at) VALUES ('s_x', 'x', "
            "'balanced', '2026-01-01')"
        )
        c.execute(
            "INSERT INTO cascades (id, session_id, task, status, profile, created_at) VALUES "
            "('c_x', 's_x', 't', 'completed', 'balanced', '2026-01-01')"
        )
        c.execute(
            "INSERT INTO outcomes (at, session_id, cascade_id, ai_id, profile, source, score, "
            "predicted_preflight, predicted_check) VALUES ('2026-01-02', 's_x', 'c_x', 'x', "
            "'balanced', 'test', 1.0, 0.7, 0.6)"
        )
    phases = calibration_report(store, Filters()).by_phase
    assert (phases["preflight"].n, phases["preflight"].mean_stated) == (1, 0.7)
    assert (phases["check"].n, phases["check"].stated) == (1, "confidence")
    assert phases["postflight"].n == 0


def test_beliefs_judge_the_vectors_and_drift_and_the_guardian_say_what_they_judged(tracker):
    """With no outcomes, drift and the guardian judged nothing yet (``tests/calibration/
    test_stated.py`` has them judging the report's statements)."""
    from noetic.calibration import check_drift_monitor, query_bayesian_beliefs, run_guardian

    assert query_bayesian_beliefs(tracker.store).stated == "confidence"
    for judged in (
        check_drift_monitor(tracker.store),
        run_guardian(tracker.store, tracker.registry, "balanced"),
    ):
        assert judged.stated is None
        assert judged.stated_from == {"p_success": 0, "confidence": 0}


def test_no_zero_width_interval_where_the_data_cannot_support_one(tracker):
    """Six tasks stated 1.0 that all succeeded: Brier 0 has no bootstrap interval ([0, 0]
    claimed certainty); ten tasks ranked perfectly: AUROC 1 keeps an interval below 1."""
    session, _ = tracker.bootstrap(ai_id="sure")
    for _ in range(6):
        task(tracker, session.id, pre=1.0, post=1.0, success=True)
    brier = calibration_report(tracker.store, Filters(ai_id="sure")).summary.brier
    assert brier.value == 0.0 and brier.low is None and brier.high is None
    assert "all 6 outcomes were successes" in brier.reason
    session, _ = tracker.bootstrap(ai_id="ranked")
    for i in range(10):
        task(tracker, session.id, pre=0.5 + i / 20, post=0.5, success=i >= 5)
    auroc = calibration_report(tracker.store, Filters(ai_id="ranked")).summary.auroc
    assert auroc.value == 1.0 and auroc.high == 1.0
    assert auroc.low is not None and auroc.low < 0.8


def test_a_phase_no_task_reached_says_so_beside_the_outcomes_it_has(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    for _ in range(3):
        task(tracker, session.id, pre=0.8, post=0.9, success=True)
    report = calibration_report(tracker.store, Filters(), prediction="adversarial_review")
    assert report.summary.n == 0
    assert report.summary.more[0].startswith("3 outcomes recorded, but no task with one has")
    assert "no outcomes yet" not in " ".join(report.summary.more)


def test_an_assessment_written_after_the_outcome_is_not_scored(tracker):
    """A POSTFLIGHT written once the tests had passed reports the result; it predicts nothing."""
    session, _ = tracker.bootstrap(ai_id="a")
    opened = tracker.preflight(
        session.id, "t", Assessment.from_input("preflight", {"vectors": VECTORS, "p_success": 0.6})
    )
    record_outcome(tracker.store, opened.cascade.id, score=1.0, source="test")
    tracker.postflight(
        session.id,
        Assessment.from_input("postflight", {"vectors": VECTORS, "p_success": 1.0}),
    )
    report = calibration_report(tracker.store, Filters())
    assert report.by_phase["preflight"].n == 1
    assert report.by_phase["postflight"].n == 0


def test_what_more_outcomes_would_give_is_the_intervals_real_width(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    for i in range(5):
        task(tracker, session.id, pre=0.8, post=0.9, success=i < 4)
    s = calibration_report(tracker.store, Filters()).summary
    now = s.gap.high - s.gap.low
    later = wilson(0.8 * 20, 20)
    line = next(m for m in s.more if m.startswith("the gap's interval"))
    assert f"is {now:.2f} wide from 5 outcomes" in line
    assert line.endswith(f"about {later.high - later.low:.2f}")


def test_one_outcome_is_said_in_the_singular(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    task(tracker, session.id, pre=0.8, post=0.9, success=True)
    report = calibration_report(tracker.store, Filters())
    assert report.metrics.ece.reason == "insufficient data: 1 outcome, at least 20 needed"
