"""The interfaces start no run themselves: they call an operation (:mod:`noetic.operations`).

Finding the session, resolving the provider and building the run context is written once, in
the operations layer; a command or an MCP tool that built its own context would be a second
copy of it, free to drift. Nor do they apply a write once themselves: the write operations
take ``request_id`` and the interfaces pass it through. Read from the source, so a call made
only on a rare path counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import noetic

PACKAGE = Path(noetic.__file__).parent
INTERFACES = ("cli", "mcp", "dashboard")
FORBIDDEN = {"build_context"}


def _interface_modules() -> list[Path]:
    return sorted(
        path
        for name in INTERFACES
        if (PACKAGE / name).is_dir()
        for path in (PACKAGE / name).rglob("*.py")
    )


def _uses(path: Path) -> list[str]:
    """Every import or mention of a forbidden name, with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        else:
            continue
        found += [f"{path.name}:{node.lineno} {n}" for n in names if n in FORBIDDEN]
    return found


def test_the_interfaces_are_found() -> None:
    modules = {p.relative_to(PACKAGE).as_posix() for p in _interface_modules()}
    assert {"cli/workflow.py", "cli/cascade.py", "mcp/tools.py", "mcp/server.py"} <= modules


@pytest.mark.parametrize(
    "path", _interface_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix()
)
def test_no_interface_builds_a_run_context(path: Path) -> None:
    assert _uses(path) == []


def test_the_check_sees_a_context_built_by_hand(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "def run():\n"
        "    from noetic.runtime.context import build_context\n"
        "    return build_context('cascade')\n"
        "import noetic.runtime.context as c\n"
        "c.build_context(None)\n",
        encoding="utf-8",
    )
    assert sorted(_uses(module)) == [
        "bad.py:2 build_context",
        "bad.py:3 build_context",
        "bad.py:5 build_context",
    ]


def _applies_requests(path: Path) -> list[str]:
    """Every import of the request machinery (:mod:`noetic.store.requests`, or the operations'
    ``once`` and ``earlier``): applying a write once is the operation's, the interfaces pass
    ``request_id`` through."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            bad = (
                node.module == "noetic.store.requests"
                or (node.module == "noetic.store" and "requests" in names)
                or (node.module == "noetic.operations.once" and {"once", "earlier"} & set(names))
            )
        elif isinstance(node, ast.Import):
            bad = any(alias.name == "noetic.store.requests" for alias in node.names)
        else:
            continue
        if bad:
            found.append(f"{path.name}:{node.lineno}")
    return found


@pytest.mark.parametrize(
    "path", _interface_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix()
)
def test_no_interface_applies_a_request_itself(path: Path) -> None:
    assert _applies_requests(path) == []


def test_the_check_sees_a_request_applied_by_hand(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from noetic.store import requests\n"
        "from noetic.operations.once import once\n"
        "import noetic.store.requests\n"
        "from noetic.operations.once import Replayed, answered\n",
        encoding="utf-8",
    )
    assert _applies_requests(module) == ["bad.py:1", "bad.py:2", "bad.py:3"]
