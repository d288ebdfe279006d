"""CASCADE engine overhead per phase with scripted replies (so model time is ~0), and the model
calls and tokens of a run with a 3-round investigation (tokens counted with Noetic's offline
tokenizer on the real prompts and replies)."""

import asyncio
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cascade.test_engine import call, scores, step, think

from noetic.cascade.engine import run_cascade
from noetic.llm.scripted import ScriptedProvider
from noetic.llm.tokens import count_tokens
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.tools.discovery import discover

RUNS = 20


def replies() -> list[str]:
    return [
        scores(0.5), think(complex_=True),
        json.dumps({"subgoals": ["find the parser", "reproduce", "fix"]}),
        step(call("search_text", pattern="def parse")), scores(0.55),
        step(call("read_file", path="app.py")), scores(0.6),
        step(call("list_tree")), scores(0.9),
        "Guard the empty string before int().", scores(0.9),
    ]  # fmt: skip


async def main() -> None:
    per_phase: dict[str, list[float]] = defaultdict(list)
    calls, tokens_in, tokens_out = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "app.py").write_text("def parse(x):\n    return int(x)\n")
        with Store(Path(tmp) / "store") as store:
            tracker = Tracker(store, ProfileRegistry())
            for _ in range(RUNS):
                session, _ = tracker.bootstrap(profile="balanced")
                provider = ScriptedProvider(replies())
                ctx = build_context("cascade", tracker=tracker, provider=provider,
                                    session_id=session.id, tools=discover(ws))  # fmt: skip
                run = await run_cascade(ctx, "fix the parser")
                assert run.rounds == 3, run.status
                for p in run.phases:
                    per_phase[p["phase"]].append(p["ms"])
                calls.append(len(provider.calls))
                tokens_in.append(sum(count_tokens((r.system or "") + "".join(
                    m.content for m in r.messages)) for r in provider.calls))  # fmt: skip
                tokens_out.append(sum(count_tokens(t) for t in replies()))
    print(f"engine overhead per phase, scripted model (median of {RUNS} runs; includes SQLite,")
    print("JSON and reflex-log writes for assessment phases):")
    for phase, values in per_phase.items():
        print(f"  {phase:<11} {statistics.median(values):7.2f} ms")
    print(
        f"3-round investigation: {statistics.median(calls):.0f} model calls, "
        f"~{statistics.median(tokens_in):,.0f} prompt tokens and "
        f"~{statistics.median(tokens_out):,.0f} reply tokens per run"
    )


if __name__ == "__main__":
    asyncio.run(main())
