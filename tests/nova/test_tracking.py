"""A Nova run tracked like any task: PREFLIGHT/CHECK/POSTFLIGHT, recall, outcomes, weighting."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.llm.tokens import count_tokens
from noetic.nova import NovaSettings, run_nova
from noetic.nova.weighting import persona_records
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store.checkpoints import list_checkpoints

from ..conftest import uniform
from .panel import Panel, said
from .test_engine import QUESTION, SEED

ASSESSED = {
    ("dce", "preflight"): said("", vectors=uniform(0.6), note="panel unpacked"),
    ("dce", "check"): said("", vectors=uniform(0.75)),
    ("dce", "postflight"): said("", vectors=uniform(0.9), note="decided"),
}


def tracked(panel: Panel, question: str = QUESTION, **settings):
    store = Store(Path(os.environ["NOETIC_HOME"]))
    tracker = Tracker(store, ProfileRegistry())
    session, profile = tracker.bootstrap(ai_id="nova")
    ctx = build_context(
        "nova", tracker=tracker, provider=panel.provider, session_id=session.id, profile=profile
    )
    run = asyncio.run(run_nova(ctx, question, settings=NovaSettings(**settings)))
    return run, store


@pytest.mark.subprocess
def test_a_run_is_a_task_with_preflight_check_and_postflight():
    panel = Panel({**SEED, **ASSESSED})
    run, store = tracked(panel, recall=False)
    assert run.status == "completed" and run.cascade_id is not None
    task = store.get_cascade(run.cascade_id)
    assert task.status == "completed" and task.task == QUESTION
    phases = [a.assessment.phase.value for a in store.assessments(cascade_id=run.cascade_id)]
    assert phases == ["preflight", "check", "postflight"]
    assert [t.node.value for t in run.assessments] == ["preflight", "check", "postflight"]
    # the PREFLIGHT is the panel's state after unpacking: it sees the DCE's unpacking
    preflight = panel.prompt("dce", "preflight", 0)
    assert "An API with web and mobile clients" in preflight
    assert "OAuth2 with PKCE + mobile PKCE" in panel.prompt("dce", "postflight", 1)
    assert run.calibration is not None
    assert task.result["nova"]["run"] == run.id
    # a checkpoint with each assessment, the last one at the end
    marks = [c for _, c in list_checkpoints(store, None) if c.cascade == run.cascade_id]
    assert [c.phase for c in marks] == ["preflight", "check", "postflight"]
    # the graph's turns are unchanged by tracking
    assert [t.node.value for t in run.turns][-1] == "final" and len(run.turns) == 7


@pytest.mark.subprocess
def test_outcome_on_the_decision_scores_every_persona_that_spoke():
    panel = Panel({**SEED, **ASSESSED})
    run, store = tracked(panel, recall=False)
    result = CliRunner().invoke(app, ["outcome", run.cascade_id, "--score", "1", "--json"])
    assert result.exit_code == 0, result.output
    records = persona_records(store)
    assert set(records) == {"dce", "security", "performance", "integration"}
    assert records["dce"].stated == 0.92 and records["dce"].brier == round((1 - 0.92) ** 2, 4)
    assert records["performance"].stated == 0.65


@pytest.mark.subprocess
def test_recall_gives_the_unpacking_what_the_project_knows_within_its_budget():
    panel = Panel({**SEED, **ASSESSED})
    tracked(panel, recall=False)
    again = Panel({**SEED, **ASSESSED})
    run, _ = tracked(again, "Should our mobile app use OAuth2 or custom JWT?", recall_tokens=800)
    unpack = again.prompt("dce", "unpack", 0)
    assert "## What the project already knows" in unpack and QUESTION in unpack
    block = unpack.split("## What the project already knows\n", 1)[1]
    assert 0 < run.recall_tokens <= 800 and count_tokens(block) <= 800 + 5
    # nobody else is given it
    assert "What the project already knows" not in again.prompt("security", "experts", 1)


@pytest.mark.subprocess
def test_a_session_with_an_open_task_runs_untracked_and_says_so():
    store = Store(Path(os.environ["NOETIC_HOME"]))
    tracker = Tracker(store, ProfileRegistry())
    session, _ = tracker.bootstrap(ai_id="agent")
    tracker.preflight(session.id, "my own task", __import__("noetic.assessment").assessment
                      .Assessment(phase="preflight", vectors=uniform(0.7)))  # fmt: skip
    panel = Panel(SEED)
    ctx = build_context("nova", tracker=tracker, provider=panel.provider, session_id=session.id)
    run = asyncio.run(run_nova(ctx, QUESTION, settings=NovaSettings(recall=False)))
    assert run.status == "completed" and run.cascade_id is None
    assert any("has task" in n and "open" in n for n in run.notes)


def decide(panel_answers, n: int, score: float, **settings):
    """``n`` tracked decisions, each given the outcome ``score``."""
    for _ in range(n):
        run, _ = tracked(Panel(panel_answers), recall=False, **settings)
        out = CliRunner().invoke(app, ["outcome", run.cascade_id, "--score", str(score), "--json"])
        assert out.exit_code == 0, out.output


@pytest.mark.subprocess
def test_calibrated_weighting_moves_the_confidence_away_from_a_poorly_calibrated_expert():
    overconfident = said("Certainly JWT.", know=0.95, uncertainty=0.05, position="JWT")
    answers = {**SEED, **ASSESSED, ("performance", "experts"): overconfident}
    decide(answers, 3, 0.0)  # the decisions failed: performance said 0.95 each time
    records = persona_records(Store(Path(os.environ["NOETIC_HOME"])))
    assert records["performance"].outcomes == 3 and records["performance"].brier > 0.9

    plain, _ = tracked(Panel(answers), recall=False)
    weighted, _ = tracked(Panel(answers), recall=False, weighting="calibrated", min_outcomes=3)
    assert plain.weighting == "dce" and plain.confidence == 0.92
    assert weighted.weighting.startswith("calibrated")
    assert weighted.weights["performance"] == 0.05
    stated = {"dce": 0.92, "security": 0.7, "performance": 0.95, "integration": 0.7}
    unweighted = sum(stated.values()) / len(stated)
    # pulled away from performance's 0.95: below the unweighted mean of what was stated
    assert weighted.confidence is not None and weighted.confidence < unweighted
    assert any("weighted by track record" in n for n in weighted.notes)


@pytest.mark.subprocess
def test_calibrated_weighting_waits_for_enough_outcomes():
    answers = {**SEED, **ASSESSED}
    decide(answers, 1, 1.0)
    run, _ = tracked(Panel(answers), recall=False, weighting="calibrated", min_outcomes=5)
    assert run.confidence == 0.92 and "no persona on the panel has 5 outcomes" in run.weighting


@pytest.mark.subprocess
def test_decision_log_and_stats(tmp_path):
    minor = said("Mobile needs PKCE.", know=0.7, uncertainty=0.3, severity="minor",
                 issues=["mobile"])  # fmt: skip
    revised = said("Revised.", know=0.85, uncertainty=0.2, proposal="OAuth2 + PKCE everywhere")
    tracked(Panel({**SEED, **ASSESSED}), recall=False)
    run, store = tracked(
        Panel({**SEED, **ASSESSED, ("cae", "critique"): minor, ("dce", "revise"): revised}),
        recall=False,
    )
    log = Path(run.decision_log).read_text(encoding="utf-8")
    assert Path(run.decision_log).parent == store.home / "decisions"
    assert "- recommendation: **OAuth2 with PKCE + mobile PKCE**" in log
    assert "## Dissent" in log and "### 8 · Critical Analysis Expert · critique" in log
    assert "Mobile needs PKCE." in log and "know 0.40 · uncertainty 0.70" in log

    out = CliRunner().invoke(app, ["nova", "stats", "--json"])
    assert out.exit_code == 0, out.output
    stats = json.loads(out.stdout)
    assert (stats["runs"], stats["completed"]) == (2, 2)
    assert stats["critique_rate"] == 0.5 and stats["revision_rate"] == 0.5
    assert stats["turns_per_decision"] == 7.5 and stats["expert_utilisation"] == 1.0
    assert stats["learning_delta"] == 0.5 and stats["uncertainty_reduction"] == 0.55
    assert stats["findings"] == 3.0 and stats["consensus_rate"] == 0.0  # both kept a dissent
    shown = CliRunner().invoke(app, ["nova", "stats"])
    assert "critique rate" in shown.stdout and "≈ 0.60" in shown.stdout


@pytest.mark.subprocess
def test_a_profile_asking_for_adversarial_review_makes_the_panels_postflight_one(tmp_path):
    home = Path(os.environ["NOETIC_HOME"])
    (home / "profiles").mkdir(parents=True, exist_ok=True)
    (home / "profiles" / "sceptic.yaml").write_text(
        "name: sceptic\npostflight_review: adversarial\n"
    )
    store = Store(home)
    tracker = Tracker(store, ProfileRegistry(home / "profiles"))
    session, profile = tracker.bootstrap(ai_id="nova", profile="sceptic")
    panel = Panel({**SEED, **ASSESSED})
    ctx = build_context(
        "nova", tracker=tracker, provider=panel.provider, session_id=session.id, profile=profile
    )
    run = asyncio.run(run_nova(ctx, QUESTION, settings=NovaSettings(recall=False)))
    assert run.status == "completed"
    assert "find bugs" in panel.prompt("dce", "postflight", 1)
    assert "find bugs" not in panel.prompt("dce", "preflight", 0)
    post = store.assessments(cascade_id=run.cascade_id)[-1].assessment
    assert post.phase == "postflight" and post.review == "adversarial"


@pytest.mark.subprocess
def test_the_check_gate_weighs_what_the_panels_statement_has_meant():
    """A panel whose P(success) 0.8 has meant about 0.35 is not settled by its synthesis's
    uncertainty 0.35 alone: the calibrated value's doubt is the larger, and the gate says so."""
    from noetic.assessment import Assessment
    from noetic.calibration import record_outcome
    from noetic.events import EventKind

    with Store(Path(os.environ["NOETIC_HOME"])) as store:
        tracker = Tracker(store, ProfileRegistry())
        session, _ = tracker.bootstrap(ai_id="nova")
        for i in range(40):
            env = {"vectors": uniform(0.8), "p_success": 0.8}
            r = tracker.preflight(session.id, f"t{i}", Assessment.from_input("preflight", env))
            tracker.postflight(session.id, Assessment.from_input("postflight", env))
            ok = int((i + 1) * 14 / 40) > int(i * 14 / 40)
            record_outcome(store, r.cascade.id, score=float(ok), source="test", refit=False)
    sure = {
        ("dce", "preflight"): said("", vectors=uniform(0.8), p_success=0.8, note="unpacked"),
        ("dce", "check"): said("", vectors=uniform(0.8), p_success=0.8),
        ("dce", "postflight"): said("", vectors=uniform(0.9), note="decided"),
    }
    events: list = []
    store = Store(Path(os.environ["NOETIC_HOME"]))
    tracker = Tracker(store, ProfileRegistry())
    tracker.bus.subscribe(events.append)
    session, profile = tracker.bootstrap(ai_id="nova")
    ctx = build_context(
        "nova", tracker=tracker, provider=Panel({**SEED, **sure}).provider,
        session_id=session.id, profile=profile,
    )  # fmt: skip
    asyncio.run(run_nova(ctx, QUESTION, settings=NovaSettings(recall=False, max_rounds=1)))
    gate = [
        e.data for e in events if e.kind == EventKind.DECISION and e.data["rule"] == "max_rounds"
    ]
    assert gate, [e.data for e in events if e.kind == EventKind.DECISION]
    assert "the panel stated 0.80, calibrated 0.3" in gate[0]["reason"]
    assert "> gate 0.35" in gate[0]["reason"]
