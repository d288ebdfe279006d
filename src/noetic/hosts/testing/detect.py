"""Finding a project's test commands, so outcomes are recorded without anyone configuring them.

``noetic setup claude-code`` (and the first SessionStart in a project whose configuration does
not mention ``test_commands``) looks at the project's own files, as the table in
``docs/claude-code.md`` lists them (pytest's configuration or tests, package.json's test
script, Cargo.toml, go.mod, a Makefile's ``test`` or ``check`` target, Gradle, Maven).

The commands go to ``[outcomes] test_commands`` in the store's ``config.toml`` (edited with
``tomlkit``, so the file's comments stay); a configuration that already names
``test_commands`` — even an empty list, which turns the recording off — is left as it is.
Nothing is written when nothing is found.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from noetic.hosts.testing.commands import has_test_script, make_targets

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


MAX_FILE_BYTES = 1024 * 1024
MAX_TEST_FILES_LOOKED_AT = 2000


@dataclass(frozen=True)
class Found:
    """A test command and the file that says the project uses it."""

    command: str
    because: str


def detect(project: Path) -> list[Found]:
    """The project's test commands, in the order of the table above."""
    found: list[Found] = []
    if (why := _pytest(project)) is not None:
        found.append(Found("pytest", why))
    if has_test_script(project):
        locks = {"pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock"}
        tool = next((t for t, lock in locks.items() if (project / lock).is_file()), "npm")
        found.append(Found(f"{tool} test", "package.json has a test script"))
    if (project / "Cargo.toml").is_file():
        found.append(Found("cargo test", "Cargo.toml"))
    if (project / "go.mod").is_file():
        found.append(Found("go test ./...", "go.mod"))
    targets = make_targets(project)
    for target in ("test", "check"):
        if target in targets:
            found.append(Found(f"make {target}", f"the Makefile has a {target!r} target"))
    for name in ("build.gradle", "build.gradle.kts"):
        if (project / name).is_file():
            wrapper = (project / "gradlew").is_file()
            found.append(Found("./gradlew test" if wrapper else "gradle test", name))
            break
    if (project / "pom.xml").is_file():
        found.append(
            Found("./mvnw test" if (project / "mvnw").is_file() else "mvn test", "pom.xml")
        )
    return found


_PYTEST_DEPENDENCY = re.compile(r"^\s*pytest(?![\w-])", re.IGNORECASE)


def _pytest(project: Path) -> str | None:
    pyproject = _toml(project / "pyproject.toml")
    if pyproject is not None:
        if "pytest" in pyproject.get("tool", {}):
            return "pyproject.toml has [tool.pytest]"
        if any(_PYTEST_DEPENDENCY.match(d) for d in _dependencies(pyproject)):
            return "pyproject.toml depends on pytest"
    if _ini_has(project / "setup.cfg", "tool:pytest"):
        return "setup.cfg has [tool:pytest]"
    if _ini_has(project / "tox.ini", "pytest"):
        return "tox.ini has [pytest]"
    for name in ("pytest.ini", "conftest.py"):
        if (project / name).is_file():
            return name
    tests = project / "tests"
    if tests.is_dir():
        for i, path in enumerate(tests.rglob("*.py")):
            if i >= MAX_TEST_FILES_LOOKED_AT:
                break
            if path.name.startswith("test_") or path.name.endswith("_test.py"):
                return f"tests/ holds {path.relative_to(project)}"
    return None


def _toml(path: Path) -> dict[str, Any] | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _dependencies(pyproject: dict[str, Any]) -> list[str]:
    """Every dependency string pyproject.toml names: the project's, its extras', its
    dependency groups' (PEP 735) and Poetry's."""
    project = pyproject.get("project")
    project = project if isinstance(project, dict) else {}
    lists = [project.get("dependencies")]
    for table in (project.get("optional-dependencies"), pyproject.get("dependency-groups")):
        lists += table.values() if isinstance(table, dict) else []
    out = [d for deps in lists if isinstance(deps, list) for d in deps if isinstance(d, str)]
    poetry = pyproject.get("tool", {}).get("poetry", {})
    if isinstance(poetry, dict):
        groups = (poetry.get("group") or {}).values()
        tables = [g.get("dependencies") for g in groups if isinstance(g, dict)]
        for table in (poetry.get("dependencies"), poetry.get("dev-dependencies"), *tables):
            out += list(table) if isinstance(table, dict) else []
    return out


def _ini_has(path: Path, section: str) -> bool:
    text = _read(path)
    if text is None:
        return False
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return parser.has_section(section)


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def with_test_commands(config_text: str, commands: list[str]) -> str:
    """``config_text`` with ``[outcomes] test_commands`` set, its other content kept."""
    import tomlkit

    doc = tomlkit.parse(config_text)
    table = doc.get("outcomes")
    if table is None:
        table = tomlkit.table()
        doc["outcomes"] = table
    array = tomlkit.array()
    array.extend(commands)
    table["test_commands"] = array
    return tomlkit.dumps(doc)


@dataclass(frozen=True)
class TestSetup:
    """What setup does about a project's test commands: ``found`` in its files, written to
    ``config`` unless ``kept`` (the list the configuration already has)."""

    config: Path
    found: tuple[Found, ...]
    kept: tuple[str, ...] | None

    @property
    def commands(self) -> list[str]:
        return list(self.kept) if self.kept is not None else [f.command for f in self.found]

    def describe(self) -> list[str]:
        """Lines that tell the user what was found and how to change it."""
        where = f"[outcomes] test_commands in {self.config}"
        if self.kept is not None:
            shown = ", ".join(self.kept) or "none (recording is off)"
            return [f"test commands: {shown}, as already configured ({where})"]
        if not self.found:
            return [
                "test commands: none found in the project; nothing is recorded until you list "
                f"them in {where}, or run tests with `noetic run -- CMD`"
            ]
        lines = ["test commands found (their exit statuses become the open task's outcomes):"]
        lines += [f"  {f.command}  ({f.because})" for f in self.found]
        lines.append(f"change them in {where}; an empty list turns the recording off")
        return lines


def test_setup(project: Path, home: Path) -> TestSetup:
    """What :func:`detect` finds in ``project`` and what the store at ``home`` already says
    (a ``config.toml`` that is not valid TOML is a :class:`ValidationError` naming it)."""
    from noetic.config import load

    config = load(home)
    kept = config.test_commands if config.outcomes_mentioned else None
    return TestSetup(home / "config.toml", tuple(detect(project)), kept)
