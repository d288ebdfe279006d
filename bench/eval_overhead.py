"""What `noetic eval humaneval` costs outside the model: HumanEval's 164 problems against a
loopback stand-in model that answers at once, at concurrency 1 and 4.

For each concurrency: the wall time of the whole run, and per problem the time in all, the time
waiting on the model (three calls: PREFLIGHT, the function, POSTFLIGHT), the sandboxed test
run (its own time: it starts as the function is read and runs while the model reassesses),
and the rest, which is Noetic's own bookkeeping (assessments, tasks, outcomes, the run's rows,
events): the problem's time neither waiting on the model nor on its tests. Of that
bookkeeping, the part on the problem's path: the time during which neither a model call nor
its tests were under way, which is what Noetic adds to the problem's time (the writes made
while the tests run are not). Beside them, in the same run, the floor: each problem's test
program run bare as ``python -c`` in the same bubblewrap sandbox, against the judge's own run
of it (a temporary workspace, the file written, the sandbox, the verdict).

Targets: bookkeeping ≤ 10% of the sandboxed test's own time; all 164 in ≤ 3 minutes on the
2-core machine at concurrency 4. Both ratios are printed: all of the bookkeeping, and its part
on the problem's path.

    python bench/eval_overhead.py [--limit N] [--concurrency 1 4] [--baseline TREE] [--repeat R]
                                  [--latency MS]

``--latency MS`` has the stand-in take that long over each reply, as a real model does (default
0: it answers at once); the tests then end before the reassessment comes, which is then written
with their verdict in one write.

The stand-in runs in a process of its own, as a model server does, so its work on each request
is not counted in this process's time.

``--baseline TREE`` runs the same problems with the code of another checkout (its own
``.venv``; e.g. a worktree of the commit before a change) turn about with this one, each in a
process of its own, and ends with the medians of both side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evaluation.standin import StandIn
from tests.llm.model_server import running

from noetic.evaluation.grading import program, run_tests, sandboxed
from noetic.evaluation.problems import Problem, humaneval
from noetic.operations.evaluating import eval_report, start_eval
from noetic.runtime.opening import open_tracker
from noetic.tools.sandbox import choose


def right_unless_three(p: Problem) -> str:
    return "wrong" if int(p.task_id.split("/")[1]) % 3 == 0 else "right"


def source_of(p: Problem) -> str:
    code = p.prompt + (p.canonical_solution or "")
    return program(p.prompt, code, p.test, p.entry_point)


def floor(problems: list[Problem]) -> tuple[float, float]:
    """Median ms of each problem's tests run bare (``python -c`` in the same sandbox) and
    through the judge, one after the other."""
    sandbox = choose("required")
    bare, judged = [], []
    for p in problems:
        source = source_of(p)
        with tempfile.TemporaryDirectory(prefix="noetic-eval-bare-") as workspace:
            argv = sandboxed([sys.executable, "-I", "-B", "-c", source], sandbox, workspace)
            start = time.perf_counter()
            subprocess.run(argv, cwd=workspace, capture_output=True, timeout=30, check=False)
            bare.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        asyncio.run(run_tests(source, sandbox, timeout_s=30))
        judged.append((time.perf_counter() - start) * 1000)
    return statistics.median(bare), statistics.median(judged)


def _other(t: Any) -> float:
    """A problem's time neither waiting on the model nor on its tests, as the engine records
    it (a tree from before it did: its time in all less the model's and the tests')."""
    recorded = getattr(t, "ms_other", None)
    if recorded is not None:
        return float(recorded)
    return (t.ms_total or 0) - (t.ms_model or 0) - (t.ms_test or 0)


def _added(t: Any) -> float:
    """The part of it on the problem's path, as the engine records it (NaN for a tree from
    before it did)."""
    recorded = getattr(t, "ms_added", None)
    return float("nan") if recorded is None else float(recorded)


def one_run(url: str, problems: list[Problem], concurrency: int, limit: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="noetic-eval-bench-") as home:
        tracker = open_tracker(Path(home), create=True)
        start = time.perf_counter()
        run = asyncio.run(
            start_eval(
                tracker,
                provider=f"openai-compatible:{url}/v1#stand-in",
                limit=limit,
                concurrency=concurrency,
                test_timeout=30,
            )
        )
        wall = time.perf_counter() - start
        report = eval_report(tracker, run.run_id)
        tasks = [t for t in run.tasks if t.state == "done"]
        total = statistics.median(t.ms_total or 0 for t in tasks)
        model = statistics.median(t.ms_model or 0 for t in tasks)
        test = statistics.median(t.ms_test or 0 for t in tasks)
        other = statistics.median(_other(t) for t in tasks)
        added = statistics.median(_added(t) for t in tasks)
        tracker.store.close()
    print(
        f"concurrency {concurrency}: {run.done}/{run.total} judged ({run.passed} passed) in "
        f"{wall:6.1f} s wall ({wall / max(run.done, 1) * 1000:5.0f} ms a problem)"
    )
    print(
        f"  per problem (median): {total:6.1f} ms in all = model {model:6.1f} + sandboxed "
        f"tests {test:6.1f} + bookkeeping {other:6.1f}; outside the model {total - model:6.1f}"
    )
    print(
        f"  bookkeeping / sandboxed test: {other / test:6.1%}   (target ≤ 10%; report mean "
        f"{report.timing.other_ms or 0:.1f} ms)"
    )
    print(
        f"  on the problem's path (neither model nor tests under way): {added:6.2f} ms, "
        f"{added / test:6.1%} of the tests"
    )
    return {"wall": wall, "model": model, "test": test, "other": other, "added": added}


def serve(latency: float) -> None:
    """The stand-in model on loopback HTTP until standard input closes; its address first."""
    with running() as server:
        standin = StandIn(humaneval(), right_unless_three)
        server.responder = standin
        if latency:

            def slow(body: dict[str, Any]) -> Any:
                time.sleep(latency / 1000)
                return standin(body)

            server.responder = slow
        print(server.url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def serving(latency: float) -> Iterator[str]:
    """The stand-in served by a process of its own, as a model server is (its work on each
    request is not this process's), for as long as the block runs; its address."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--serve"]
    argv += ["--latency", f"{latency:g}"] if latency else []
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdin is not None and child.stdout is not None
        url = child.stdout.readline().strip()
        if not url:
            raise SystemExit("the stand-in model server did not start")
        try:
            yield url
        finally:
            child.stdin.close()
            child.wait(timeout=30)


FIGURES = re.compile(
    r"in\s+([\d.]+) s wall.*?model\s+([\d.]+) \+ sandboxed tests\s+([\d.]+) \+ "
    r"bookkeeping\s+([\d.]+)(?:.*?path.*?:\s+([\d.na]+) ms)?",
    re.DOTALL,
)


def baseline_run(tree: Path, concurrency: int, limit: int, latency: float) -> dict[str, float]:
    """The same run by the code in ``tree`` (another checkout with its own ``.venv``, whose
    ``noetic`` it imports), in a process of its own, driven by this script and this tree's
    stand-in; its figures as it prints them."""
    out = subprocess.run(
        [str(tree / ".venv/bin/python"), str(Path(__file__).resolve()), "--limit",
         str(limit), "--concurrency", str(concurrency), "--floor", "1"]
        + (["--latency", f"{latency:g}"] if latency else []),
        cwd=tree, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    found = FIGURES.search(out)
    if found is None:
        raise SystemExit(f"no figures in the baseline's output:\n{out}")
    print("  baseline: " + out.split("\n", 2)[-1].strip().replace("\n", "\n  baseline: "))
    figures = [float(g) if g is not None else float("nan") for g in found.groups()]
    return dict(zip(("wall", "model", "test", "other", "added"), figures, strict=True))


def summary(runs: dict[tuple[str, int], list[dict[str, float]]]) -> None:
    """Medians over the repeats, the baseline beside this tree."""
    print("\nmedians over the repeats (ms a problem; wall in s):")
    print(
        f"{'':14}{'wall':>8}{'model':>8}{'tests':>8}{'bookkeeping':>13}{'ratio':>8}"
        f"{'on path':>9}{'ratio':>8}"
    )
    for (who, k), figures in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        m = {key: statistics.median(f[key] for f in figures) for key in figures[0]}
        print(
            f"{who + ', c=' + str(k):14}{m['wall']:8.1f}{m['model']:8.1f}{m['test']:8.1f}"
            f"{m['other']:13.1f}{m['other'] / m['test']:8.1%}"
            f"{m['added']:9.2f}{m['added'] / m['test']:8.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=164)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--floor", type=int, default=40, help="problems timed for the floor")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout (with its .venv) whose code runs the same, turn about, beside "
        "this one: the figures before a change, in the same session",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (turn about)")
    parser.add_argument(
        "--latency", type=float, default=0.0, help="ms the stand-in takes over each reply"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return
    problems = humaneval()
    print(
        f"{os.cpu_count()} cores; {args.limit} problems; stand-in model on loopback HTTP"
        + (f", {args.latency:g} ms a reply" if args.latency else ", answering at once")
    )
    bare, judged = floor(problems[: args.floor])
    print(
        f"floor ({args.floor} problems, median): bare `python -c` in bubblewrap {bare:6.1f} ms, "
        f"the judge's sandboxed run {judged:6.1f} ms ({judged / bare:4.2f}×)"
    )
    runs: dict[tuple[str, int], list[dict[str, float]]] = {}
    with serving(args.latency) as url:
        for k in args.concurrency:
            for _ in range(args.repeat):
                if args.baseline is not None:
                    figures = baseline_run(args.baseline.resolve(), k, args.limit, args.latency)
                    runs.setdefault(("baseline", k), []).append(figures)
                runs.setdefault(("this", k), []).append(one_run(url, problems, k, args.limit))
    if args.baseline is not None or args.repeat > 1:
        summary(runs)


if __name__ == "__main__":
    os.environ.setdefault("NOETIC_INDEX", "inline")
    main()
