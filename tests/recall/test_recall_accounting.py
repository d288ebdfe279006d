"""The recall command always says how many tasks were considered, loaded and left out, and why."""

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform

runner = CliRunner()
GATED = uniform(0.8, engagement=0.9, coherence=0.9)


def task(name, outcome=None):
    runner.invoke(app, ["preflight", name, "--vectors", json.dumps(GATED), "--abandon-open"])
    runner.invoke(app, ["postflight", "--vectors", json.dumps(GATED)])
    if outcome is not None:
        flag = "--success" if outcome else "--failure"
        assert runner.invoke(app, ["outcome", flag]).exit_code == 0


@pytest.mark.subprocess
def test_the_accounting_names_every_reason():
    runner.invoke(app, ["bootstrap", "--profile", "balanced"])
    task("resolve login failures", outcome=False)  # predicted ~0.8, failed: contradicted
    task("fix the session cookie", outcome=True)  # confirmed
    task("tidy the auth module")  # unverified
    runner.invoke(app, ["preflight", "next", "--vectors", json.dumps(uniform(0.9))])
    human = runner.invoke(app, ["recall", "fix the authentication bug"])
    assert human.exit_code == 0, human.output
    args = ["recall", "fix the authentication bug", "--json", "--explain"]
    body = json.loads(runner.invoke(app, args).stdout)
    assert body["considered"] == 3 and body["unverified"] == 1
    assert body["left_out"]["calibration_filter"] == 1
    loaded = sum(c["chosen"] for c in body["candidates"])
    assert loaded + sum(body["left_out"].values()) == 3
    verdicts = {c["task"]: c["verdict"] for c in body["candidates"]}
    assert verdicts == {
        "resolve login failures": "overconfident",
        "fix the session cookie": "confirmed",
        "tidy the auth module": "unverified",
    }
    line = f"considered 3 earlier task(s) (1 without an outcome yet): loaded {loaded}"
    assert line in human.stdout
    assert "1 by the calibration filter (their outcome contradicted the prediction)" in human.stdout
