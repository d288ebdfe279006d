"""The store suite runs on both backends: every test that takes the ``store`` fixture runs once
on SQLite and once on PostgreSQL (marked ``postgres``), unless it is marked ``sqlite_only``
because what it checks exists only there (the SQLite file, its pragmas, the session files a
local store writes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from noetic.store import Store

BACKENDS = ("sqlite", pytest.param("postgresql", marks=pytest.mark.postgres))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and not metafunc.definition.get_closest_marker(
        "sqlite_only"
    ):
        metafunc.parametrize("backend", BACKENDS)


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def open_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path):
    """Open a store on the test's backend: ``open_store(home)`` for a second, separate store
    (another directory, or another schema on the same server)."""
    opened = []

    def make(home: Path):
        if backend == "postgresql":
            from noetic.store.postgres import PostgresStore

            url = request.getfixturevalue("postgres_server").new_schema()
            opened.append(PostgresStore(url, home=home))
        else:
            opened.append(Store(home))
        return opened[-1]

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def store(open_store, _isolated_home: Path):
    return open_store(_isolated_home)
