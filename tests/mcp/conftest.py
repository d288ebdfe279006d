import pytest


@pytest.fixture
def server(_isolated_home):
    from noetic.mcp.server import build_server

    return build_server(_isolated_home)
