"""Outcomes recorded against real tracked tasks; simulated agents with known calibration."""

import json
import random

import pytest
from typer.testing import CliRunner

from noetic.assessment import Assessment
from noetic.calibration import (
    Filters,
    calibration_report,
    check_drift_monitor,
    list_outcomes,
    outcome_points,
    query_bayesian_beliefs,
    record_outcome,
    run_guardian,
    undo,
)
from noetic.cli import app
from noetic.errors import NotFoundError, ValidationError, WorkflowError
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import uniform

DETECT_WITHIN = 60  # a 20-point overconfident agent is caught within this many outcomes


@pytest.fixture
def quiet_store(tmp_path):
    with Store(tmp_path / "sim", write_files=False) as s:
        yield s


def run_task(tracker, session_id, level):
    vectors = uniform(level, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)
    pre = tracker.preflight(
        session_id, f"task at {level:.2f}", Assessment.from_input("preflight", vectors)
    )
    tracker.postflight(session_id, Assessment.from_input("postflight", vectors))
    return pre.cascade.id, pre.decision.confidence


def simulate(store, n, bias, *, seed=7, ai_id="sim", profile="balanced"):
    """``n`` tasks whose success probability is the stated confidence minus ``bias``."""
    rng = random.Random(seed)
    tracker = Tracker(store, ProfileRegistry(store.home / "profiles"))
    session, _ = tracker.bootstrap(ai_id=ai_id, profile=profile)
    for _ in range(n):
        cascade, confidence = run_task(tracker, session.id, rng.uniform(0.3, 1.0))
        success = rng.random() < max(0.0, confidence - bias)
        record_outcome(store, cascade, score=1.0 if success else 0.0, source="test")
    return tracker


@pytest.mark.subprocess
def test_a_calibrated_agent_comes_out_calibrated(quiet_store):
    tracker = simulate(quiet_store, 150, bias=0.0)
    report = calibration_report(quiet_store, Filters(ai_id="sim"))
    assert report.tasks == 150
    assert report.metrics.ece.value < 0.12
    assert report.metrics.signed_bias.low < 0 < report.metrics.signed_bias.high
    overall = query_bayesian_beliefs(quiet_store, "sim").beliefs[0]
    assert overall.target == "overall" and not overall.credible
    assert run_guardian(quiet_store, tracker.registry, "balanced").proposal is None
    assert not check_drift_monitor(quiet_store, "sim").calibration_drift


@pytest.mark.subprocess
def test_a_20_point_overconfident_agent_is_caught(quiet_store):
    tracker = simulate(quiet_store, DETECT_WITHIN, bias=0.2)
    overall = query_bayesian_beliefs(quiet_store, "sim").beliefs[0]
    assert overall.credible and overall.direction == "overconfident"
    assert overall.mean == pytest.approx(0.2, abs=0.08)
    report = run_guardian(quiet_store, tracker.registry, "balanced")
    assert report.proposal.new < report.proposal.old == 1.0
    assert report.applied is None and "--apply" in report.note
    session, profile = tracker.bootstrap(ai_id="sim", profile="balanced")
    assert profile.tuning.confidence_weight == 1.0  # nothing changed without --apply

    applied = run_guardian(quiet_store, tracker.registry, "balanced", apply=True)
    assert applied.applied.new == applied.proposal.new
    _, adjusted = tracker.bootstrap(ai_id="sim", profile="balanced")
    assert adjusted.tuning.confidence_weight == applied.proposal.new
    assert tracker.profile_of(quiet_store.get_session(session.id)).tuning.confidence_weight == (
        applied.proposal.new
    )
    again = run_guardian(quiet_store, tracker.registry, "balanced")
    assert again.tasks_considered == 0  # only outcomes after the adjustment count

    undo(quiet_store, applied.applied.id)
    _, restored = tracker.bootstrap(ai_id="sim", profile="balanced")
    assert restored.tuning.confidence_weight == 1.0
    with pytest.raises(ValidationError, match="already undone"):
        undo(quiet_store, applied.applied.id)


@pytest.mark.subprocess
def test_drift_from_calibrated_to_overconfident_is_caught(quiet_store):
    simulate(quiet_store, 60, bias=0.0, seed=1)
    simulate(quiet_store, 40, bias=0.35, seed=2)
    report = check_drift_monitor(quiet_store, "sim", window=40)
    assert report.calibration_drift, report


@pytest.mark.subprocess
def test_newest_per_source_wins_and_all_are_kept(store):
    tracker = Tracker(store, ProfileRegistry())
    session, _ = tracker.bootstrap(ai_id="a")
    cascade, confidence = run_task(tracker, session.id, 0.8)
    record_outcome(store, cascade, score=0.0, source="test", evidence="red")
    record_outcome(store, cascade, score=1.0, source="test", evidence="green after fix")
    record_outcome(store, session.id, score=0.5, source="human")
    assert len(list_outcomes(store)) == 3
    (point,) = outcome_points(store, Filters())
    assert point.observed == pytest.approx(0.75)  # test 1.0 (newest) and human 0.5
    assert point.predicted_preflight == pytest.approx(confidence)
    assert point.vectors["know"] == 0.8


@pytest.mark.subprocess
def test_bad_outcomes_are_refused(store):
    tracker = Tracker(store, ProfileRegistry())
    session, _ = tracker.bootstrap()
    with pytest.raises(NotFoundError, match="no task"):
        record_outcome(store, session.id, score=1.0, source="test")
    bare = store.open_cascade(session.id, "no preflight", profile="balanced")
    with pytest.raises(WorkflowError, match="no PREFLIGHT"):
        record_outcome(store, bare.id, score=1.0, source="test")
    store.finish_cascade(bare.id, "abandoned", {})
    cascade, _ = run_task(tracker, session.id, 0.8)
    with pytest.raises(ValidationError, match="in \\[0, 1\\]"):
        record_outcome(store, cascade, score=1.5, source="test")
    with pytest.raises(ValidationError, match="unknown outcome source"):
        record_outcome(store, cascade, score=1.0, source="vibes")
    with pytest.raises(NotFoundError):
        record_outcome(store, "c_missing", score=1.0, source="test")


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_cli_records_outcomes_and_reports(tmp_path):
    runner = CliRunner()
    with Store(tmp_path / "s") as store:
        simulate(store, 60, bias=0.3, seed=3)  # clear enough for a held-out proof
    args = ["--store", str(tmp_path / "s")]
    runner.invoke(app, ["bootstrap", *args])
    runner.invoke(app, ["preflight", "t", "--vectors", json.dumps(uniform(0.9)), *args])
    done = runner.invoke(app, ["outcome", "--success", "--source", "test", "--json", *args])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["score"] == 1.0
    both = runner.invoke(app, ["outcome", "--success", "--failure", *args])
    assert both.exit_code == 1 and "exactly one" in both.stderr

    png = tmp_path / "reliability.png"
    report = runner.invoke(app, ["calibration", "report", "--plot", str(png), *args])
    assert report.exit_code == 0, report.output
    assert "Brier score" in report.stdout and png.read_bytes()[:4] == b"\x89PNG"
    body = json.loads(runner.invoke(app, ["calibration", "report", "--json", *args]).stdout)
    assert body["tasks"] == 61 and body["metrics"]["brier"]["value"] is not None

    beliefs = json.loads(runner.invoke(app, ["calibration", "beliefs", "--json", *args]).stdout)
    assert beliefs["beliefs"][0]["target"] == "overall"
    drift = runner.invoke(app, ["calibration", "drift", *args])
    assert drift.exit_code == 0 and "drift" in drift.stdout

    proposal = runner.invoke(app, ["calibration", "guardian", "--profile", "balanced", *args])
    assert "proposal" in proposal.stdout and "--apply" in proposal.stdout
    applied = json.loads(
        runner.invoke(
            app, ["calibration", "guardian", "--profile", "balanced", "--apply", "--json", *args]
        ).stdout
    )
    adjustment = applied["applied"]["id"]
    undone = runner.invoke(
        app, ["calibration", "guardian", "--profile", "balanced", "--undo", str(adjustment), *args]
    )
    assert undone.exit_code == 0 and "undone" in undone.stdout


@pytest.mark.subprocess
def test_few_outcomes_report_insufficient_data(store):
    tracker = Tracker(store, ProfileRegistry())
    session, _ = tracker.bootstrap(ai_id="few")
    for _ in range(3):
        cascade, _ = run_task(tracker, session.id, 0.8)
        record_outcome(store, cascade, score=1.0, source="check")
    report = calibration_report(store, Filters(ai_id="few"))
    assert report.metrics.ece.value is None
    assert "insufficient data: 3 outcomes" in report.metrics.ece.reason
    # Brier is defined from the first outcome: the metrics say what the phase table says.
    assert report.metrics.brier == report.by_phase["preflight"].brier
    assert report.metrics.brier.low is None and "no interval yet" in report.metrics.brier.reason
    assert "insufficient data" in check_drift_monitor(store, "few").reason


@pytest.mark.subprocess
def test_a_20_point_drift_is_caught_by_the_drift_monitor(quiet_store):
    """A seeded example; how often such a shift is caught is measured in the benchmark."""
    simulate(quiet_store, 100, bias=0.0, seed=11)
    simulate(quiet_store, 60, bias=0.2, seed=12)
    report = check_drift_monitor(quiet_store, "sim", window=60)
    assert report.calibration_drift, report
    assert report.bias_recent - report.bias_history == pytest.approx(0.2, abs=0.1)


@pytest.mark.subprocess
def test_a_profile_may_let_the_guardian_apply_by_itself(quiet_store, tmp_path):
    from noetic.calibration import adjustments

    path = tmp_path / "self_tuning.yaml"
    path.write_text("name: self_tuning\nguardian:\n  auto_apply: true\n")
    ProfileRegistry(quiet_store.home / "profiles").import_file(path)
    simulate(quiet_store, DETECT_WITHIN, bias=0.2, profile="self_tuning")
    applied = adjustments(quiet_store, profile="self_tuning")
    assert applied and applied[0].new < 1.0  # corrected while outcomes came in, no --apply
    simulate(quiet_store, DETECT_WITHIN, bias=0.2, profile="balanced", ai_id="other")
    assert adjustments(quiet_store, profile="balanced") == []  # the default never does
