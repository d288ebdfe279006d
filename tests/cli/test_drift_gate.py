"""`noetic calibration drift --fail-on-drift`: a script can stop on drift."""

import json
import random

import pytest
from typer.testing import CliRunner

from noetic.assessment import Assessment
from noetic.cli import app
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import uniform

runner = CliRunner()


def _tasks(home, n, bias, seed):
    """``n`` tasks whose success probability is the stated confidence minus ``bias``."""
    rng = random.Random(seed)
    with Store(home) as store:
        tracker = Tracker(store, ProfileRegistry())
        session, _ = tracker.bootstrap(ai_id="sim", profile="balanced")
        done = []
        for _ in range(n):
            level = rng.uniform(0.3, 1.0)
            vectors = uniform(level, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)
            pre = tracker.preflight(session.id, "t", Assessment.from_input("preflight", vectors))
            tracker.postflight(session.id, Assessment.from_input("postflight", vectors))
            success = rng.random() < max(0.0, pre.decision.confidence - bias)
            done.append((pre.cascade.id, success))
    for cascade, success in done:
        flag = "--success" if success else "--failure"
        assert runner.invoke(app, ["outcome", cascade, flag, "--source", "test"]).exit_code == 0


def drift(*extra):
    return runner.invoke(app, ["calibration", "drift", "--ai-id", "sim", "--window", "40", *extra])


@pytest.mark.slow
@pytest.mark.subprocess
def test_fail_on_drift_exits_4_only_when_drift_is_detected(_isolated_home):
    _tasks(_isolated_home, 40, bias=0.0, seed=1)
    steady = drift("--fail-on-drift", "--json")
    assert steady.exit_code == 0, steady.output
    assert not json.loads(steady.stdout)["calibration_drift"]
    _tasks(_isolated_home, 40, bias=0.45, seed=2)
    assert drift().exit_code == 0  # without the flag, a report is a report
    drifted = drift("--fail-on-drift", "--json")
    report = json.loads(drifted.stdout)  # the report is printed either way
    assert report["calibration_drift"] or report["sycophancy_drift"]
    assert drifted.exit_code == 4
