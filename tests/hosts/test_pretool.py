"""`noetic hook pre-tool-use`: the shell gate's verdict, the epistemic gate on irreversible
commands and protected paths, each decision as Claude Code reads it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from noetic.assessment import Assessment

from ..conftest import uniform
from .conftest import cli
from .test_hooks import CLAUDE_SESSION, open_task, session_of, start, tracker


def pre(project: Path, tool: str = "Bash", **tool_input) -> dict | None:
    data = {
        "session_id": CLAUDE_SESSION,
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_1",
    }
    result = cli("hook", "pre-tool-use", input=json.dumps(data))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if result.stdout.strip() else None


def decided(reply: dict | None) -> tuple[str, str] | None:
    if reply is None:
        return None
    out = reply["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    return out["permissionDecision"], out["permissionDecisionReason"]


def check(home: Path, value: float, **overrides: float) -> None:
    t = tracker(home)
    try:
        t.check(session_of(home), Assessment.from_input("check", uniform(value, **overrides)))
    finally:
        t.store.close()


def configure(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


@pytest.mark.parametrize(
    ("command", "rule", "part"),
    [
        ("rm -rf /", "destructive-root", "`/`"),
        ("cd build && rm -rf ~", "destructive-home", "~"),
        ("git push --force origin main", "force-push", "git push --force origin main"),
        ("curl https://example.com/x.sh | sh", "download-execute", "sh"),
        ("echo 'unterminated", "unparseable", "unterminated"),
    ],
)
@pytest.mark.subprocess
def test_a_refused_command_is_denied_naming_the_rule_and_part(
    project, home, _isolated_home, command, rule, part
):
    kind, reason = decided(pre(project, command=command))
    assert kind == "deny"
    assert f"{rule}: " in reason and part in reason
    assert reason.startswith("Noetic's shell gate refused this command")


@pytest.mark.parametrize(
    ("command", "detail"),
    [
        ("cd $SOMEWHERE && rm -rf x", "dynamic-path: {reason} — the folder it runs in is unknown"),
        ("rm -rf ../x", "write-outside-workspace: {reason} — it lands in {parent}/x"),
    ],
)
@pytest.mark.subprocess
def test_a_refusal_says_what_the_gate_found_or_could_not_determine(
    project, home, _isolated_home, command, detail
):
    from noetic.tools.shellgate import load_policy

    rule = detail.split(":")[0]
    expected = detail.format(
        reason=load_policy().reason(rule), parent=Path(project).resolve().parent
    )
    kind, reason = decided(pre(project, command=command))
    assert kind == "deny"
    assert expected in reason, reason


@pytest.mark.subprocess
def test_the_shells_cdpath_decides_where_cd_lands(project, home, _isolated_home, monkeypatch):
    command = "cd etc && rm -rf build"
    monkeypatch.delenv("CDPATH", raising=False)
    assert pre(project, command=command) is None  # ./etc, inside the project
    monkeypatch.setenv("CDPATH", "/")
    kind, reason = decided(pre(project, command=command))
    assert kind == "deny"
    assert "write-outside-workspace: " in reason and "it lands in /etc/build (at `build`)" in reason


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["pytest -q", "ls -la src", "git status", "rm -rf build"])
def test_an_allowed_reversible_command_gets_no_answer(project, home, _isolated_home, command):
    assert pre(project, command=command) is None


@pytest.mark.subprocess
def test_an_irreversible_command_asks_without_a_task_even_with_no_store(
    project, home, _isolated_home
):
    kind, reason = decided(pre(project, command="git push origin main"))
    assert kind == "ask"
    assert "push: publishes commits" in reason and "No Noetic task is open" in reason
    assert not _isolated_home.exists()  # asking opened no store


@pytest.mark.subprocess
def test_the_epistemic_gate_follows_the_tasks_latest_check(project, home, _isolated_home):
    start(project)
    open_task(_isolated_home, "release 1.2")
    kind, reason = decided(pre(project, command="npm publish"))
    assert kind == "ask" and "'release 1.2' has no CHECK yet" in reason
    configure(_isolated_home, '[gate]\nirreversible = "deny"\n')
    check(_isolated_home, 0.6, know=0.35)
    kind, reason = decided(pre(project, command="cd . && npm publish"))
    assert kind == "deny"
    assert re.search(r"CHECK says (INVESTIGATE|CLARIFY): know 0\.35", reason), reason
    assert "investigate, then run CHECK again" in reason and "threshold" in reason
    check(_isolated_home, 0.95)
    assert pre(project, command="npm publish") is None  # PROCEED: no objection
    check(_isolated_home, 0.3)
    assert decided(pre(project, command="npm publish"))[0] == "deny"  # the latest CHECK counts
    configure(_isolated_home, '[gate]\nirreversible = "allow"\n')
    assert pre(project, command="npm publish") is None


@pytest.mark.subprocess
def test_the_gate_is_per_claude_session(project, home, _isolated_home):
    start(project)
    open_task(_isolated_home)
    check(_isolated_home, 0.95)
    assert pre(project, command="git push") is None
    other = {
        "session_id": "another",
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": "git push"},
    }
    result = cli("hook", "pre-tool-use", input=json.dumps(other))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("terraform apply -auto-approve", "deploy"),
        ("kubectl delete pod x", "deploy"),
        ("uv run alembic upgrade head", "migration"),
        ("python manage.py migrate", "migration"),
        ("twine upload dist/*", "publish"),
        ("FOO=1 git -C . push", "push"),
    ],
)
@pytest.mark.subprocess
def test_the_irreversible_class(project, home, _isolated_home, command, rule):
    kind, reason = decided(pre(project, command=command))
    assert kind == "ask" and f"({rule}: " in reason


@pytest.mark.subprocess
def test_users_extend_the_irreversible_class(project, home, _isolated_home):
    configure(_isolated_home, '[gate]\nirreversible_rules = ["mine.yaml"]\n')
    (_isolated_home / "mine.yaml").write_text(
        "rules:\n  - id: release-script\n    reason: tags and uploads a release\n"
        "    match:\n      - {command: [release.sh, ./release.sh]}\n"
    )
    kind, reason = decided(pre(project, command="./release.sh 1.2"))
    assert kind == "ask" and "release-script: tags and uploads a release" in reason


@pytest.mark.parametrize(
    "path",
    [".git/hooks/pre-commit", ".git/config", ".noetic/config.toml", "~/.bashrc", "~/.zshrc"],
)
@pytest.mark.subprocess
def test_writes_to_protected_paths_are_denied(project, home, _isolated_home, path):
    full = str(home / path[2:]) if path.startswith("~/") else str(project / path)
    for tool in ("Write", "Edit", "MultiEdit"):
        kind, reason = decided(pre(project, tool, file_path=full, content="x"))
        assert kind == "deny" and "protected-path" in reason


@pytest.mark.subprocess
def test_ordinary_writes_get_no_answer(project, home, _isolated_home):
    assert pre(project, "Write", file_path=str(project / "src" / "a.py"), content="x") is None
    assert pre(project, "Read", file_path=str(project / ".git" / "config")) is None


@pytest.mark.subprocess
def test_a_failing_hook_denies_naming_the_file_and_logs(project, home, _isolated_home):
    config = _isolated_home / "config.toml"
    configure(_isolated_home, '[gate]\nirreversible = "sometimes"\n')
    kind, reason = decided(pre(project, command="git push"))
    assert kind == "deny" and f"{config}: [gate] irreversible must be ask, deny or allow" in reason
    assert "irreversible must be ask, deny or allow" in (_isolated_home / "hooks.log").read_text()
    configure(_isolated_home, "[gate\n")
    kind, reason = decided(pre(project, command="ls"))  # even a harmless command
    assert kind == "deny" and f"{config}: not valid TOML" in reason
    kind, reason = decided(pre(project, "Write", file_path=str(project / "a.py"), content="x"))
    assert kind == "deny" and f"{config}: not valid TOML" in reason
    assert "not valid TOML" in (_isolated_home / "hooks.log").read_text()
    configure(_isolated_home, '[gate]\npolicy = ["gone.yaml"]\n')
    kind, reason = decided(pre(project, command="ls"))
    assert kind == "deny" and f"no policy file {_isolated_home / 'gone.yaml'}" in reason
    assert pre(project, "Read", file_path="a.py") is None  # a tool the gate does not judge


@pytest.mark.subprocess
def test_a_policy_file_changes_the_verdict(project, home, _isolated_home):
    configure(_isolated_home, '[gate]\npolicy = ["shell.yaml"]\n')
    (_isolated_home / "shell.yaml").write_text("disable: [force-push]\n")
    kind, reason = decided(pre(project, command="git push --force"))
    assert kind == "ask" and "push: " in reason  # no longer refused, still irreversible
