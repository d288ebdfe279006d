"""A model's POSTFLIGHT is held to the profile's postflight mode before it is recorded: a reply
short of it gets the repair round naming what is missing, so the run completes."""

from __future__ import annotations

import json

import pytest

from noetic.cascade.engine import RunStatus

from ..conftest import uniform
from .test_engine import go, scores, think, tracker  # noqa: F401  (the fixture)


def bare(value):
    """Scores without evidence, as a model that skipped it writes them."""
    return json.dumps({"vectors": uniform(value, engagement=0.95, coherence=0.95)})


@pytest.mark.subprocess
def test_a_postflight_without_the_evidence_the_profile_wants_is_asked_again(tracker):  # noqa: F811
    replies = [scores(0.95), think(), "DONE", bare(0.95), scores(0.95)]
    run, provider, _ = go(tracker, replies, profile="critical_domain")
    assert run.status is RunStatus.COMPLETED, run.detail
    repair = provider.calls[4].messages[-1].content
    assert "requires evidence for every POSTFLIGHT vector" in repair
    assert provider.remaining == 0


@pytest.mark.subprocess
def test_a_second_bare_postflight_is_a_clear_failure(tracker):  # noqa: F811
    replies = [scores(0.95), think(), "DONE", bare(0.95), bare(0.95)]
    run, _, _ = go(tracker, replies, profile="critical_domain")
    assert run.status is not RunStatus.COMPLETED
    assert "requires evidence" in run.detail
