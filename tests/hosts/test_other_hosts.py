"""`noetic setup cursor|vscode|gemini|codex|json`: the same merge, dry-run and uninstall rules."""

from __future__ import annotations

import json
import os
import stat
import tomllib

import pytest

from .conftest import cli, cli_json, snapshot

OTHER_SERVER = {"command": "gh-mcp", "args": ["--stdio"]}


@pytest.mark.parametrize(
    ("host", "relative", "key", "typed"),
    [
        ("cursor", ".cursor/mcp.json", "mcpServers", False),
        ("gemini", ".gemini/settings.json", "mcpServers", False),
        ("vscode", ".vscode/mcp.json", "servers", True),
    ],
)
@pytest.mark.subprocess
def test_json_hosts_merge_and_uninstall_byte_for_byte(project, home, host, relative, key, typed):
    target = project / relative
    target.parent.mkdir()
    original = json.dumps({"theme": "dark", key: {"github": OTHER_SERVER}}, indent=4)
    target.write_text(original)
    before = snapshot(project)
    cli_json("setup", host)
    data = json.loads(target.read_text())
    assert data["theme"] == "dark" and data[key]["github"] == OTHER_SERVER
    entry = data[key]["noetic"]
    assert entry["args"] == ["mcp"] and os.path.basename(entry["command"]) == "noetic"
    assert ("type" in entry) is typed
    assert (target.parent / (target.name + ".noetic-backup")).read_text() == original
    installed = snapshot(project)
    cli_json("setup", host)
    assert snapshot(project) == installed
    cli_json("setup", host, "--uninstall")
    assert snapshot(project) == before


@pytest.mark.subprocess
@pytest.mark.parametrize("host", ["cursor", "gemini", "vscode"])
def test_json_hosts_in_an_empty_project_leave_nothing_behind(project, home, host):
    before = snapshot(project)
    cli_json("setup", host)
    assert snapshot(project) != before
    cli_json("setup", host, "--uninstall")
    assert snapshot(project) == before
    assert sorted(p.name for p in project.iterdir()) == [".git"]


@pytest.mark.parametrize(
    ("host", "relative"), [("cursor", ".cursor/mcp.json"), ("gemini", ".gemini/settings.json")]
)
@pytest.mark.subprocess
def test_user_scope_writes_in_the_home_directory(project, home, host, relative):
    cli_json("setup", host, "--scope", "user")
    assert "noetic" in json.loads((home / relative).read_text())["mcpServers"]
    cli_json("setup", host, "--scope", "user", "--uninstall")
    assert not (home / relative).exists()


@pytest.mark.subprocess
def test_malformed_and_read_only_files_are_refused(project, home):
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text('{"mcpServers": {,}}')
    report = cli_json("setup", "cursor", code=1)
    assert f"{project / '.cursor' / 'mcp.json'}:1:" in report["error"]["message"]
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text("{}\n")
    os.chmod(project / ".vscode" / "mcp.json", stat.S_IRUSR)
    result = cli("setup", "vscode")
    assert result.exit_code == 1 and "is read-only" in result.stderr
    assert (project / ".vscode" / "mcp.json").read_text() == "{}\n"


@pytest.mark.subprocess
def test_vscode_user_scope_prints_the_entry_and_writes_nothing(project, home):
    before_home = snapshot(home)
    result = cli("setup", "vscode", "--scope", "user")
    assert result.exit_code == 0
    assert "code --add-mcp" in result.stdout and '"name": "noetic"' in result.stdout
    assert snapshot(home) == before_home


@pytest.mark.subprocess
def test_json_prints_the_generic_entry(project, home):
    result = cli("setup", "json")
    assert result.exit_code == 0
    entry = json.loads(result.stdout)["mcpServers"]["noetic"]
    assert entry["args"] == ["mcp"]
    assert snapshot(project) == {}


CODEX = """# my Codex settings
model = "o3"  # the one I like

[mcp_servers.github]
command = "gh-mcp"
args = ["--stdio"]
"""


@pytest.mark.subprocess
def test_codex_toml_keeps_the_users_comments_and_comes_back_byte_for_byte(project, home):
    (home / ".codex").mkdir()
    config = home / ".codex" / "config.toml"
    config.write_text(CODEX)
    cli_json("setup", "codex")
    text = config.read_text()
    assert text.startswith(CODEX)  # comments and layout untouched
    data = tomllib.loads(text)
    assert data["mcp_servers"]["noetic"]["args"] == ["mcp"]
    assert data["mcp_servers"]["github"]["command"] == "gh-mcp"
    installed = config.read_bytes()
    cli_json("setup", "codex")
    assert config.read_bytes() == installed
    cli_json("setup", "codex", "--uninstall")
    assert config.read_text() == CODEX
    assert not (home / ".codex" / "config.toml.noetic-backup").exists()


@pytest.mark.subprocess
def test_codex_without_a_config_creates_and_removes_it(project, home, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    diff = cli("setup", "codex", "--dry-run").stdout
    assert "+[mcp_servers.noetic]" in diff
    cli_json("setup", "codex")
    assert tomllib.loads((home / "codex-home" / "config.toml").read_text())["mcp_servers"]
    cli_json("setup", "codex", "--uninstall")
    assert not (home / "codex-home" / "config.toml").exists()


@pytest.mark.subprocess
def test_codex_refuses_malformed_toml_and_the_project_scope(project, home):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "o3"\n[mcp_servers\n')
    report = cli_json("setup", "codex", code=1)
    assert f"{home / '.codex' / 'config.toml'}:2:" in report["error"]["message"]
    assert (home / ".codex" / "config.toml").read_text() == 'model = "o3"\n[mcp_servers\n'
    report = cli_json("setup", "codex", "--scope", "project", code=1)
    assert "use --scope user" in report["error"]["fix"]
