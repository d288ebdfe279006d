"""Decisions on calibrated numbers, from the command line: an agent that said 0.8 and succeeded
14 times in 40 is told to investigate on task 41, with the reason quoting what it stated and
what that has meant; an agent whose 0.8 meant 0.8 still proceeds; ``decide_on = stated`` gives
the old answer."""

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform

runner = CliRunner()
VECTORS = json.dumps(uniform(0.8, engagement=0.85, coherence=0.85))


def ok_json(*args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def spread(successes, n=40):
    """``successes`` of ``n`` spread evenly in time (no run of luck at either end)."""
    return [int((i + 1) * successes / n) > int(i * successes / n) for i in range(n)]


def history(agent, successes):
    ok_json("bootstrap", "--ai-id", agent)
    for i, success in enumerate(spread(successes)):
        ok_json("preflight", f"task {i}", "--vectors", VECTORS, "--p-success", "0.8",
                "--ai-id", agent)  # fmt: skip
        ok_json("postflight", "--vectors", VECTORS, "--ai-id", agent)
        receipt = ok_json("outcome", "--success" if success else "--failure", "--ai-id", agent)
    return receipt


def task_41(agent):
    pre = ok_json("preflight", "task 41", "--vectors", VECTORS, "--p-success", "0.8",
                  "--ai-id", agent)  # fmt: skip
    return pre["decision"]


@pytest.mark.slow
def test_an_overconfident_agent_is_told_to_investigate_and_told_why(_isolated_home):
    receipt = history("over", 14)
    assert receipt["calibrated"]["stated"] == 0.8 and receipt["calibrated"]["value"] < 0.5
    decision = task_41("over")
    assert decision["action"] == "INVESTIGATE"
    cal = decision["calibrated"]
    assert cal["stated"] == 0.8 and cal["stated_from"] == "p_success"
    assert cal["outcomes"] == 40 and cal["method"] == "logistic"
    assert 0.30 < cal["value"] < 0.45
    assert decision["reason"].startswith(
        f"stated 0.80, calibrated {cal['value']:.2f} from 40 outcomes (method logistic); "
        "below the threshold 0.65"
    )
    # the vectors' confidence is kept as the agent's vectors made it
    assert decision["confidence"] > 0.65
    check = ok_json("check", "--vectors", VECTORS, "--p-success", "0.8", "--ai-id", "over")
    assert check["decision"]["action"] == "INVESTIGATE"
    # and the text the person reads says both
    shown = runner.invoke(app, ["check", "--vectors", VECTORS, "--p-success", "0.8",
                                "--ai-id", "over"])  # fmt: skip
    assert "stated 0.80, calibrated" in shown.stdout.replace("\n", " ")
    # the receipt of task 41's outcome says what its 0.80 now means
    receipt = runner.invoke(app, ["outcome", "--failure", "--ai-id", "over"]).stdout
    assert "calibrated on 41 outcomes (method logistic), 0.80 now means 0.3" in receipt
    # the report: the map in force with its held-out proof, and the release gate
    report = ok_json("calibration", "report")
    (mine,) = report["recalibration"]
    assert mine["agent"] == "over" and mine["in_force"] and mine["method"] == "logistic"
    assert mine["outcomes"] == 41
    before, after = mine["brier_before"], mine["brier_after"]
    assert after["value"] < before["value"] and before["low"] <= before["value"] <= before["high"]
    assert set(report["gate"]) >= {"max_failure_rate", "confidence", "threshold", "released",
                                   "held", "failures_among_released"}  # fmt: skip
    assert report["gate"]["threshold"] is None and not report["gate"]["configured"]
    text = runner.invoke(app, ["calibration", "report"]).stdout
    assert "over: logistic map in force from 41 outcomes; stated 0.50 →" in text
    assert "held-out Brier" in text and "release gate (not configured" in text


@pytest.mark.slow
def test_an_agent_whose_statements_held_still_proceeds(_isolated_home):
    history("steady", 32)
    decision = task_41("steady")
    assert decision["action"] == "PROCEED"
    assert "calibrated" not in decision  # no map in force: its statements stand
    assert decision["reason"] == f"confidence {decision['confidence']:.2f} meets the threshold 0.65"


@pytest.mark.slow
def test_decide_on_stated_gives_the_old_answer(_isolated_home):
    history("over", 14)
    (_isolated_home / "config.toml").write_text('[calibration]\ndecide_on = "stated"\n')
    decision = task_41("over")
    assert decision["action"] == "PROCEED" and "calibrated" not in decision
    assert decision["reason"] == f"confidence {decision['confidence']:.2f} meets the threshold 0.65"
    (_isolated_home / "config.toml").write_text('[calibration]\ndecide_on = "sometimes"\n')
    refused = runner.invoke(app, ["preflight", "t", "--vectors", VECTORS, "--ai-id", "over",
                                  "--abandon-open"])  # fmt: skip
    assert refused.exit_code == 1 and "decide_on must be calibrated or stated" in refused.stderr
