"""Claude Code sees its own record once it has outcomes (SessionStart and UserPromptSubmit
context), and the irreversible hold follows a CHECK that compared the calibrated value."""

from __future__ import annotations

import pytest

from noetic.assessment import Assessment
from noetic.calibration import record_outcome

from ..conftest import uniform
from .test_hooks import hook, session_of, start, tracker
from .test_pretool import configure, decided, pre

SURE = uniform(0.95, engagement=0.95, coherence=0.95)


def overconfident_history(home, n=40, successes=14):
    """Tasks in this Claude session stating P(success) 0.8, ``successes`` of ``n`` succeeding."""
    t = tracker(home)
    try:
        sid = session_of(home)
        for i in range(n):
            env = {"vectors": SURE, "p_success": 0.8}
            r = t.preflight(sid, f"task {i}", Assessment.from_input("preflight", env))
            t.postflight(sid, Assessment.from_input("postflight", {"vectors": SURE}))
            ok = int((i + 1) * successes / n) > int(i * successes / n)
            record_outcome(t.store, r.cascade.id, score=float(ok), source="test")
    finally:
        t.store.close()


def prompt(project):
    return hook("user-prompt-submit", "UserPromptSubmit", project, prompt="ship it")


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_record_line_appears_once_there_are_outcomes(project, home, _isolated_home):
    first = start(project)["hookSpecificOutput"]["additionalContext"]
    assert "Your record" not in first  # nothing before there are outcomes
    assert prompt(project) is None
    overconfident_history(_isolated_home)
    resumed = hook("session-start", "SessionStart", project, source="resume")
    context = resumed["hookSpecificOutput"]["additionalContext"]
    line = next(x for x in context.splitlines() if x.startswith("Your record in Noetic"))
    assert "your last 40 PREFLIGHT statements averaged 0.80" in line
    assert "35% of those tasks succeeded" in line
    assert "calibrated, your 0.80 has meant 0.3" in line
    assert len(line) < 1200  # well within 300 tokens
    reply = prompt(project)
    assert reply["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert reply["hookSpecificOutput"]["additionalContext"] == line


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_hold_quotes_the_calibrated_check(project, home, _isolated_home):
    start(project)
    overconfident_history(_isolated_home)
    configure(_isolated_home, '[gate]\nirreversible = "deny"\n')
    t = tracker(_isolated_home)
    try:
        sid = session_of(_isolated_home)
        env = {"vectors": SURE, "p_success": 0.8}
        t.preflight(sid, "release", Assessment.from_input("preflight", env))
        checked = t.check(sid, Assessment.from_input("check", env))
    finally:
        t.store.close()
    assert checked.decision.action.value == "INVESTIGATE"  # the raw 0.95 vectors would proceed
    kind, reason = decided(pre(project, command="npm publish"))
    assert kind == "deny"
    assert "CHECK says INVESTIGATE" in reason
    assert "stated 0.80, calibrated 0.3" in reason and "from 40 outcomes" in reason
