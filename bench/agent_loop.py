"""The cognitive agent, measured: the shell gate, the loop's own cost, the first answer token.

1. Shell gate decisions per second on the 60+60 command table (``tests/tools/
   test_shellgate_table.py``), beside two baselines in the same run: the tree-sitter parse alone
   (the floor under any syntax-tree gate) and ``shlex.split`` (what a tokenizing gate costs).
2. False positives and negatives on the table: the gate, beside a keyword blocklist of the kind
   the seed's README implies (substring rules for rm -rf, sudo, curl|sh …) in the same run.
3. Per-step overhead of the loop, model time excluded: a ScriptedProvider answers at once and a
   trivial tool returns at once, so what is left is the agent's own work per reason+act step;
   baseline: the same number of provider and tool calls made in a bare loop.
4. Time to the first streamed token of the answer against the local model server (tests/llm/
   model_server.py, OpenAI wire, 5 ms between tokens, a triage and one tool step first),
   beside the first token of one bare streamed call to the same server.

    python bench/agent_loop.py
"""

from __future__ import annotations

import asyncio
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.model_server import Behaviour, calls, running, structured
from tests.tools.test_shellgate_table import BENIGN, DANGEROUS

from noetic.agent import Agent, TextDelta
from noetic.llm.base import Request, ToolSpec, stream_completion
from noetic.llm.scripted import ScriptedProvider, calling
from noetic.tools.base import tool
from noetic.tools.shellgate import check_command, load_policy
from noetic.tools.shellgate.syntax import _parser

ROUNDS = 20


def rate(fn, items, rounds=ROUNDS) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        for item in items:
            fn(item)
    return rounds * len(items) / (time.perf_counter() - start)


BLOCKLIST = (
    "rm -rf", "rm -fr", "sudo", "| sh", "| bash", "mkfs", "dd if=", ":(){", "chmod 777",
    "> /dev/sd", "--force", "push -f", ".ssh", "/etc/shadow", "history -c", "eval",
)  # fmt: skip


def blocked(command: str) -> bool:
    return any(k in command for k in BLOCKLIST)


def _split(command: str) -> list[str] | None:
    try:
        return shlex.split(command)
    except ValueError:  # an unterminated quote
        return None


def gate_figures(ws: Path, home: str) -> None:
    commands = [c for c, _ in DANGEROUS] + BENIGN
    policy = load_policy()
    check_command("ls", ws, policy, home=home)  # warm: grammar loaded, caches built
    gate = rate(lambda c: check_command(c, ws, policy, home=home), commands)
    grammar = _parser()
    parsed = rate(lambda c: grammar.parse(c.encode()), commands)
    tokens = rate(_split, commands)
    print(f"gate decisions/s on {len(commands)} commands: {gate:,.0f}")
    print(f"  baseline tree-sitter parse alone:        {parsed:,.0f}/s")
    print(f"  baseline shlex.split:                    {tokens:,.0f}/s")
    fn = sum(check_command(c, ws, policy, home=home).allowed for c, _ in DANGEROUS)
    wrong = sum(
        r not in [v.rule for v in check_command(c, ws, policy, home=home).violations]
        for c, r in DANGEROUS
    )
    fp = sum(not check_command(c, ws, policy, home=home).allowed for c in BENIGN)
    naive_fn = sum(not blocked(c) for c, _ in DANGEROUS)
    naive_fp = sum(blocked(c) for c in BENIGN)
    print(
        f"table: {len(DANGEROUS)} dangerous, {len(BENIGN)} benign\n"
        f"  gate:      false negatives {fn}, false positives {fp}, wrong rule named {wrong}\n"
        f"  blocklist: false negatives {naive_fn}, false positives {naive_fp}"
    )


def loop_overhead(ws: Path) -> None:
    steps = 8

    def noop(n: int) -> str:
        """Return at once.

        Args:
            n: step
        """
        return "ok"

    def reply(request: Request):
        if (request.system or "").startswith("You triage"):
            return json.dumps({"safe": True, "tools": ["noop"], "mode": "deep"})
        done = sum(1 for m in request.messages if m.tool_results)
        return calling(("noop", {"n": done})) if done < steps else "finished"

    times = []
    for i in range(15):
        agent = Agent(provider=ScriptedProvider(reply), workspace=ws, home=ws / f".noetic{i % 2}",
                      tools=[tool(noop)], mode="deep", max_iterations=20)  # fmt: skip
        start = time.perf_counter()
        result = agent.run("loop")
        times.append((time.perf_counter() - start) / (result.iterations))
        agent.close()
    noop_tool = tool(noop)

    async def bare() -> float:
        provider = ScriptedProvider(reply)
        start = time.perf_counter()
        await provider.complete(Request.of("x", system="You triage"))
        offered = (ToolSpec(**noop_tool.spec()),)
        for n in range(steps + 1):
            await provider.complete(Request.of(f"step {n}", tools=offered))
            await noop_tool.call({"n": n})
        return (time.perf_counter() - start) / (steps + 1)

    base = [asyncio.run(bare()) for _ in range(15)]
    print(
        f"loop overhead per step ({steps} tool steps + answer, scripted model, no-op tool): "
        f"median {statistics.median(times) * 1000:.2f} ms\n"
        f"  baseline bare provider+tool calls:       median {statistics.median(base) * 1000:.3f} ms"
    )


def first_token(ws: Path) -> None:
    from noetic.llm.openai_compat import OpenAICompatibleProvider

    answer = " ".join(f"word{i}" for i in range(40))
    agent_ttft, bare_ttft = [], []
    with running() as server:
        import openai

        def provider():
            client = openai.AsyncOpenAI(api_key="k", base_url=f"{server.url}/v1", max_retries=0)
            return OpenAICompatibleProvider("local", name="openai", client=client)

        for _ in range(5):
            server.enqueue(
                structured({"safe": True, "tools": ["file_list"], "mode": "fast"}),
                calls(("c1", "file_list", {})),
                Behaviour(text=answer, token_delay=0.005),
            )
            agent = Agent(provider=provider(), workspace=ws, home=ws / ".noetic", tools=None,
                          sandbox="off")  # fmt: skip

            async def go(agent: Agent = agent) -> float:
                start = time.perf_counter()
                first = float("nan")
                async for item in agent.stream("list the folder"):
                    if isinstance(item, TextDelta) and first != first:
                        first = time.perf_counter() - start
                return first

            agent_ttft.append(asyncio.run(go()))
            agent.close()
            server.enqueue(Behaviour(text=answer, token_delay=0.005))

            async def bare() -> float:
                model = provider()
                start = time.perf_counter()
                first = float("nan")
                async for item in stream_completion(model, Request.of("hi")):
                    if isinstance(item, str) and first != first:
                        first = time.perf_counter() - start
                return first

            bare_ttft.append(asyncio.run(bare()))
    print(
        f"first answer token through the agent (triage + 1 tool step + streamed answer): "
        f"median {statistics.median(agent_ttft) * 1000:.1f} ms\n"
        f"  baseline first token of one bare streamed call: "
        f"median {statistics.median(bare_ttft) * 1000:.1f} ms"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "src").mkdir(parents=True)
        (ws / "src" / "app.py").write_text("print('app')\n")  # the table's `python -m app`
        home = Path(tmp) / "home"
        home.mkdir()
        gate_figures(ws, str(home))
        loop_overhead(ws)
        first_token(ws)


if __name__ == "__main__":
    main()
