"""A profile's postflight_review makes CASCADE's POSTFLIGHT an adversarial review, recorded as
such, so the calibration report can set it beside standard reviews."""

import json

import pytest

from noetic.calibration import Filters, calibration_report, record_outcome
from noetic.cascade.engine import RunStatus

from .test_engine import go, scores, think, tracker  # noqa: F401  (the fixture)


def with_p(value, p):
    return json.dumps({**json.loads(scores(value)), "p_success": p})


@pytest.mark.subprocess
def test_an_adversarial_profile_asks_for_a_review_and_the_report_compares_both(
    tracker,  # noqa: F811
    tmp_path,
):
    path = tmp_path / "sceptic.yaml"
    path.write_text("name: sceptic\npostflight_review: adversarial\n")
    tracker.registry.import_file(path)
    harsh, harsh_provider, _ = go(
        tracker, [with_p(0.9, 0.8), think(), "DONE", with_p(0.9, 0.5)], profile="sceptic"
    )
    plain, plain_provider, _ = go(tracker, [with_p(0.9, 0.8), think(), "DONE", with_p(0.9, 0.9)])
    assert harsh.status is plain.status is RunStatus.COMPLETED
    harsh_prompt = harsh_provider.calls[-1].messages[0].content
    assert "find bugs" in harsh_prompt and "Your output:\nDONE" in harsh_prompt
    assert "find bugs" not in plain_provider.calls[-1].messages[0].content
    reviews = [
        tracker.store.assessments(cascade_id=run.cascade_id)[-1].assessment
        for run in (harsh, plain)
    ]
    assert [(a.review, a.p_success) for a in reviews] == [("adversarial", 0.5), ("standard", 0.9)]
    for run in (harsh, plain):
        record_outcome(tracker.store, run.cascade_id, score=0.0, source="test")
    report = calibration_report(tracker.store, Filters())
    phases = report.by_phase
    assert phases["adversarial_review"].mean_stated == 0.5
    assert phases["postflight"].mean_stated == 0.9
    (comparison,) = report.reviews
    assert comparison.agent == "m" and comparison.difference.value == pytest.approx(0.4)
