"""A stand-in model for eval runs, served over real HTTP by the loopback model server: it
answers each request from what it asks (which problem, which phase), so many problems can run
at once. It writes the canonical solution for the problems it is told to get right and a wrong
function (or a hostile one) for the rest, and states fixed probabilities of success."""

from __future__ import annotations

import glob
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

from noetic.evaluation.problems import Problem
from noetic.vectors import VECTOR_NAMES

from ..llm.model_server import Behaviour, reply, structured

WRONG = "def {name}(*args, **kwargs):\n    raise ValueError('not written')\n"
LOOPS = "def {name}(*args, **kwargs):\n    while True:\n        pass\n"
HUNGRY = (  # allocates a megabyte at a time, without end
    "def {name}(*args, **kwargs):\n"
    "    held = []\n"
    "    while True:\n"
    "        held.append(bytearray(1 << 20))\n"
)
SLOW = "import time\ntime.sleep({seconds})\n\n"  # before the right function: slow tests
ESCAPES = (
    "def {name}(*args, **kwargs):\n"
    "    open('/usr/noetic-eval-escape', 'w').write('x')\n"
    "    return None\n"
)


def assessment(p: float) -> dict[str, Any]:
    vectors = {v: {"score": p, "rationale": "r", "evidence": "e"} for v in VECTOR_NAMES}
    for inverted in ("density", "uncertainty"):
        vectors[inverted]["score"] = round(1 - p, 6)
    return {"vectors": vectors, "p_success": p, "recommended_action": "PROCEED", "note": "n"}


class StandIn:
    """``code(problem)`` says what the model writes for a problem: ``"right"``, ``"wrong"``,
    ``"loops"``, ``"escapes"``, ``"hungry"`` (allocates without end), ``"none"`` (a reply
    with no code) or ``"unreadable"`` (no assessment it gives can be read); ``stated`` the
    p_success it states at ``preflight``, ``postflight`` and ``adversarial`` reviews."""

    def __init__(
        self,
        problems: Iterable[Problem],
        code: Callable[[Problem], str],
        stated: dict[str, float] | None = None,
    ) -> None:
        self.problems = list(problems)
        self.code = code
        self.stated = {"preflight": 0.8, "postflight": 0.7, "adversarial": 0.5, **(stated or {})}
        self.asked: list[tuple[str, str]] = []  # (task id, what was asked)
        self.delay = 0.0  # seconds before each reply with code
        # True: each reassessment is answered only once the problem's tests have been seen
        # running and have then ended (their workspace gone); ``overlapped`` says, for each,
        # whether they were seen at all
        self.after_the_tests = False
        self.overlapped: list[bool] = []
        self.slow_s = 1.5  # how long the tests of a "slow" function take, at least

    def problem(self, text: str) -> Problem:
        found = [p for p in self.problems if p.prompt.rstrip() in text]
        assert len(found) >= 1, "a request about no known problem"
        return max(found, key=lambda p: len(p.prompt))

    def __call__(self, body: dict[str, Any]) -> Behaviour:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        problem = self.problem(text)
        if "Assess your own epistemic state" in text:
            if "critical reviewer" in text:
                phase = "adversarial"
            elif "given the work as it now stands" in text:
                phase = "postflight"
            else:
                phase = "preflight"
            self.asked.append((problem.task_id, phase))
            if self.code(problem) == "unreadable":
                return reply("I am not sure how I feel about this.")
            if phase != "preflight" and self.after_the_tests:
                self.overlapped.append(_tests_seen_to_the_end())
            stated = assessment(self.stated[phase])
            return structured(stated, text=json.dumps(stated))
        self.asked.append((problem.task_id, "code"))
        kind = self.code(problem)
        if self.delay:
            time.sleep(self.delay)
        if kind == "none":
            return reply("I would rather not write this one.")
        if kind in ("right", "slow"):
            source = problem.prompt + (problem.canonical_solution or "")
            if kind == "slow":
                source = SLOW.format(seconds=self.slow_s) + source
        else:
            hostile = {"wrong": WRONG, "loops": LOOPS, "escapes": ESCAPES, "hungry": HUNGRY}
            source = hostile[kind].format(name=problem.entry_point)
        return reply(f"Here it is:\n\n```python\n{source}```\n")


def _tests_seen_to_the_end(wait_s: float = 5.0) -> bool:
    """Whether a test program's workspace (the eval's, under the temporary folder the test
    gives it) appears within ``wait_s`` and is then removed, as the judge does once the
    verdict is in."""
    pattern = os.path.join(tempfile.gettempdir(), "noetic-eval-*", "program.py")
    deadline = time.monotonic() + wait_s
    while not glob.glob(pattern):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    deadline = time.monotonic() + 30
    while glob.glob(pattern) and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)  # the judge's own return, after the workspace goes
    return True
