"""NovaProcess, measured: turns and calls per decision, prompt tokens, the expert phase's time.

1. Turns and model calls per decision on a scripted set of five deliberations (the seed's
   OAuth2 example, a CHECK-gate loop, a critical critique, a minor revision, an escalation),
   untracked and tracked as a task (PREFLIGHT, CHECK at each gate, POSTFLIGHT).
2. Prompt tokens per decision with 5 experts and 3 rounds (two critical critiques, then none),
   counted with the real tokenizer: Noetic's bounded context beside the seed's
   ``_build_context`` (every earlier turn pasted into every prompt) on the same script.
3. Wall time of the expert phase with 5 experts, concurrent beside one after another, against
   the local model server (tests/llm/model_server.py, OpenAI wire) answering each call after a
   fixed 200 ms; the target is the concurrent phase within 1.3× one expert turn.

    python bench/nova_process.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.model_server import Behaviour, running
from tests.nova.panel import Panel, said
from tests.nova.test_engine import SEED
from tests.nova.test_tracking import ASSESSED

from noetic.events import EventKind
from noetic.llm.tokens import count_tokens
from noetic.nova import NovaSettings, resume_nova, run_nova
from noetic.nova.personas import Catalogue
from noetic.nova.prompts import instruction, system
from noetic.nova.turns import Turn
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store

QUESTION = "Should we use OAuth2 or custom JWT?"


def full_history(turns: list[Turn]) -> str:
    """The seed's ``_build_context``: every turn so far, whole (what Noetic's context replaces)."""
    return "\n\n".join(f"[{t.persona}]: {t.content}" for t in turns)


DELAY_S = 0.2
FIVE = ("security", "performance", "architecture", "integration", "operations")


def critical(text: str) -> str:
    return said(text, know=0.6, uncertainty=0.4, severity="critical", issues=["revocation"])


SCENARIOS = {
    "seed OAuth2 example": {},
    "CHECK gate loops once": {
        ("dce", "synthesize", 1): said("Unsure.", know=0.5, uncertainty=0.6, proposal="OAuth2?",
                                       open_question="partners?"),
    },
    "critical critique loops": {("cae", "critique", 1): critical("No revocation.")},
    "minor critique, revision": {
        ("cae", "critique"): said("Mobile.", know=0.7, uncertainty=0.3, severity="minor"),
        ("dce", "revise"): said("Revised.", know=0.85, uncertainty=0.2, proposal="OAuth2+PKCE"),
    },
    "escalated, then decided": {("cae", "critique"): critical("Still no revocation.")},
}  # fmt: skip


def ctx_for(home: Path, provider, *, session: bool):
    store = Store(home)
    tracker = Tracker(store, ProfileRegistry(), checkpoints=False)
    sid = tracker.bootstrap(ai_id="bench")[0].id if session else None
    return build_context("nova", tracker=tracker, provider=provider, session_id=sid)


def decide(answers, *, tracked: bool) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        panel = Panel({**SEED, **ASSESSED, **answers})
        settings = NovaSettings(max_rounds=2, recall=False, track=tracked)
        run = asyncio.run(
            run_nova(ctx_for(Path(tmp), panel.provider, session=tracked), QUESTION,
                     settings=settings)
        )  # fmt: skip
        calls, turns = run.model_calls, len(run.turns) + len(run.assessments)
        if run.status == "escalated":
            ctx = ctx_for(Path(tmp), panel.provider, session=False)
            ctx.session_id = run.session_id
            done = asyncio.run(resume_nova(ctx, run.id, input="Use OAuth2."))
            calls += done.model_calls
            turns = len(done.turns) + len(done.assessments)
        return turns, calls


def turns_and_calls() -> None:
    print("1. turns and model calls per decision (scripted set of five)")
    for tracked in (False, True):
        rows = [(name, *decide(a, tracked=tracked)) for name, a in SCENARIOS.items()]
        label = "tracked as a task" if tracked else "untracked"
        for name, turns, calls in rows:
            print(f"   {label:<18} {name:<26} {turns:3d} turns {calls:3d} calls")
        print(f"   {label:<18} {'mean':<26} {statistics.fmean(r[1] for r in rows):5.1f} turns "
              f"{statistics.fmean(r[2] for r in rows):5.1f} calls")  # fmt: skip


def long_reply(who: str, i: int) -> str:
    body = " ".join(f"{who} point {k}: the trade-off between token lifetime, revocation and "
                    "client support matters here." for k in range(18))  # fmt: skip
    return f"## Analysis {i}\n{body}"


def prompt_tokens() -> None:
    answers = {  # the panel learns each round, so the state moves and does not converge
        (e, "experts", r): said(long_reply(e, r), know=0.4 + 0.15 * r, uncertainty=0.5 - 0.1 * r)
        for e in FIVE
        for r in (1, 2, 3)
    }
    answers.update({
        ("dce", "unpack"): said(long_reply("dce", 0), know=0.4, uncertainty=0.7,
                                experts=[{"name": e, "reason": "r"} for e in FIVE]),
        ("dce", "synthesize"): said(long_reply("synthesis", 2), know=0.7, uncertainty=0.3,
                                    proposal="OAuth2"),
        ("cae", "critique", 1): critical(long_reply("critic", 3)),
        ("cae", "critique", 2): critical(long_reply("critic", 4)),
        ("cae", "critique", 3): said(long_reply("critic", 5), know=0.8, uncertainty=0.2,
                                     severity="none"),
    })  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        panel = Panel({**SEED, **answers})
        settings = NovaSettings(max_rounds=3, recall=False, track=False, max_experts=5)
        run = asyncio.run(
            run_nova(ctx_for(Path(tmp), panel.provider, session=False), QUESTION,
                     settings=settings)
        )  # fmt: skip
    assert run.rounds == 3 and run.status == "completed", run.status
    catalogue = Catalogue()
    seed_total = 0
    for i, turn in enumerate(run.turns):
        persona = catalogue.get(turn.persona)
        seed_total += count_tokens(system(persona, turn.node)) + count_tokens(
            f"{QUESTION}\n\n{full_history(run.turns[:i])}\n\n{instruction(turn.node, settings, '')}"
        )
    ours = sum(t.prompt_tokens for t in run.turns)
    print("2. prompt tokens per decision, 5 experts, 3 rounds "
          f"({len(run.turns)} turns, same script)")  # fmt: skip
    print(f"   seed full-history context (baseline) {seed_total:8d}")
    print(f"   Noetic bounded context              {ours:8d}   ratio {ours / seed_total:.2f}")
    print(f"   largest single prompt: Noetic {max(t.prompt_tokens for t in run.turns)}")


def expert_phase(server_url: str, concurrency: int) -> tuple[float, float]:
    spec = f"openai-compatible:{server_url}/v1#bench"
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ctx_for(Path(tmp), None, session=False)
        ctx = build_context("nova", tracker=ctx.tracker, provider=spec)
        marks: list[tuple[str, float]] = []
        ctx.bus.subscribe(
            lambda e: marks.append((e.kind, time.perf_counter()))
            if e.data.get("phase") == "NOVA_EXPERTS" else None
        )  # fmt: skip
        settings = NovaSettings(experts=FIVE, concurrency=concurrency, recall=False, track=False)
        run = asyncio.run(run_nova(ctx, QUESTION, settings=settings))
    started = min(t for k, t in marks if k == EventKind.PHASE_ENTERED)
    ended = max(t for k, t in marks if k == EventKind.PHASE_COMPLETED)
    one = statistics.median(t.ms for t in run.turns if t.node.value == "experts")
    return (ended - started) * 1000, one


def wall_time() -> None:
    reply = said("Analysis.", know=0.8, uncertainty=0.2, proposal="OAuth2", severity="none",
                 recommendation="OAuth2", confidence=0.9)  # fmt: skip
    with running() as server:
        server.default = Behaviour(text=reply, delay=DELAY_S)
        expert_phase(server.url, 5)  # warm-up: client and tokenizer loaded
        seq, one_seq = expert_phase(server.url, 1)
        con, _ = expert_phase(server.url, 5)
    print(f"3. expert phase, 5 experts, model server answering after {DELAY_S * 1000:.0f} ms")
    print(f"   one after another (baseline) {seq:7.0f} ms   (one expert turn {one_seq:.0f} ms)")
    print(f"   concurrent                   {con:7.0f} ms   ratio to sequential {con / seq:.2f}, "
          f"to one expert turn {con / one_seq:.2f} (target ≤ 1.3)")  # fmt: skip


if __name__ == "__main__":
    turns_and_calls()
    prompt_tokens()
    wall_time()
