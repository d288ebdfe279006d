"""The NovaProcess on a scripted panel: the seed's OAuth2 example, every loop, every end."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from noetic.errors import ProviderError, ValidationError
from noetic.events import EventKind
from noetic.nova import NovaSettings, resume_nova, run_nova
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store import nova as records

from .panel import Delayed, Panel, said

QUESTION = "Should we use OAuth2 or custom JWT?"

UNPACK = said(
    "## Requirements\nAn API with web and mobile clients; third parties may integrate later.",
    know=0.4,
    uncertainty=0.7,
    experts=[
        {"name": "security", "reason": "token handling is a security decision"},
        {"name": "performance", "reason": "validation cost on every request"},
        {"name": "integration", "reason": "third parties speak OAuth2"},
    ],
)
SECURITY = said(
    "OAuth2 is more secure: short-lived tokens, revocation.",
    know=0.7,
    uncertainty=0.3,
    position="OAuth2",
    findings=["custom JWT lacks revocation"],
)
PERFORMANCE = said(
    "Custom JWT is faster: no introspection call.",
    know=0.65,
    uncertainty=0.35,
    position="custom JWT",
    findings=["introspection adds a round trip"],
)
INTEGRATION = said(
    "OAuth2 easier to integrate: every client library speaks it.",
    know=0.7,
    uncertainty=0.3,
    position="OAuth2",
    findings=["partners expect OAuth2"],
)
SYNTHESIS = said(
    "## Proposal\nUse OAuth2 with PKCE; JWT access tokens validated locally.",
    know=0.75,
    uncertainty=0.35,
    proposal="Use OAuth2 with PKCE",
    tradeoffs=["an authorization server to run"],
)
CRITIQUE_NONE = said(
    "What about mobile apps? PKCE covers public clients.",
    know=0.8,
    uncertainty=0.2,
    severity="none",
    issues=["What about mobile apps?"],
)
FINAL = said(
    "## Decision\nOAuth2 with PKCE, mobile apps included.",
    know=0.9,
    uncertainty=0.15,
    recommendation="OAuth2 with PKCE + mobile PKCE",
    confidence=0.92,
    tradeoffs=["an authorization server to run"],
    dissent=["performance: local JWT validation would be faster"],
)

SEED = {
    ("dce", "unpack"): UNPACK,
    ("security", "experts"): SECURITY,
    ("performance", "experts"): PERFORMANCE,
    ("integration", "experts"): INTEGRATION,
    ("dce", "synthesize"): SYNTHESIS,
    ("cae", "critique"): CRITIQUE_NONE,
    ("dce", "final"): FINAL,
}


def nova(panel: Panel, question: str = QUESTION, *, provider=None, seen=None, **settings):
    store = Store(Path(os.environ["NOETIC_HOME"]))
    ctx = build_context(
        "nova", tracker=Tracker(store, ProfileRegistry()), provider=provider or panel.provider
    )
    if seen is not None:
        ctx.bus.subscribe(seen.append)
    return asyncio.run(run_nova(ctx, question, settings=NovaSettings(**settings))), store


def resume(run_id: str, panel: Panel, **kw):
    store = Store(Path(os.environ["NOETIC_HOME"]))
    ctx = build_context("nova", tracker=Tracker(store, ProfileRegistry()), provider=panel.provider)
    return asyncio.run(resume_nova(ctx, run_id, **kw))


def order(run):
    return [(t.persona, t.node.value, t.round) for t in run.turns]


def test_seed_oauth2_example_runs_in_the_seeds_turn_order():
    panel = Panel(SEED)
    events: list = []
    run, store = nova(panel, seen=events)
    assert order(run) == [
        ("dce", "unpack", 0),
        ("security", "experts", 1),
        ("performance", "experts", 1),
        ("integration", "experts", 1),
        ("dce", "synthesize", 1),
        ("cae", "critique", 1),
        ("dce", "final", 1),
    ]
    assert run.status == "completed" and run.exit == "none"
    assert (run.recommendation, run.confidence) == ("OAuth2 with PKCE + mobile PKCE", 0.92)
    assert [p.name for p in run.experts] == ["security", "performance", "integration"]
    assert run.dissent == ["performance: local JWT validation would be faster"]
    # each turn's state is the one its block gave, and the unpacking's is the seed's
    assert (run.turns[0].know, run.turns[0].uncertainty) == (0.4, 0.7)
    assert run.turns[4].uncertainty == 0.35  # borderline: the gate lets 0.35 through
    decisions = [e.data for e in events if e.kind == EventKind.DECISION]
    assert decisions[0]["action"] == "settled" and "0.35 ≤ gate 0.35" in decisions[0]["reason"]
    assert run.model_calls == 7 and panel.provider.calls and len(panel.provider.calls) == 7
    # persisted as they finished, in the same order
    stored = records.turns(store, run.id)
    assert [(t["persona"], t["node"]) for t in stored] == [(p, n) for p, n, _ in order(run)]
    assert records.get_run(store, run.id)["status"] == "completed"
    finished = [e for e in events if e.kind == EventKind.RUN_FINISHED]
    assert finished[-1].data["status"] == "completed" and finished[-1].engine == "nova"
    entered = [e.data for e in events if e.kind == EventKind.PHASE_ENTERED]
    assert [(d["role"], d["stage"]) for d in entered][:1] == [("dce", 1)]


def test_each_turn_sees_only_what_its_persona_needs():
    panel = Panel(SEED)
    nova(panel)
    security = panel.prompt("security", "experts", 1)
    assert "Requirements" in security  # the DCE's framing
    assert "Custom JWT is faster" not in security  # not another expert's turn
    synthesis = panel.prompt("dce", "synthesize", 1)
    assert all(x in synthesis for x in ("OAuth2 is more secure", "Custom JWT is faster"))
    critique = panel.prompt("cae", "critique", 1)
    assert "Use OAuth2 with PKCE" in critique
    final = panel.prompt("dce", "final", 1)
    assert "What about mobile apps?" in final and "Use OAuth2 with PKCE" in final
    unpack = panel.prompt("dce", "unpack", 0)
    assert "- legal: Legal and Compliance Expert" in unpack  # the catalogue to choose from


@pytest.mark.slow
def test_experts_run_concurrently_and_are_recorded_in_a_stable_order():
    panel = Panel(SEED)
    slow = Delayed(panel.provider, {"security": 0.3, "performance": 0.15})
    run, store = nova(panel, provider=slow)
    assert slow.finished[1:4] == ["integration", "performance", "security"]
    assert order(run)[1:4] == [
        ("security", "experts", 1),
        ("performance", "experts", 1),
        ("integration", "experts", 1),
    ]
    assert [t["seq"] for t in records.turns(store, run.id)] == list(range(1, 8))


def test_check_gate_sends_the_open_question_back_to_the_experts_once():
    uncertain = said(
        "Unsure whether partners need delegated access.",
        know=0.5,
        uncertainty=0.6,
        proposal="OAuth2, probably",
        open_question="Do partners need delegated access?",
    )
    panel = Panel({**SEED, ("dce", "synthesize", 1): uncertain})
    events: list = []
    run, _ = nova(panel, seen=events)
    assert run.status == "completed" and run.rounds == 2
    assert panel.counts[("security", "experts", 2)] == 1
    assert "Do partners need delegated access?" in panel.prompt("security", "experts", 2)
    assert "Do partners need delegated access?" not in panel.prompt("security", "experts", 1)
    gate = [
        e.data for e in events if e.kind == EventKind.DECISION and e.data["rule"] == "check_gate"
    ]
    assert [d["action"] for d in gate] == ["uncertain", "settled"]
    assert "0.60 > gate 0.35" in gate[0]["reason"]


def test_a_gate_from_the_caller_changes_the_route():
    panel = Panel(SEED)
    run, _ = nova(panel, gate=0.2, max_rounds=2)
    # synthesis at 0.35 is above a 0.2 gate: a second round, then the rounds are used up
    assert run.rounds == 2 and any("rounds are used up" in n for n in run.notes)


def test_critical_critique_loops_to_the_experts_with_its_issues():
    critical = said(
        "Custom revocation is missing entirely.",
        know=0.6,
        uncertainty=0.4,
        severity="critical",
        issues=["no token revocation"],
    )
    panel = Panel({**SEED, ("cae", "critique", 1): critical})
    run, _ = nova(panel)
    assert run.status == "completed" and run.rounds == 2
    assert [n for _, n, r in order(run) if r == 2] == [
        "experts",
        "experts",
        "experts",
        "synthesize",
        "critique",
        "final",
    ]
    assert "no token revocation" in panel.prompt("performance", "experts", 2)
    assert "Custom revocation is missing" in panel.prompt("cae", "critique", 2)  # its own earlier


def test_minor_critique_makes_the_dce_revise_before_the_final():
    minor = said(
        "Mobile apps need PKCE too.",
        know=0.75,
        uncertainty=0.25,
        severity="minor",
        issues=["mobile apps need PKCE"],
    )
    revised = said(
        "Add PKCE for mobile.",
        know=0.85,
        uncertainty=0.2,
        proposal="OAuth2 with PKCE for web and mobile",
    )
    panel = Panel({**SEED, ("cae", "critique"): minor, ("dce", "revise"): revised})
    run, _ = nova(panel)
    assert [n for _, n, _ in order(run)][-3:] == ["critique", "revise", "final"]
    assert run.exit == "revised" and run.rounds == 1
    assert "Mobile apps need PKCE too." in panel.prompt("dce", "revise", 1)
    final = panel.prompt("dce", "final", 1)
    assert "Add PKCE for mobile." in final and "## Current synthesis\nAdd PKCE" in final


def test_convergence_ends_the_loop_before_max_rounds():
    stuck = said(
        "Still torn.",
        know=0.5,
        uncertainty=0.6,
        proposal="OAuth2?",
        open_question="what do partners need?",
    )
    panel = Panel({**SEED, ("dce", "synthesize"): stuck})
    run, _ = nova(panel, max_rounds=5, epsilon=0.05)
    # the same state in rounds 1 and 2: converged, so no third round; on to the critique
    assert run.rounds == 2 and run.status == "completed"
    assert any("converged" in n for n in run.notes)
    assert ("security", "experts", 3) not in panel.counts


def test_escalation_then_resume_with_a_persons_decision_repeats_no_call():
    critical = said(
        "Fatal: no revocation.",
        know=0.6,
        uncertainty=0.4,
        severity="critical",
        issues=["no revocation story"],
    )
    disagreeing = said(
        "Split panel.",
        know=0.6,
        uncertainty=0.3,
        proposal="OAuth2",
        disagreements=["performance prefers custom JWT"],
    )
    panel = Panel({**SEED, ("cae", "critique"): critical, ("dce", "synthesize"): disagreeing})
    run, store = nova(panel, max_rounds=2)
    assert run.status == "escalated" and run.recommendation is None
    assert run.disagreements == ["no revocation story", "performance prefers custom JWT"]
    assert records.get_run(store, run.id)["status"] == "escalated"
    calls_before = len(panel.provider.calls)

    with pytest.raises(Exception, match="waiting for a person"):
        resume(run.id, panel)
    done = resume(run.id, panel, input="Use OAuth2; we accept running an auth server.")
    assert done.status == "completed" and done.recommendation == "OAuth2 with PKCE + mobile PKCE"
    assert len(panel.provider.calls) == calls_before + 1  # only the final was asked
    assert max(panel.counts.values()) == 1  # no turn was ever asked twice
    assert "Use OAuth2; we accept" in panel.prompt("dce", "final", 2)
    assert done.replayed == len(done.turns) - 1
    assert records.get_run(store, run.id)["inputs"] == [
        "Use OAuth2; we accept running an auth server."
    ]


def test_a_failed_run_resumes_where_it_stopped():
    calls = {"n": 0}

    def flaky_synthesis(request):
        calls["n"] += 1
        if calls["n"] == 1:
            return ProviderError("server down", provider="scripted", model="m", retryable=False)
        return SYNTHESIS

    panel = Panel({**SEED, ("dce", "synthesize"): flaky_synthesis})
    run, _ = nova(panel)
    assert run.status == "failed" and "server down" in run.detail
    assert len(run.turns) == 4
    done = resume(run.id, panel)
    assert done.status == "completed" and done.replayed == 4
    assert max(c for k, c in panel.counts.items() if k[1] != "synthesize") == 1


def test_unparseable_state_is_retried_once_then_recorded_unknown():
    panel = Panel({**SEED, ("performance", "experts"): "Custom JWT is faster, trust me."})
    run, _ = nova(panel)
    performance = next(t for t in run.turns if t.persona == "performance")
    assert performance.status == "unparsed" and performance.calls == 2
    assert (performance.know, performance.uncertainty) == (None, None)
    assert performance.content == "Custom JWT is faster, trust me."
    repair = panel.requests[("performance", "experts", 1)][-1].messages
    assert "no JSON object" in repair[-1].content
    assert run.status == "completed" and run.model_calls == 8


def test_an_unusable_unpacking_fails_the_run_and_names_the_fix():
    panel = Panel(
        {
            **SEED,
            ("dce", "unpack"): said(
                "x", know=0.4, uncertainty=0.7, experts=[{"name": "astrologer", "reason": "r"}]
            ),
        }
    )
    run, _ = nova(panel)
    assert run.status == "failed" and "--experts" in run.detail
    repair = panel.requests[("dce", "unpack", 0)][-1].messages[-1].content
    assert "astrologer" in repair and "security" in repair  # told what the catalogue holds


def test_a_fixed_panel_replaces_the_dces_choice():
    panel = Panel(
        {
            **SEED,
            ("dce", "unpack"): said("Framing.", know=0.5, uncertainty=0.5),
            ("legal", "experts"): said("GDPR applies.", know=0.6, uncertainty=0.3),
        }
    )
    run, _ = nova(panel, experts=("legal", "security"))
    assert [t.persona for t in run.turns if t.node.value == "experts"] == ["legal", "security"]
    with pytest.raises(ValidationError, match="not a domain expert"):
        nova(panel, experts=("cae",))


def test_the_dce_picking_too_many_experts_is_capped_and_said():
    many = said(
        "All hands.",
        know=0.4,
        uncertainty=0.7,
        experts=[
            {"name": n, "reason": "r"} for n in ("security", "performance", "integration", "ux")
        ],
    )
    panel = Panel({**SEED, ("dce", "unpack"): many, ("ux", "experts"): SECURITY})
    run, _ = nova(panel, max_experts=2)
    assert [p.name for p in run.experts] == ["security", "performance"]
    assert any("integration, ux sat out" in n for n in run.notes)


def full_history(turns):
    """The seed's ``_build_context``: every turn so far, whole."""
    return "\n\n".join(f"[{t.persona}]: {t.content}" for t in turns)


def test_context_stays_bounded_where_the_seeds_full_history_grows():
    critical = said(
        "Flawed. " * 200, know=0.6, uncertainty=0.4, severity="critical", issues=["flaw"]
    )
    long = {
        k: said("Long analysis. " * 300, know=0.6, uncertainty=0.3)
        for k in [("security", "experts"), ("performance", "experts"), ("integration", "experts")]
    }
    panel = Panel({**SEED, **long, ("cae", "critique"): critical})
    run, _ = nova(panel, max_rounds=3, context_tokens=1500)
    from noetic.llm.tokens import count_tokens

    assert max(t.context_tokens for t in run.turns) <= 1500
    assert count_tokens(full_history(run.turns)) > 3 * 1500
    assert run.status == "escalated"


def test_a_run_with_no_readable_final_recommendation_fails_and_is_no_consensus():
    """Every turn unreadable: the run used to end completed with no recommendation, and stats
    counted it as consensus."""
    from noetic.nova.decision_log import nova_stats

    unreadable = "I have thoughts but no JSON."
    panel = Panel(
        {
            **{key: unreadable for key in SEED},
            ("dce", "revise"): unreadable,  # an unreadable critique counts as minor: a revision
            ("dce", "unpack"): UNPACK,  # an unreadable unpacking fails earlier, for its own reason
        }
    )
    run, store = nova(panel)
    assert run.status == "failed" and run.recommendation is None
    assert "final recommendation could not be read" in run.detail
    assert f"noetic nova resume {run.id}" in run.detail
    assert records.get_run(store, run.id)["status"] == "failed"
    stats = nova_stats(store)
    assert (stats.completed, stats.failed, stats.consensus_rate) == (0, 1, None)

    done = resume(run.id, Panel({**SEED}))  # the DCE can answer now: only the final is asked
    assert done.status == "completed" and done.recommendation == "OAuth2 with PKCE + mobile PKCE"
    assert nova_stats(store).consensus_rate is not None


def test_a_completed_run_stored_without_a_recommendation_counts_as_failed():
    from noetic.nova.decision_log import nova_stats

    run, store = nova(Panel(SEED))
    records.update_run(store, run.id, result={**records.get_run(store, run.id)["result"],
                                               "recommendation": None})  # fmt: skip
    stats = nova_stats(store)
    assert (stats.completed, stats.failed, stats.consensus_rate) == (0, 1, None)
