"""Outcomes by default: `noetic setup claude-code` (and the first SessionStart) find a project's
test commands and write them to its store's configuration."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from noetic.hosts.testing.detect import detect, with_test_commands

from .conftest import cli, cli_json


def commands(project: Path) -> list[str]:
    return [f.command for f in detect(project)]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, ["pytest"]),
        ({"pyproject.toml": "[project]\nname = 'x'\ndependencies = ['pytest>=8']\n"}, ["pytest"]),
        ({"pyproject.toml": "[dependency-groups]\ndev = ['pytest-cov', 'pytest']\n"}, ["pytest"]),
        ({"pyproject.toml": "[project]\nname = 'x'\ndependencies = ['pytest-cov']\n"}, []),
        ({"pyproject.toml": "[tool.poetry.group.dev.dependencies]\npytest = '^8'\n"}, ["pytest"]),
        ({"pyproject.toml": "not [valid toml"}, []),
        ({"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"}, ["pytest"]),
        ({"tox.ini": "[tox]\nenvlist = py311\n[pytest]\naddopts = -q\n"}, ["pytest"]),
        ({"tox.ini": "[tox]\nenvlist = py311\n"}, []),
        ({"tests/test_a.py": "def test_a(): pass\n"}, ["pytest"]),
        ({"tests/helpers.py": ""}, []),
        ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, ["npm test"]),
        (
            {"package.json": json.dumps({"scripts": {"test": "vitest"}}), "pnpm-lock.yaml": ""},
            ["pnpm test"],
        ),
        (
            {"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""},
            ["yarn test"],
        ),
        (
            {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified"'}})},
            [],
        ),
        ({"package.json": "{broken"}, []),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, ["cargo test"]),
        ({"go.mod": "module x\n"}, ["go test ./..."]),
        (
            {"Makefile": "build:\n\tcc\ntest: build\n\t./run\ncheck:\n\tlint\n"},
            ["make test", "make check"],
        ),
        ({"Makefile": "build:\n\tcc\n"}, []),
        ({"build.gradle.kts": "", "gradlew": ""}, ["./gradlew test"]),
        ({"build.gradle": ""}, ["gradle test"]),
        ({"pom.xml": "<project/>"}, ["mvn test"]),
        ({"pom.xml": "<project/>", "mvnw": ""}, ["./mvnw test"]),
        ({}, []),
    ],
)
def test_each_kind_of_project_is_detected(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert commands(tmp_path) == expected


def test_the_config_keeps_its_other_content_and_comments():
    text = "# my settings\n[hooks]\ncontext_tokens = 900  # smaller\n"
    out = with_test_commands(text, ["pytest", "make test"])
    assert out.startswith("# my settings\n[hooks]\ncontext_tokens = 900  # smaller\n")
    assert tomllib.loads(out)["outcomes"]["test_commands"] == ["pytest", "make test"]


@pytest.mark.subprocess
def test_setup_writes_the_found_commands_and_says_how_to_change_them(project, home, _isolated_home):
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    result = cli("setup", "claude-code")
    assert result.exit_code == 0, result.output
    assert "pytest  (pyproject.toml has [tool.pytest])" in result.stdout
    assert "[outcomes] test_commands in" in result.stdout and "config.toml" in result.stdout
    config = tomllib.loads((_isolated_home / "config.toml").read_text())
    assert config["outcomes"]["test_commands"] == ["pytest"]
    again = cli_json("setup", "claude-code")
    assert again["test_commands"]["kept"] == ["pytest"]
    assert not any(f["changed"] for f in again["files"])


@pytest.mark.subprocess
def test_setup_keeps_a_configured_list_even_an_empty_one(project, home, _isolated_home):
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    _isolated_home.mkdir(parents=True)
    (_isolated_home / "config.toml").write_text("[outcomes]\ntest_commands = []\n")
    report = cli_json("setup", "claude-code")
    assert report["test_commands"]["kept"] == []
    assert (_isolated_home / "config.toml").read_text() == "[outcomes]\ntest_commands = []\n"
    result = cli("setup", "claude-code")
    assert "none (recording is off)" in result.stdout


@pytest.mark.subprocess
def test_setup_refuses_a_malformed_config_and_writes_nothing(project, home, _isolated_home):
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    _isolated_home.mkdir(parents=True)
    (_isolated_home / "config.toml").write_text("[outcomes\n")
    result = cli("setup", "claude-code")
    assert result.exit_code != 0
    assert "not valid TOML" in result.output
    assert not (project / ".mcp.json").exists()


@pytest.mark.subprocess
def test_setup_without_tests_or_with_none_found_writes_no_config(project, home, _isolated_home):
    report = cli_json("setup", "claude-code")
    assert report["test_commands"]["found"] == []
    assert not (_isolated_home / "config.toml").exists()
    (project / "go.mod").write_text("module x\n")
    cli_json("setup", "claude-code", "--uninstall")
    cli_json("setup", "claude-code", "--no-tests")
    assert not (_isolated_home / "config.toml").exists()


@pytest.mark.subprocess
def test_the_first_session_start_finds_them_when_setup_did_not(project, home, _isolated_home):
    (project / "Cargo.toml").write_text("[package]\nname = 'x'\n")
    result = cli(
        "hook",
        "session-start",
        input=json.dumps({"session_id": "s1", "cwd": str(project), "source": "startup"}),
    )
    assert result.exit_code == 0, result.output
    config = tomllib.loads((_isolated_home / "config.toml").read_text())
    assert config["outcomes"]["test_commands"] == ["cargo test"]
    assert "test commands found and written" in (_isolated_home / "hooks.log").read_text()
