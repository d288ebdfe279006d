"""The epistemic gate: CASCADE around a run, and irreversible actions held until cleared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from noetic.agent import Agent
from noetic.agent.epistemic import irreversible
from noetic.llm.base import Request, ToolCall
from noetic.llm.scripted import ScriptedProvider, calling
from noetic.store import Store
from noetic.tools.file_tools import SandboxRoot
from noetic.tools.shellgate import load_policy
from noetic.vectors import VECTOR_NAMES


def scores(value: float) -> str:
    body = {v: {"score": value, "rationale": "r"} for v in VECTOR_NAMES}
    body["engagement"]["score"] = body["coherence"]["score"] = 0.9
    body["density"]["score"] = body["uncertainty"]["score"] = round(1 - value, 2)
    return json.dumps({"vectors": body})


class Model:
    """Triage, assessments at the confidence given per phase, and the reason steps."""

    def __init__(self, steps: list[Any], check: float = 0.9) -> None:
        self.steps = steps
        self.check = check
        self.phases: list[str] = []

    def __call__(self, request: Request) -> Any:
        system = request.system or ""
        if system.startswith("You triage"):
            return json.dumps({"safe": True, "tools": ["file_write", "file_read", "shell"],
                               "mode": "fast"})  # fmt: skip
        if system.startswith("You are assessing"):
            text = request.messages[-1].content
            phase = next(p for p in ("PREFLIGHT", "CHECK", "POSTFLIGHT") if p in text)
            self.phases.append(phase)
            return scores(self.check if phase == "CHECK" else 0.8)
        step = self.steps.pop(0)
        return step(request) if callable(step) else step


def agent(tmp_path: Path, model: Model, **kw: Any) -> Agent:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "config.toml").write_text("old = true\n")
    return Agent(provider=ScriptedProvider(model), workspace=ws, home=tmp_path / ".noetic",
                 sandbox="required", **kw)  # fmt: skip


OVERWRITE = calling(("file_write", {"path": "config.toml", "content": "new = true\n"}))


@pytest.mark.subprocess
def test_a_confident_check_lets_the_irreversible_action_run(tmp_path: Path) -> None:
    model = Model([OVERWRITE, "rewrote it"], check=0.9)
    a = agent(tmp_path, model, approve="never")
    result = a.run("rewrite the config")
    assert (tmp_path / "ws" / "config.toml").read_text() == "new = true\n"
    assert model.phases == ["PREFLIGHT", "CHECK", "POSTFLIGHT"]
    assert result.status == "done"
    with Store(tmp_path / ".noetic") as store:
        (cascade,) = store.conn.execute("SELECT id, status FROM cascades").fetchall()
        assert cascade[1] == "completed"
        phases = [a.assessment.phase for a in store.assessments(cascade_id=cascade[0])]
        assert phases == ["preflight", "check", "postflight"]
        rounds = store.conn.execute("SELECT tool, success FROM investigations").fetchall()
        assert [tuple(r) for r in rounds] == [("file_write", 1)]


@pytest.mark.subprocess
def test_a_low_check_holds_the_action_and_tells_the_model_why(tmp_path: Path) -> None:
    seen: list[str] = []

    def after_hold(request: Request) -> str:
        seen.append(request.messages[-1].tool_results[0].content)
        return "I will investigate first"

    model = Model([OVERWRITE, after_hold], check=0.3)
    a = agent(tmp_path, model, approve="never")
    result = a.run("rewrite the config")
    assert (tmp_path / "ws" / "config.toml").read_text() == "old = true\n"
    assert "held: this action is irreversible (it overwrites config.toml)" in seen[0]
    assert "CHECK gave CLARIFY (confidence 0.35" in seen[0]
    assert ("hold", "epistemic-gate") in [
        (e.data["action"], e.data["rule"]) for e in a.events if e.kind == "decision"
    ]
    assert result.answer == "I will investigate first"


@pytest.mark.subprocess
@pytest.mark.parametrize("answer", [True, False])
def test_ask_asks_a_person_when_check_does_not_clear_it(tmp_path: Path, answer: bool) -> None:
    questions: list[str] = []

    async def ask(question: str) -> bool:
        questions.append(question)
        return answer

    model = Model([OVERWRITE, "done"], check=0.3)
    a = agent(tmp_path, model, approve="ask", ask=ask)
    a.run("rewrite the config")
    assert len(questions) == 1 and "overwrites config.toml" in questions[0]
    assert "CHECK confidence" in questions[0]
    expected = "new = true\n" if answer else "old = true\n"
    assert (tmp_path / "ws" / "config.toml").read_text() == expected


@pytest.mark.subprocess
def test_always_asks_without_a_check_and_never_without_a_person(tmp_path: Path) -> None:
    asked: list[str] = []

    async def ask(question: str) -> bool:
        asked.append(question)
        return True

    model = Model([OVERWRITE, "done"], check=0.9)
    agent(tmp_path, model, approve="always", ask=ask).run("rewrite the config")
    assert len(asked) == 1 and "CHECK" not in model.phases
    # `ask` with no way to ask (no terminal): the answer is no
    model = Model([calling(("shell", {"command": "rm config.toml"})), "done"], check=0.2)
    agent(tmp_path, model, approve="ask").run("delete the config")
    assert (tmp_path / "ws" / "config.toml").exists()


@pytest.mark.subprocess
def test_reversible_actions_need_no_check(tmp_path: Path) -> None:
    model = Model(
        [
            calling(("file_read", {"path": "config.toml"}), ("shell", {"command": "ls -la"})),
            calling(("file_write", {"path": "scratch/notes.md", "content": "x"})),
            "read it",
        ]
    )
    agent(tmp_path, model, approve="never", scratch="scratch").run("look")
    assert model.phases == ["PREFLIGHT", "POSTFLIGHT"]


def test_what_counts_as_irreversible(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("x")
    root, policy = SandboxRoot(tmp_path), load_policy()

    def effect(name: str, **args: Any) -> str | None:
        return irreversible(ToolCall(id="c", name=name, arguments=args), root, "tmp", policy)

    assert effect("file_write", path="kept.txt", content="y") == "overwrites kept.txt"
    assert effect("file_write", path="new.txt", content="y") == "writes new.txt"
    assert effect("file_write", path="tmp/new.txt", content="y") is None
    assert effect("file_edit", path="kept.txt", old="x", new="y") == "edits kept.txt"
    assert effect("file_read", path="kept.txt") is None
    for command, phrase in [
        ("rm -f kept.txt", "deletes"),
        ("find . -name '*.o' -delete", "deletes"),
        ("git push origin main", "pushes"),
        ("git reset --hard HEAD~1", "discards changes"),
        ("sed -i 's/a/b/' kept.txt", "writes"),
        ("echo x > kept.txt", "writes kept.txt"),
    ]:
        assert phrase in (effect("shell", command=command) or ""), command
    for command in ["ls -la", "git status", "cat kept.txt > /dev/null", "grep -r x .", "git diff"]:
        assert effect("shell", command=command) is None, command


@pytest.mark.subprocess
def test_a_profile_asking_for_adversarial_review_gets_one_at_postflight(tmp_path: Path) -> None:
    profiles = tmp_path / ".noetic" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "balanced.yaml").write_text("name: balanced\npostflight_review: adversarial\n")
    prompts: list[str] = []

    class Reviewed(Model):
        def __call__(self, request: Request) -> Any:
            if (request.system or "").startswith("You are assessing"):
                prompts.append(request.messages[-1].content)
            return super().__call__(request)

    result = agent(tmp_path, Reviewed(["nothing to change"]), approve="never").run("read it")
    assert result.status == "done"
    assert "find bugs" in prompts[-1] and "POSTFLIGHT" in prompts[-1]
    assert all("find bugs" not in p for p in prompts[:-1])
    with Store(tmp_path / ".noetic") as store:
        post = [a.assessment for a in store.assessments() if a.assessment.phase == "postflight"]
        assert [a.review for a in post] == ["adversarial"]
