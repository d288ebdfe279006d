"""Eval runs on both store backends, against the loopback model server over real HTTP, with
the tests in real bubblewrap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noetic.evaluation.problems import Problem, humaneval
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..llm.model_server import ModelServer, running

BACKENDS = ("sqlite", pytest.param("postgresql", marks=pytest.mark.postgres))


@pytest.fixture(scope="session")
def problems() -> list[Problem]:
    return humaneval()


@pytest.fixture(params=BACKENDS)
def tracker(request: pytest.FixtureRequest, _isolated_home: Path) -> Iterator[Tracker]:
    if request.param == "postgresql":
        from noetic.store.postgres import PostgresStore

        url = request.getfixturevalue("postgres_server").new_schema()
        store = PostgresStore(url, home=_isolated_home)
    else:
        store = Store(_isolated_home)
    try:
        yield Tracker(store, ProfileRegistry(_isolated_home / "profiles"))
    finally:
        store.close()


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with running() as server:
        yield server


def spec(server: ModelServer) -> str:
    return f"openai-compatible:{server.url}/v1#stand-in"
