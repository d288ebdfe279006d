"""`noetic setup` never follows a symlink a cloned repository ships out of the scope it edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import cli, cli_json, snapshot

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n-----END OPENSSH PRIVATE KEY-----\n"


@pytest.fixture
def key(home: Path) -> Path:
    (home / ".ssh").mkdir()
    path = home / ".ssh" / "id_ed25519"
    path.write_text(KEY)
    return path


def every_file(*roots: Path) -> dict[str, bytes]:
    return {f"{r}:{k}": v for r in roots for k, v in snapshot(r).items()}


@pytest.mark.subprocess
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_claude_md_linked_to_a_private_key_is_refused(project, home, key, dry_run) -> None:
    (project / "CLAUDE.md").symlink_to(key)
    before = every_file(project, home)
    result = cli("setup", "claude-code", "--json", *(["--dry-run"] if dry_run else []))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "secret" not in result.output
    error = result.stdout
    assert f"{project / 'CLAUDE.md'} is a symlink to {key}" in error and "outside" in error
    assert every_file(project, home) == before  # nothing written, no backup of the key
    assert (project / "CLAUDE.md").is_symlink() and key.read_text() == KEY
    assert not (project / "CLAUDE.md.noetic-backup").exists()
    assert not (project / ".mcp.json").exists()  # refused before any file was written


@pytest.mark.subprocess
def test_a_claude_folder_linked_to_the_users_one_is_refused(project, home) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"theme": "dark"}\n')
    (project / ".claude").symlink_to(home / ".claude")
    before = every_file(project, home)
    result = cli("setup", "claude-code", "--scope", "project")
    assert result.exit_code == 1
    assert f"{project / '.claude'} is a symlink to {home / '.claude'}" in result.output
    assert every_file(project, home) == before


@pytest.mark.subprocess
def test_a_backup_linked_outside_is_never_read_back(project, home, key) -> None:
    cli_json("setup", "claude-code")
    assert not (project / "CLAUDE.md.noetic-backup").exists()  # Noetic created CLAUDE.md
    (project / "CLAUDE.md.noetic-backup").symlink_to(key)
    result = cli("setup", "claude-code", "--uninstall")
    assert result.exit_code == 1 and "CLAUDE.md.noetic-backup is a symlink" in result.output
    assert "secret" not in (project / "CLAUDE.md").read_text()


@pytest.mark.subprocess
@pytest.mark.parametrize("host", ["cursor", "gemini", "vscode"])
def test_other_hosts_refuse_a_folder_linked_outside_the_project(project, tmp_path, host) -> None:
    folder = {"cursor": ".cursor", "gemini": ".gemini", "vscode": ".vscode"}[host]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / folder).symlink_to(elsewhere)
    result = cli("setup", host, "--scope", "project")
    assert result.exit_code == 1 and f"{project / folder} is a symlink" in result.output
    assert list(elsewhere.iterdir()) == []


@pytest.mark.subprocess
def test_a_link_that_stays_inside_the_scope_is_followed(project, home) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "AI.md").write_text("# Rules\n")
    (project / "CLAUDE.md").symlink_to("docs/AI.md")
    cli_json("setup", "claude-code")
    # read through the link, written by rename: the link becomes the file, its target is kept
    text = (project / "CLAUDE.md").read_text()
    assert text.startswith("# Rules\n") and "noetic:begin" in text
    assert (project / "docs" / "AI.md").read_text() == "# Rules\n"


@pytest.mark.subprocess
def test_user_scope_follows_links_inside_the_home_folder(project, home) -> None:
    (home / "dotfiles" / "claude").mkdir(parents=True)
    (home / ".claude").symlink_to(home / "dotfiles" / "claude")  # a dotfiles manager's layout
    cli_json("setup", "claude-code", "--scope", "user")
    assert (home / "dotfiles" / "claude" / "settings.json").exists()


@pytest.mark.subprocess
def test_codex_home_linked_outside_is_refused(project, home, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".codex").symlink_to(elsewhere)
    result = cli("setup", "codex")
    assert result.exit_code == 1 and ".codex is a symlink" in result.output
    assert list(elsewhere.iterdir()) == []
