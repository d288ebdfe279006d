import pytest


@pytest.fixture(autouse=True)
def _no_configured_provider(monkeypatch):
    """Tools fall back to sampling only when no provider is configured: make sure none is."""
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)


@pytest.fixture
def server(_isolated_home):
    from noetic.mcp.server import build_server

    return build_server(_isolated_home)
