"""The dashboard's fixtures: a seeded store served by ``noetic serve``'s app (the MCP endpoint
and the dashboard on one port) under uvicorn on loopback, as a user runs it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import serving
from .seed import Seeded, seed


@dataclass
class Site:
    url: str
    home: Path
    ids: Seeded


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One seeded store served for a whole test module (the pages only read it)."""
    home = tmp_path_factory.mktemp("dash") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOETIC_INDEX", "inline")
        mp.setenv("NOETIC_HOME", str(home))
        ids = seed(home)
        with serving(home) as url:
            yield Site(url, home, ids)
