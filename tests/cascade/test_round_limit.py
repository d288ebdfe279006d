"""`noetic cascade run` says when the profile's round limit, not readiness, ended investigating."""

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform
from ..llm.model_server import reply, running
from .test_engine import call, scores, step, think

runner = CliRunner()


@pytest.mark.subprocess
def test_the_round_limit_is_said_when_it_ends_the_investigation(tmp_path):
    exported = runner.invoke(app, ["profile", "export", "balanced", "--json"])
    yaml = json.loads(exported.stdout)["yaml"].replace("max_rounds: 7", "max_rounds: 1")
    (tmp_path / "one.yaml").write_text(yaml)
    imported = runner.invoke(app, ["profile", "import", str(tmp_path / "one.yaml"),
                                   "--name", "one_round"])  # fmt: skip
    assert imported.exit_code == 0, imported.output
    (tmp_path / "notes.txt").write_text("nothing useful")
    args = ["cascade", "run", "t", "--workspace", str(tmp_path), "--profile", "one_round"]
    script = [scores(0.5, clarity=0.9), think(complex_=False, strategy="research"),
              step(call("read_file", path="notes.txt")), scores(0.55, clarity=0.9),
              "my best try", scores(0.6, clarity=0.9)]  # fmt: skip
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        human = runner.invoke(app, [*args, "--provider", spec])
    assert human.exit_code == 0, human.output
    assert (
        "investigation stopped at the round limit (1 of 1 rounds, the profile's max_rounds) "
        "before the model was ready; confidence 0."
    ) in human.stdout
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        as_json = json.loads(runner.invoke(app, [*args, "--provider", spec, "--json"]).stdout)
    assert as_json["loop_exit"] == "max_rounds" and as_json["rounds"] == 1


@pytest.mark.subprocess
def test_no_round_limit_line_when_the_model_became_ready(tmp_path):
    script = [scores(0.5, clarity=0.9), think(complex_=False, strategy="research"),
              step(call("read_file", path="n.txt")), scores(0.9), "done", scores(0.9)]  # fmt: skip
    (tmp_path / "n.txt").write_text("x")
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        args = ["cascade", "run", "t", "--provider", spec, "--workspace", str(tmp_path)]
        result = runner.invoke(app, [*args, "--profile", "balanced"])
    assert result.exit_code == 0, result.output
    assert "round limit" not in result.stdout
    assert "trajectory: PREFLIGHT → CHECK → POSTFLIGHT" in result.stdout
    assert "cost unknown" in result.stdout and "$0.0000" not in result.stdout


# The agent-driven workflow: the same limit, on every path ------------------------------------

SHORT = uniform(0.75, engagement=0.9, coherence=0.9)  # below critical_domain's 0.90: INVESTIGATE


def _cli(*args, input=None):
    return runner.invoke(app, [*args, "--json"], input=input)


@pytest.mark.subprocess
def test_the_cli_refuses_an_investigation_past_the_profiles_round_limit():
    boot = _cli("bootstrap", "--profile", "critical_domain")
    assert boot.exit_code == 0, boot.output
    assert json.loads(boot.stdout)["profile"]["investigation"]["max_rounds"] == 3
    pre = _cli("preflight", "audit the dosage table", "--vectors", json.dumps(SHORT))
    assert json.loads(pre.stdout)["decision"]["action"] == "INVESTIGATE"
    decisions = []
    for n in (1, 2, 3):
        inv = _cli("investigate", "--note", f"looked again ({n})")
        assert inv.exit_code == 0, inv.output
        assert json.loads(inv.stdout)["round"] == n
        chk = _cli("check", "--vectors", json.dumps({"know": 0.75}))
        assert chk.exit_code == 0, chk.output
        decisions.append(json.loads(chk.stdout)["decision"])
    assert [d["action"] for d in decisions] == ["INVESTIGATE", "INVESTIGATE", "PROCEED"]
    last = decisions[-1]
    assert last["rule"] == "max_rounds"
    assert "round limit is reached (3 of 3 rounds, profile 'critical_domain'" in last["reason"]
    assert "act on what you have" in last["reason"]
    fourth = _cli("investigate", "--note", "one more look")
    assert fourth.exit_code != 0
    error = json.loads(fourth.stdout)["error"]
    assert "round limit" in error["message"] and "'critical_domain'" in error["message"]
    assert "3 investigation rounds (max_rounds)" in error["message"]
    human = runner.invoke(app, ["investigate", "--note", "one more look"])
    assert human.exit_code != 0 and "max_rounds" in human.output


@pytest.mark.subprocess
def test_the_human_check_says_the_limit_is_reached():
    runner.invoke(app, ["bootstrap", "--profile", "critical_domain"])
    runner.invoke(app, ["preflight", "t", "--vectors", json.dumps(SHORT)])
    for _ in range(2):
        runner.invoke(app, ["check", "--vectors", json.dumps({"know": 0.75})])
    third = runner.invoke(app, ["check", "--vectors", json.dumps({"know": 0.75})])
    assert third.exit_code == 0, third.output
    assert "PROCEED" in third.stdout and "round limit is reached" in " ".join(third.stdout.split())


@pytest.mark.subprocess
def test_the_mcp_guidance_stops_suggesting_rounds_at_the_limit(_isolated_home):
    from noetic.mcp.server import build_server

    from ..mcp._client import call, ok

    check = ("submit_check_assessment", {"vectors": {"know": 0.75}})
    results = call(
        build_server(_isolated_home),
        ("bootstrap_session", {"profile": "critical_domain"}),
        ("submit_preflight_assessment", {"task": "t", "vectors": SHORT}),
        check,
        check,
        check,
    )
    *_, second, third = [ok(r) for r in results]
    assert second["decision"]["action"] == "INVESTIGATE"
    assert "submit_check_assessment" in second["next_step"]
    assert third["decision"]["action"] == "PROCEED" and third["decision"]["rule"] == "max_rounds"
    assert third["next_step"].startswith("the profile's round limit is reached")
    assert "submit_check_assessment" not in third["next_step"]


def test_the_python_tracker_enforces_the_limit(store):
    from noetic.assessment import Assessment
    from noetic.errors import WorkflowError
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    tracker = Tracker(store, ProfileRegistry(), checkpoints=False)
    session, _ = tracker.bootstrap(profile="critical_domain")
    tracker.preflight(session.id, "t", Assessment(phase="preflight", vectors=SHORT))
    for _ in range(3):
        tracker.investigate(session.id, "looked")
        done = tracker.check(session.id, Assessment(phase="check", vectors={"know": 0.75}))
    assert done.decision.rule == "max_rounds"
    with pytest.raises(WorkflowError, match=r"profile 'critical_domain' allows 3 investigation"):
        tracker.investigate(session.id, "past the limit")
    # The limit changes nothing once the model is ready, nor a stopping action.
    assert (
        tracker.check(
            session.id, Assessment(phase="check", vectors={"clarity": 0.2})
        ).decision.action.value
        == "CLARIFY"
    )


def test_an_unlimited_profile_keeps_investigating(store):
    from noetic.assessment import Assessment
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    tracker = Tracker(store, ProfileRegistry(), checkpoints=False)
    registry = ProfileRegistry()
    unlimited = next(
        p for p in map(registry.get, registry.names()) if p.investigation.max_rounds is None
    )
    session, _ = tracker.bootstrap(profile=unlimited.name)
    low = uniform(0.3, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)
    tracker.preflight(session.id, "t", Assessment(phase="preflight", vectors=low))
    for n in range(1, 12):
        assert tracker.investigate(session.id, "looked").round == n
        decision = tracker.check(session.id, Assessment(phase="check", vectors={"know": 0.3}))
        assert decision.decision.rule != "max_rounds"


def test_the_workflow_guidance_says_what_the_round_limit_does():
    from noetic.mcp.guidance import workflow_guidance

    assert "round limit the CHECK says PROCEED under the rule max_rounds" in " ".join(
        workflow_guidance("check").split()
    )
