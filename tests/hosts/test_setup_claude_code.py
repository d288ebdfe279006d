"""`noetic setup claude-code`: real settings files in a temporary home and project."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from noetic.hosts.setup import claude_code
from noetic.hosts.setup.config_edits import apply

from .conftest import cli, cli_json, snapshot

USER_SETTINGS = """{
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
    }
}"""  # four-space indentation, no final newline: the user's own layout
USER_MCP = '{\n  "mcpServers": {\n    "github": {"command": "gh-mcp", "args": []}\n  }\n}\n'
USER_CLAUDE_MD = "# My project\n\nAlways run the linter.\n"


def ours(settings: dict, event: str) -> list[dict]:
    return [
        h
        for g in settings["hooks"].get(event, [])
        for h in g["hooks"]
        if claude_code.is_noetic_hook(h)
    ]


@pytest.mark.subprocess
def test_an_empty_project_gets_the_three_files_and_uninstall_leaves_nothing(project, home):
    before = snapshot(project)
    report = cli_json("setup", "claude-code")
    assert {Path(f["path"]).name for f in report["files"] if f["changed"]} == {
        ".mcp.json",
        "settings.json",
        "CLAUDE.md",
    }
    mcp = json.loads((project / ".mcp.json").read_text())
    entry = mcp["mcpServers"]["noetic"]
    assert entry["type"] == "stdio" and entry["args"] == ["mcp"] and entry["env"] == {}
    assert os.path.basename(entry["command"]) == "noetic"
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    for event, (name, matcher) in claude_code.HOOKS.items():
        [hook] = ours(settings, event)
        assert hook["command"].endswith(f"noetic hook {name}")
        [group] = [g for g in settings["hooks"][event] if hook in g["hooks"]]
        assert group.get("matcher") == matcher
    text = (project / "CLAUDE.md").read_text()
    assert text.startswith(claude_code.BEGIN) and text.rstrip().endswith(claude_code.END)
    assert not list(project.rglob("*.noetic-backup"))  # nothing existed: nothing to back up

    installed = snapshot(project)
    again = cli_json("setup", "claude-code")
    assert not any(f["changed"] for f in again["files"])
    assert snapshot(project) == installed

    cli_json("setup", "claude-code", "--uninstall")
    assert snapshot(project) == before
    assert not (project / ".claude").exists()


@pytest.mark.subprocess
def test_the_users_files_are_merged_backed_up_once_and_restored_byte_for_byte(project, home):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(USER_SETTINGS)
    (project / ".mcp.json").write_text(USER_MCP)
    (project / "CLAUDE.md").write_text(USER_CLAUDE_MD)
    before = snapshot(project)

    cli_json("setup", "claude-code")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test)"]}
    commands = [h["command"] for g in settings["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert "prettier --write" in commands and any("hook post-tool-use" in c for c in commands)
    assert next(h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]) == "say done"
    assert '\n    "permissions"' in (project / ".claude" / "settings.json").read_text()
    mcp = json.loads((project / ".mcp.json").read_text())
    assert set(mcp["mcpServers"]) == {"github", "noetic"}
    text = (project / "CLAUDE.md").read_text()
    assert text.startswith(USER_CLAUDE_MD) and claude_code.BEGIN in text
    for name in (".claude/settings.json", ".mcp.json", "CLAUDE.md"):
        assert (project / (name + ".noetic-backup")).read_bytes() == before[name]

    installed = snapshot(project)
    cli_json("setup", "claude-code")  # idempotent: nothing changes, the backup stays the original
    assert snapshot(project) == installed

    cli_json("setup", "claude-code", "--uninstall")
    assert snapshot(project) == before


@pytest.mark.subprocess
def test_what_the_user_adds_after_setup_survives_uninstall(project, home):
    (project / ".mcp.json").write_text(USER_MCP)
    cli_json("setup", "claude-code")
    data = json.loads((project / ".mcp.json").read_text())
    data["mcpServers"]["linear"] = {"command": "linear-mcp"}
    (project / ".mcp.json").write_text(json.dumps(data, indent=2) + "\n")
    cli_json("setup", "claude-code", "--uninstall")
    left = json.loads((project / ".mcp.json").read_text())
    assert set(left["mcpServers"]) == {"github", "linear"}
    assert (project / ".mcp.json.noetic-backup").read_text() == USER_MCP  # kept: not restored


@pytest.mark.subprocess
def test_a_noetic_entry_of_the_users_own_comes_back_on_uninstall(project, home):
    original = '{"mcpServers": {"noetic": {"command": "/opt/noetic", "args": ["mcp"]}}}'
    (project / ".mcp.json").write_text(original)
    cli_json("setup", "claude-code", "--no-instructions")
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["noetic"]["type"] == (
        "stdio"
    )
    cli_json("setup", "claude-code", "--uninstall")
    assert (project / ".mcp.json").read_text() == original


@pytest.mark.subprocess
def test_malformed_settings_are_refused_with_path_and_line_and_nothing_is_written(project, home):
    (project / ".claude").mkdir()
    broken = '{\n  "hooks": {\n    "Stop": [\n  }\n'
    (project / ".claude" / "settings.json").write_text(broken)
    before = snapshot(project)
    result = cli("setup", "claude-code")
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert f"{project / '.claude' / 'settings.json'}:4:" in message
    assert "not valid JSON" in message and "left untouched" in message
    assert snapshot(project) == before  # not even .mcp.json, which was fine


@pytest.mark.subprocess
def test_a_top_level_that_is_not_an_object_is_refused(project, home):
    (project / ".mcp.json").write_text("[1, 2]\n")
    report = cli_json("setup", "claude-code", code=1)
    assert ".mcp.json:1" in report["error"]["message"]


@pytest.mark.subprocess
def test_a_read_only_file_is_a_clear_error_and_nothing_changes(project, home):
    (project / "CLAUDE.md").write_text(USER_CLAUDE_MD)
    os.chmod(project / "CLAUDE.md", stat.S_IRUSR | stat.S_IRGRP)
    before = snapshot(project)
    result = cli("setup", "claude-code")
    assert result.exit_code == 1
    assert "CLAUDE.md is read-only" in " ".join(result.stderr.split())
    assert snapshot(project) == before


@pytest.mark.subprocess
def test_dry_run_prints_the_diff_and_writes_nothing(project, home):
    (project / ".mcp.json").write_text(USER_MCP)
    before = snapshot(project)
    result = cli("setup", "claude-code", "--dry-run")
    assert result.exit_code == 0
    assert f"--- {project / '.mcp.json'}" in result.stdout
    assert '+    "noetic": {' in result.stdout
    assert "+++ " + str(project / ".claude" / "settings.json") in result.stdout
    assert snapshot(project) == before
    report = cli_json("setup", "claude-code", "--dry-run", "--uninstall")
    assert report["diff"] == ""


@pytest.mark.subprocess
def test_user_scope_writes_the_home_files_and_keeps_claudes_own_keys(project, home):
    state = {"numStartups": 7, "projects": {"/x": {"mcpServers": {}}}, "theme": "dark"}
    (home / ".claude.json").write_text(json.dumps(state, indent=2))
    before_home, before_project = snapshot(home), snapshot(project)
    cli_json("setup", "claude-code", "--scope", "user")
    data = json.loads((home / ".claude.json").read_text())
    assert data["numStartups"] == 7 and data["projects"] == state["projects"]
    assert data["mcpServers"]["noetic"]["args"] == ["mcp"]
    assert ours(json.loads((home / ".claude" / "settings.json").read_text()), "SessionStart")
    assert claude_code.BEGIN in (home / ".claude" / "CLAUDE.md").read_text()
    assert snapshot(project) == before_project
    cli_json("setup", "claude-code", "--scope", "user", "--uninstall")
    assert snapshot(home) == before_home


@pytest.mark.subprocess
def test_an_empty_settings_file_is_merged_and_comes_back_empty(project, home):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_bytes(b"")
    cli_json("setup", "claude-code")
    assert ours(json.loads((project / ".claude" / "settings.json").read_text()), "Stop")
    cli_json("setup", "claude-code", "--uninstall")
    assert (project / ".claude" / "settings.json").read_bytes() == b""


@pytest.mark.subprocess
def test_an_unknown_scope_is_the_callers_mistake(project, home):
    report = cli_json("setup", "claude-code", "--scope", "team", code=1)
    assert "unknown scope 'team'" in report["error"]["message"]


@pytest.mark.subprocess
def test_a_stale_hook_path_is_replaced_not_duplicated(project, home):
    (project / ".claude").mkdir()
    old = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "/old/bin/noetic hook stop"}]}]
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(old))
    cli_json("setup", "claude-code")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert len(ours(settings, "Stop")) == 1
    assert not ours(settings, "Stop")[0]["command"].startswith("/old/")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    settings_doc=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    indent=st.sampled_from([None, 1, 2, 4, "\t"]),
    markdown=st.text(st.characters(blacklist_categories=("Cs",)), max_size=80),
)
@pytest.mark.slow
@example(settings_doc={}, indent=None, markdown=" ")
@example(settings_doc={"hooks": {}}, indent=2, markdown="notes\n\n\n")
def test_install_then_uninstall_restores_any_files_byte_for_byte(settings_doc, indent, markdown):
    """Whatever the user's files hold (their own "hooks" or "mcpServers" included, as long as
    they have the shapes Claude Code gives them), uninstall gives back the same bytes."""
    for key in ("hooks", "mcpServers"):
        if key in settings_doc and not isinstance(settings_doc[key], dict):
            settings_doc[key] = {}
    settings_doc.get("hooks", {}).clear()
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp) / "p", Path(tmp) / "h"
        (project / ".claude").mkdir(parents=True)
        home.mkdir()
        (project / ".claude" / "settings.json").write_text(json.dumps(settings_doc, indent=indent))
        (project / ".mcp.json").write_text(json.dumps(settings_doc, indent=indent) + "\n")
        (project / "CLAUDE.md").write_bytes(markdown.encode())
        before = snapshot(project)
        args = {"scope": "project", "project": project, "home": home, "command": ["noetic", "mcp"]}
        apply(claude_code.plan(**args))
        assert json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
        apply(claude_code.plan(**args))
        apply(claude_code.plan(**args, uninstall=True))
        assert snapshot(project) == before
