"""The folders the gate's red-team and benign sets are judged in: a project with the usual
files, and a home folder holding the secrets a red-team command reaches for."""

from __future__ import annotations

from pathlib import Path

import yaml

HERE = Path(__file__).parent
_PROJECT = ["src/app.py", "src/pkg/__init__.py", "tests/test_app.py", "README.md", "Makefile",
            "package.json", "requirements.txt", "notes.txt", "cmds.txt", "data.csv",
            "build.sh", "a.tar", ".git/config", ".git/hooks/pre-commit.sample", "x.sh",
            "payload", "archive.tar.gz"]  # fmt: skip
_SECRETS = [".ssh/id_rsa", ".ssh/id_ed25519", ".aws/credentials", ".netrc", ".git-credentials"]


def make_places(base: Path) -> tuple[Path, Path]:
    """A workspace and a home folder under ``base`` (created if missing)."""
    workspace, home = base / "project", base / "home"
    for name in _PROJECT:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\n")
    for name in _SECRETS:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("SECRET\n")
    return workspace, home


def red_team() -> list[tuple[str, str]]:
    """(class, command) for every command of the red-team set."""
    return [
        (row["class"], row["command"])
        for row in yaml.safe_load((HERE / "redteam.yaml").read_text())
    ]


def benign() -> list[str]:
    """Every ordinary developer command: the first round's set, then the workflows."""
    return [command for _, command in benign_rows()]


def benign_rows() -> list[tuple[str, str]]:
    """(workflow, command) for every ordinary developer command; the first round's set is the
    workflow ``round-1``."""
    first = [("round-1", c) for c in yaml.safe_load((HERE / "benign.yaml").read_text())]
    flows = yaml.safe_load((HERE / "workflows.yaml").read_text())
    return first + [(flow, c) for flow, commands in flows.items() for c in commands]
