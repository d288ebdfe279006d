"""The agent's other built-ins: retrieve (local documents), search and scrape (configured
backends only, over loopback here), recall (past tasks), and an MCP server's tool in a run."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from noetic.agent import Agent
from noetic.agent.api import recall_tool
from noetic.errors import ValidationError
from noetic.llm.base import Request
from noetic.llm.scripted import ScriptedProvider, calling
from noetic.tools.documents import retrieve_tool
from noetic.tools.web import agent_config, page_text, scrape_tool, search_tool

from ..recall.test_recall import add, seeded, summary  # noqa: F401


def call(t: Any, **arguments: Any) -> Any:
    return asyncio.run(t.call(arguments))


@contextmanager
def serving(routes: dict[str, tuple[str, bytes]]) -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.path)
            kind, body = routes.get(self.path.split("?")[0], ("text/plain", b"missing"))
            self.send_response(200 if self.path.split("?")[0] in routes else 404)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_retrieve_finds_the_passage_by_meaning(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Deploying\n\nRun make release, then push the tag.\n")
    (docs / "cooking.md").write_text("# Bread\n\nKnead the dough for ten minutes.\n")
    (docs / "ignored.bin").write_bytes(b"\x00\x01")
    retrieve = retrieve_tool(docs)
    found = call(retrieve, query="how do I ship a new version?", k=1)
    assert found.ok and found.output.startswith("deploy.md:1")
    (docs / "cooking.md").write_text("# Release notes\n\nShipping a version: tag it first.\n")
    again = call(retrieve, query="bread dough kneading", k=2)
    assert "Knead" not in again.output  # the changed file was embedded again
    assert call(retrieve, query="", k=1).argument == "query"
    assert call(retrieve, query="x", k=0).argument == "k"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no documents" in call(retrieve_tool(empty), query="anything").output


def test_search_and_scrape_say_so_when_not_configured() -> None:
    searched = call(search_tool(), query="noetic")
    assert searched.ok and "not configured" in searched.output
    scraped = call(scrape_tool(), url="http://127.0.0.1:9/")
    assert scraped.ok and "not enabled" in scraped.output


@pytest.mark.slow
def test_search_through_a_searxng_backend(tmp_path: Path) -> None:
    results = {"results": [{"title": "Noetic", "url": "https://x/noetic", "content": "agents"}]}
    with serving({"/search": ("application/json", json.dumps(results).encode())}) as (url, seen):
        searched = call(search_tool({"backend": "searxng", "url": url}), query="noetic", k=3)
    assert searched.output == "Noetic\nhttps://x/noetic\nagents"
    assert seen == ["/search?q=noetic&format=json"]
    with pytest.raises(ValidationError, match="unknown search backend"):
        search_tool({"backend": "altavista"})
    with pytest.raises(ValidationError, match="http"):
        search_tool({"backend": "searxng", "url": "file:///etc"})


@pytest.mark.slow
def test_scrape_returns_the_readable_text(tmp_path: Path) -> None:
    page = (
        b"<html><head><title>Docs &amp; more</title><style>p{}</style></head><body>"
        b"<script>steal()</script><h1>Install</h1><p>Run <b>pip install</b> noetic.</p>"
        b"</body></html>"
    )
    big = b"<p>" + b"x" * 5000 + b"</p>"
    routes = {"/page": ("text/html; charset=utf-8", page), "/big": ("text/html", big)}
    with serving(routes) as (url, _):
        scrape = scrape_tool({"enabled": True, "max_bytes": 1000})
        text = call(scrape, url=f"{url}/page").output
        assert text.startswith("Docs & more\n\nInstall")
        assert "pip install noetic." in text and "steal" not in text and "p{}" not in text
        assert len(call(scrape, url=f"{url}/big").output) <= 1000
        assert not call(scrape, url=f"{url}/missing").ok  # a 404 is the tool's failure
    assert call(scrape, url="ftp://x").argument == "url"
    assert page_text("<p>a</p><p>b</p>")[1] == "a\nb"


def test_agent_config_is_read_and_a_broken_one_named(tmp_path: Path) -> None:
    assert agent_config(tmp_path) == {}
    (tmp_path / "config.toml").write_text('[agent.search]\nbackend = "searxng"\n')
    assert agent_config(tmp_path) == {"search": {"backend": "searxng"}}
    (tmp_path / "config.toml").write_text("[agent\n")
    with pytest.raises(ValidationError, match="not valid TOML"):
        agent_config(tmp_path)


def test_recall_finds_past_tasks(seeded) -> None:  # noqa: F811
    recall = recall_tool(seeded)
    assert "no past task matches" in call(recall, query="fix the flaky timezone test").output
    add(seeded, summary("fix the flaky timezone test in the scheduler", notes="use UTC"))
    found = call(recall, query="the timezone test is flaky again").output
    assert "timezone" in found and "use UTC" in found


NOETIC = str(Path(__import__("sys").executable).parent / "noetic")


@pytest.mark.subprocess
def test_an_mcp_servers_tool_is_used_by_the_agent(tmp_path: Path) -> None:
    home = tmp_path / ".noetic"
    home.mkdir()
    (home / "config.toml").write_text(
        # the SDK starts a server with a few safe variables only: `env` adds the run's cache
        "[mcp_servers.guide]\n"
        f'command = ["env", "NOETIC_CACHE_DIR={os.environ["NOETIC_CACHE_DIR"]}"'
        f', "{NOETIC}", "mcp", "--store", "{tmp_path / "other"}"]\n'
    )
    asked: list[Request] = []

    def model(request: Request) -> Any:
        if (request.system or "").startswith("You triage"):
            assert "- guide_get_workflow_guidance: [MCP guide]" in request.system
            return json.dumps({"safe": True, "tools": ["guide_get_workflow_guidance"]})
        asked.append(request)
        if len(asked) == 1:
            return calling(("guide_get_workflow_guidance", {"phase": "check"}))
        return "guidance: " + request.messages[-1].tool_results[0].content[:40]

    agent = Agent(provider=ScriptedProvider(model), workspace=tmp_path, home=home)
    result = agent.run("how do I do a CHECK?")
    (used,) = result.tool_calls
    assert used["tool"] == "guide_get_workflow_guidance" and used["ok"]
    assert "CHECK" in asked[1].messages[-1].tool_results[0].content
    assert result.answer.startswith("guidance: ")
    agent.close()


def test_the_built_ins_and_entry_points_register_themselves(tmp_path: Path) -> None:
    agent = Agent(provider=ScriptedProvider([]), workspace=tmp_path, home=tmp_path / ".noetic")
    names = {t.name for t in agent.context().tools}
    builtins = {"file_read", "file_write", "file_edit", "file_list", "shell", "retrieve",
                "search", "scrape", "recall", "read_file", "list_tree", "search_text"}  # fmt: skip
    assert builtins <= names
    explicit = Agent(provider=ScriptedProvider([]), workspace=tmp_path, home=tmp_path / ".n2",
                     tools=[retrieve_tool(tmp_path)])  # fmt: skip
    assert [t.name for t in explicit.context().tools] == ["retrieve"]
    agent.close()
    explicit.close()
