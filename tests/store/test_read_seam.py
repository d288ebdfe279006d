"""Every statement lives in ``noetic.store``: no module outside it reaches a connection, runs a
statement, opens a database driver or spells out SQL. A read the interfaces or engines need is a
named function in ``store/`` (see docs/architecture.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import noetic

PACKAGE = Path(noetic.__file__).parent
STORE = PACKAGE / "store"
DRIVERS = frozenset({"sqlite3", "psycopg", "psycopg_pool"})
CALLS = frozenset({"execute", "executemany", "executescript", "transaction", "insert_returning"})
SQL = re.compile(
    r"^\s*(SELECT\s.+\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|"
    r"CREATE\s+(TABLE|INDEX)\s|PRAGMA\s)",
    re.IGNORECASE | re.DOTALL,
)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (prose may name a statement)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def database_access(source: str, name: str = "<module>") -> list[str]:
    """Where ``source`` touches a database itself: ``.conn``, a statement run, a driver
    imported, or SQL in a string."""
    tree = ast.parse(source, name)
    prose = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr == "conn":
            found.append(f"{name}:{line}: .conn")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CALLS
        ):
            found.append(f"{name}:{line}: .{node.func.attr}()")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                modules = [node.module or ""]
            for module in modules:
                if module.split(".")[0] in DRIVERS:
                    found.append(f"{name}:{line}: import {module}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in prose
            and SQL.match(node.value)
        ):
            found.append(f"{name}:{line}: SQL {node.value[:40]!r}")
    return found


def test_no_module_outside_the_store_touches_a_database() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if STORE in path.parents:
            continue
        found += database_access(path.read_text("utf-8"), str(path.relative_to(PACKAGE)))
    assert found == []


def test_the_scan_finds_each_way_of_reaching_the_database() -> None:
    """The scan itself: each way a module could run SQL is found, and prose is not."""
    source = '''
"""Reads SELECT * FROM sessions, in prose."""
import sqlite3
from psycopg import sql
rows = store.conn.execute("SELECT id FROM sessions WHERE ai_id = ?", (name,))
with store.transaction() as c:
    pass
delete = "DELETE FROM events"
parts.insert(0, "selected from the menu")
'''
    found = sorted(f.split(": ", 1)[1] for f in database_access(source))
    assert found == sorted(
        [
            "import sqlite3",
            "import psycopg",
            ".conn",
            ".execute()",
            ".transaction()",
            "SQL 'SELECT id FROM sessions WHERE ai_id = ?'",
            "SQL 'DELETE FROM events'",
        ]
    )
