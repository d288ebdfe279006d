"""After the guardian corrects a profile, `profile show` shows what sessions really use, and the
guardian says why it has nothing to judge yet."""

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from .test_drift_gate import _tasks

runner = CliRunner()


def ok(*args):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.slow
@pytest.mark.subprocess
def test_profile_show_is_the_effective_profile_with_its_corrections(_isolated_home):
    before = json.loads(ok("profile", "show", "balanced", "--json").stdout)
    assert before["corrections"] == []
    assert not (_isolated_home / "noetic.db").exists()  # looking created no store
    _tasks(_isolated_home, 40, bias=0.4, seed=3)  # a clearly overconfident agent
    applied = json.loads(
        ok("calibration", "guardian", "--profile", "balanced", "--apply", "--json").stdout
    )["applied"]
    assert applied is not None and applied["field"] == "tuning.confidence_weight"

    shown = json.loads(ok("profile", "show", "balanced", "--json").stdout)
    assert (
        shown["tuning"]["confidence_weight"]
        == applied["new"]
        != before["tuning"]["confidence_weight"]
    )
    (correction,) = shown["corrections"]
    assert correction["file_value"] == before["tuning"]["confidence_weight"]
    assert correction["value"] == applied["new"] and correction["adjustment"] == applied["id"]
    session = json.loads(ok("bootstrap", "--profile", "balanced", "--json").stdout)
    assert session["profile"]["tuning"]["confidence_weight"] == applied["new"]
    human = ok("profile", "show", "balanced").stdout
    assert f"--undo {applied['id']}" in human and f"confidence_weight: {applied['new']}" in human

    again = json.loads(ok("calibration", "guardian", "--profile", "balanced", "--json").stdout)
    assert again["note"] == "no outcomes since the last correction (40 before it)"

    ok("calibration", "guardian", "--profile", "balanced", "--undo", str(applied["id"]))
    undone = json.loads(ok("profile", "show", "balanced", "--json").stdout)
    assert undone["corrections"] == [] and undone["tuning"] == before["tuning"]
