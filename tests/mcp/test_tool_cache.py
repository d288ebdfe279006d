"""The cached tool list: what a server lists from it is exactly what the SDK generates, and a
stale, corrupt or unwritable cache never changes what is listed nor stops the server."""

import asyncio
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp import Client
from noetic.mcp import tool_cache
from noetic.mcp.server import build_server
from noetic.mcp.state import ServerState
from noetic.mcp.tool_cache import DeferredTool
from noetic.mcp.tools import TOOLS, build_tools

from ._client import call, ok


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(folder))
    return folder


def listing(server):
    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools

    return [t.model_dump(by_alias=True) for t in asyncio.run(go())]


def sdk_listing(home):
    """What the SDK itself generates for the tools, with no cache involved."""
    n = ServerState(home, embed_at_start=False)
    return [tool_cache.describe(t) for t in build_tools(n)]


def cached_document(cache):
    return json.loads((cache / tool_cache.FILE).read_text())


@pytest.mark.slow
def test_the_first_server_generates_and_caches_the_list_the_next_lists_from_it(cache, tmp_path):
    first = build_server(tmp_path / "store")
    assert not any(isinstance(t, DeferredTool) for t in first._tool_manager.list_tools())
    document = cached_document(cache)
    assert document["key"] == tool_cache.cache_key()
    assert document["tools"] == sdk_listing(tmp_path / "store")

    second = build_server(tmp_path / "store")
    assert all(isinstance(t, DeferredTool) for t in second._tool_manager.list_tools())
    assert listing(second) == listing(first)
    assert [t["name"] for t in listing(second)] == [fn.__name__ for fn in TOOLS]
    assert all(t["outputSchema"] for t in listing(second))  # clients use them: kept


def test_a_listed_tool_is_built_on_its_first_call_and_behaves_as_the_sdks(cache, tmp_path):
    build_server(tmp_path / "store")  # caches the list
    server = build_server(tmp_path / "store")
    intro = server._tool_manager.get_tool("get_empirica_introduction")
    assert isinstance(intro, DeferredTool) and intro._built is None
    results = call(
        server,
        ("get_empirica_introduction", {}),
        ("bootstrap_session", {"ai_id": "cached"}),
        ("check_drift_monitor", {"window": "many"}),  # rejected by the argument model
    )
    assert "Noetic" in ok(results[0])["text"] and intro._built is not None
    assert ok(results[1])["session"]["ai_id"] == "cached"
    assert results[2].is_error and "window" in results[2].content[0].text
    assert (cache / tool_cache.FILE).exists()  # every built tool matched its listing


@pytest.mark.slow
def test_a_stale_cache_is_ignored_and_rewritten(cache, tmp_path):
    build_server(tmp_path / "store")
    document = cached_document(cache)
    stale = dict(document, key=dict(document["key"], sources="0" * 64))
    stale["tools"] = [dict(t, description="stale") for t in document["tools"]]
    (cache / tool_cache.FILE).write_text(json.dumps(stale))

    server = build_server(tmp_path / "store")
    assert not any(isinstance(t, DeferredTool) for t in server._tool_manager.list_tools())
    assert all(t["description"] != "stale" for t in listing(server))
    assert cached_document(cache) == document


def test_the_key_follows_every_source_file(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__").mkdir()
    module = tmp_path / "pkg" / "sub" / "models.py"
    module.write_text("x = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "ignored.py").write_text("")

    def files():
        found: list[str] = []
        tool_cache._sources(str(tmp_path / "pkg"), found)
        return found

    before = files()
    assert len(before) == 1 and before[0].startswith("/sub/models.py:6:")
    module.write_text("x = 12\n")  # a different size
    assert files() != before
    changed = files()
    os.utime(module, ns=(1, 1))  # the same size, another modification time
    assert files() != changed
    key = tool_cache.cache_key()
    assert {"format", "noetic", "python", "pydantic", "pydantic_core", "sources"} <= set(key)


CORRUPT = [
    b"",
    b"\xff\xfe not utf-8",
    b'{"key": ',
    b"[]",
    b"null",
    b'{"key": {}, "tools": []}',
]


@pytest.mark.parametrize("content", CORRUPT)
def test_a_corrupt_cache_file_is_ignored_without_a_crash(cache, tmp_path, content):
    cache.mkdir()
    (cache / tool_cache.FILE).write_bytes(content)
    server = build_server(tmp_path / "store")
    assert [t["name"] for t in listing(server)] == [fn.__name__ for fn in TOOLS]
    assert cached_document(cache)["key"] == tool_cache.cache_key()  # rewritten


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
ENTRY_KEYS = ("name", "description", "input_schema", "output_schema", "context")


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tools=st.one_of(
        JSON,
        st.lists(st.dictionaries(st.sampled_from(ENTRY_KEYS), JSON, max_size=5), max_size=3),
    ),
    cut=st.integers(min_value=0, max_value=400),
)
@pytest.mark.slow
def test_whatever_the_cache_holds_under_the_right_key_load_returns_it_only_if_well_formed(
    cache, tools, cut
):
    cache.mkdir(exist_ok=True)
    key = {"format": tool_cache.FORMAT, "noetic": "test"}
    text = json.dumps({"key": key, "tools": tools})
    for content in (text, text[:cut]):
        (cache / tool_cache.FILE).write_text(content)
        loaded = tool_cache.load(key)
        if loaded is not None:
            assert content == text and loaded == tools and tools
            assert all(set(ENTRY_KEYS) <= set(t) for t in loaded)
            assert all(isinstance(t["input_schema"], dict) for t in loaded)


def test_an_unwritable_cache_directory_leaves_the_server_working(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(blocker / "cache"))
    assert not tool_cache.save({"format": 1}, [])
    server = build_server(tmp_path / "store")
    assert [t["name"] for t in listing(server)] == [fn.__name__ for fn in TOOLS]
    assert ok(call(server, ("get_empirica_introduction", {}))[0])["text"]


def test_a_tool_that_does_not_match_its_listing_drops_the_cache(cache, tmp_path):
    build_server(tmp_path / "store")
    n = ServerState(tmp_path / "store", embed_at_start=False)
    entry = dict(cached_document(cache)["tools"][0], description="not what the SDK makes")
    tool = DeferredTool.listed(entry, lambda: build_tools(n)[0])
    assert tool.built().description != entry["description"]
    assert not (cache / tool_cache.FILE).exists()


def test_the_embedding_thread_starts_once_the_first_listing_is_answered(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(ServerState, "start_background", lambda self, **kw: started.append(self))
    server = build_server(tmp_path / "store")

    async def go(mode):
        async with Client(server, mode=mode) as client:
            before = len(started)  # the handshake is done
            await client.list_tools()
            return before

    for mode in ("legacy", "auto"):  # initialize (up to 2025-11-25), server/discover (2026)
        started.clear()
        assert asyncio.run(go(mode)) == 0 and len(started) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_server_with_a_cached_list_starts_without_the_tools_return_types(cache, tmp_path):
    """Listing the tools from the cache imports neither the tool functions' module (and with it
    the engines' and the store's result types) nor recall's index (numpy)."""
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from noetic.mcp.server import build_server\n"
        "server = build_server(Path(sys.argv[1]))\n"
        "tools = asyncio.run(server.list_tools())\n"
        "print(len(tools), 'noetic.mcp.tools' in sys.modules, 'numpy' in sys.modules)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "store")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][:2] == [str(len(TOOLS)), "True"]  # generated, and cached
    assert runs[1] == [str(len(TOOLS)), "False", "False"]  # listed from the cache
