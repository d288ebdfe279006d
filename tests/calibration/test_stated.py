"""The guardian (its held-out proof included), the drift monitor and the `noetic outcome`
receipt judge what the per-phase report judges: each task's PREFLIGHT ``p_success`` where the
agent gave one, its vectors' confidence otherwise, and each says which."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.assessment import Assessment
from noetic.calibration import (
    Filters,
    calibration_report,
    check_drift_monitor,
    phase_points,
    query_bayesian_beliefs,
    record_outcome,
    run_guardian,
    update_belief,
)
from noetic.calibration.guardian import held_out_check
from noetic.calibration.per_phase import stated_basis, stated_value
from noetic.cli import app
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import uniform

VECTORS = uniform(0.7, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)
runner = CliRunner()


@pytest.fixture
def tracker(tmp_path):
    with Store(tmp_path / "stated", write_files=False) as store:
        yield Tracker(store, ProfileRegistry(store.home / "profiles"), checkpoints=False)


def task(tracker, sid, *, pre=None, success=True):
    """One task: a PREFLIGHT (with ``p_success`` when given), a POSTFLIGHT, its outcome."""
    envelope = {"vectors": VECTORS, "note": "n", **({"p_success": pre} if pre is not None else {})}
    opened = tracker.preflight(sid, "a task", Assessment.from_input("preflight", envelope))
    tracker.postflight(sid, Assessment.from_input("postflight", {"vectors": VECTORS, "note": "n"}))
    return record_outcome(
        tracker.store, opened.cascade.id, score=1.0 if success else 0.0, source="test"
    )


def preflight(store):
    """The per-phase report's PREFLIGHT points: what the guardian and the drift monitor judge."""
    return [p for p in phase_points(store, Filters()) if p.phase == "preflight"]


def brier(p, y):
    return sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / len(p)


# The rule and the held-out proof, as maths.


@given(st.lists(st.sampled_from(["p_success", "confidence"]), max_size=40))
def test_what_was_stated_is_named_and_counted(bases):
    stated, counts = stated_basis(bases)
    assert counts == {
        "p_success": bases.count("p_success"),
        "confidence": bases.count("confidence"),
    }
    expected = None if not bases else "mixed" if len(set(bases)) == 2 else bases[0]
    assert stated == expected


@given(st.none() | st.floats(0, 1), st.floats(0, 1))
def test_p_success_is_used_where_given_and_the_confidence_otherwise(p_success, confidence):
    value, basis = stated_value(p_success, confidence)
    if p_success is None:
        assert (value, basis) == (confidence, "confidence")
    else:
        assert (value, basis) == (p_success, "p_success")


@st.composite
def records(draw):
    """Outcomes oldest first: what was stated, what happened, whether the weight scales it."""
    n = draw(st.integers(15, 60))
    bias = draw(st.floats(-0.3, 0.5))
    stated = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    chance = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    observed = [1.0 if c < p - bias else 0.0 for p, c in zip(stated, chance, strict=True)]
    scaled = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return stated, observed, scaled, draw(st.floats(0.5, 1.5))


@given(records())
def test_the_held_out_proof_scores_what_the_correction_would_really_do(record):
    """The weight scales a stated confidence and leaves a stated p_success as it is; a
    correction is proposed only if that lowers the held-out Brier score."""
    stated, observed, scaled, weight = record
    proposal, check, why = held_out_check("p", weight, stated, observed, scaled, "mixed")
    if check is None:
        assert proposal is None and "needed" in why
        return
    fit = check.fitted_on
    late_p, late_y, late_s = stated[fit:], observed[fit:], scaled[fit:]
    assert check.brier_before == pytest.approx(brier(late_p, late_y), abs=1e-6)
    if check.weight is None:
        assert proposal is None and check.brier_after is None
        return
    scale = check.weight / weight
    corrected = [min(1.0, p * scale) if s else p for p, s in zip(late_p, late_s, strict=True)]
    assert check.brier_after == pytest.approx(brier(corrected, late_y), abs=1e-6)
    assert (proposal is not None) == (check.helps and any(late_s))
    if not any(late_s):
        assert check.brier_after == check.brier_before
        assert "confidence_weight does not scale" in why and "nothing is proposed" in why
    if proposal is not None:
        assert proposal.new == check.weight and "stated (mixed)" in proposal.reason
    everything = held_out_check("p", weight, stated, observed, [True] * len(stated))
    assert everything == held_out_check("p", weight, stated, observed)


def test_scaled_must_match_the_outcomes():
    with pytest.raises(ValueError, match="equal-length"):
        held_out_check("p", 1.0, [0.5] * 20, [1.0] * 20, [True] * 19)


# Over a real store: the same statements as the report.


def test_the_guardian_judges_the_reports_preflight_statements_on_mixed_data(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    for i in range(8):  # an agent that stated no probability at first
        task(tracker, session.id, success=i % 2 == 0)
    for i in range(12):  # then did: 0.9, right a third of the time
        task(tracker, session.id, pre=0.9, success=i % 3 == 0)
    report = calibration_report(tracker.store, Filters()).by_phase["preflight"]
    guardian = run_guardian(tracker.store, tracker.registry, "balanced")
    assert guardian.stated == report.stated == "mixed"
    assert guardian.stated_from == report.stated_from == {"p_success": 12, "confidence": 8}
    points = preflight(tracker.store)
    assert guardian.belief == update_belief("overall", [p.stated - p.observed for p in points])
    fit = guardian.held_out.fitted_on
    assert guardian.held_out.brier_before == pytest.approx(
        brier([p.stated for p in points[fit:]], [p.observed for p in points[fit:]]), abs=1e-6
    )
    # the beliefs judge the vectors by their nature: the overall one is the vectors' confidence
    beliefs = query_bayesian_beliefs(tracker.store)
    assert beliefs.stated == "confidence" and beliefs.beliefs[0] != guardian.belief


def test_a_bias_in_p_success_alone_is_shown_but_no_profile_correction_is_proposed(tracker):
    """confidence_weight cannot move a stated probability: proposing it would leave the bias
    where it is, and propose it again after every correction."""
    session, _ = tracker.bootstrap(ai_id="a")
    for i in range(30):
        task(tracker, session.id, pre=0.95, success=i % 3 == 0)
    guardian = run_guardian(tracker.store, tracker.registry, "balanced", apply=True)
    assert guardian.stated == "p_success" and guardian.stated_from["p_success"] == 30
    assert guardian.belief.credible and guardian.belief.direction == "overconfident"
    assert guardian.belief.mean > 0.3  # 0.95 against a third: the p_success bias, not the vectors'
    assert guardian.proposal is None and guardian.applied is None
    assert guardian.held_out.brier_after == guardian.held_out.brier_before
    assert "confidence_weight does not scale" in guardian.note


def test_drift_judges_the_reports_preflight_statements(tracker):
    session, _ = tracker.bootstrap(ai_id="a")
    for i in range(6):
        task(tracker, session.id, success=i % 2 == 0)
    for i in range(5):
        task(tracker, session.id, pre=0.9, success=i == 0)
    report = calibration_report(tracker.store, Filters()).by_phase["preflight"]
    drift = check_drift_monitor(tracker.store, window=5)
    assert drift.stated == report.stated == "mixed"
    assert drift.stated_from == report.stated_from == {"p_success": 5, "confidence": 6}
    points = preflight(tracker.store)
    recent, history = points[-5:], points[:-5]
    assert drift.bias_recent == pytest.approx(
        sum(p.stated - p.observed for p in recent) / 5, abs=1e-6
    )
    assert drift.bias_recent == pytest.approx(0.9 - 0.2, abs=1e-6)
    assert drift.bias_history == pytest.approx(
        sum(p.stated - p.observed for p in history) / 6, abs=1e-6
    )
    assert drift.confidence_rise == pytest.approx(
        0.9 - sum(p.stated for p in history) / 6, abs=1e-6
    )


# Through the command line.


def test_the_outcome_receipt_quotes_the_p_success_stated_or_says_it_is_the_confidence(tmp_path):
    args = ["--store", str(tmp_path / "s")]
    assert runner.invoke(app, ["bootstrap", *args]).exit_code == 0
    stated = json.dumps({"vectors": VECTORS, "p_success": 0.8, "note": "n"})
    assert runner.invoke(app, ["preflight", "t", "--vectors", stated, *args]).exit_code == 0
    done = runner.invoke(app, ["outcome", "--success", "--source", "test", "--json", *args])
    assert done.exit_code == 0, done.output
    receipt = json.loads(done.stdout)
    assert (receipt["stated_preflight"], receipt["stated"]) == (0.8, "p_success")
    assert receipt["predicted_preflight"] != 0.8  # the vectors' confidence is kept beside it
    again = runner.invoke(app, ["outcome", "--failure", "--source", "human", *args])
    assert again.exit_code == 0, again.output
    assert "it stated P(success) 0.80 at PREFLIGHT" in again.stdout

    plain = json.dumps({"vectors": VECTORS, "note": "n"})
    closed = runner.invoke(app, ["postflight", "--vectors", plain, *args])
    assert closed.exit_code == 0, closed.output
    assert runner.invoke(app, ["preflight", "u", "--vectors", plain, *args]).exit_code == 0
    done = runner.invoke(app, ["outcome", "--success", "--json", *args])
    receipt = json.loads(done.stdout)
    assert receipt["stated"] == "confidence"
    assert receipt["stated_preflight"] == receipt["predicted_preflight"]
    text = runner.invoke(app, ["outcome", "--failure", "--source", "test", *args]).stdout
    assert (
        "it stated no P(success) at PREFLIGHT; its vectors' confidence was "
        f"{receipt['predicted_preflight']:.2f}"
    ) in " ".join(text.split())


def test_the_guardian_and_drift_commands_say_what_they_judged(tmp_path):
    with Store(tmp_path / "s", write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry(store.home / "profiles"), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="a")
        for i in range(4):
            task(tracker, session.id, success=i % 2 == 0)
        for i in range(12):
            task(tracker, session.id, pre=0.95, success=i % 3 == 0)
    args = ["--store", str(tmp_path / "s")]
    for command in (["guardian", "--profile", "balanced"], ["drift"]):
        body = runner.invoke(app, ["calibration", *command, "--json", *args])
        assert body.exit_code == 0, body.output
        doc = json.loads(body.stdout)
        assert doc["stated"] == "mixed", command
        assert doc["stated_from"] == {"p_success": 12, "confidence": 4}, command
        text = runner.invoke(app, ["calibration", *command, *args])
        assert text.exit_code == 0, text.output
        assert (
            "judged: what each task stated at PREFLIGHT, mixed: 12 p_success, "
            "4 the vectors' confidence"
        ) in " ".join(text.stdout.split()), command
    report = json.loads(runner.invoke(app, ["calibration", "report", "--json", *args]).stdout)
    assert report["by_phase"]["preflight"]["stated_from"] == doc["stated_from"]
