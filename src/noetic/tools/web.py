"""``search`` and ``scrape``: the web, through backends the user configures.

Nothing reaches the network unless the user asked for it in ``<store>/config.toml``
(``[agent.search]``, ``[agent.scrape]``: docs/configuration.md). With no backend configured the
tools still exist and answer that they are not configured, so a model learns why instead of
seeing a failure. Other search backends register under the ``noetic.search_backends`` entry
points: a factory taking the ``[agent.search]`` table and returning a function
``(query, k) -> list of {"title", "url", "snippet"}``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from html.parser import HTMLParser
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.tools.base import Tool, tool

Backend = Callable[[str, int], list[dict[str, str]]]
BACKEND_GROUP = "noetic.search_backends"
TIMEOUT_S = 15.0


def agent_config(home: Path) -> dict[str, Any]:
    """The ``[agent]`` table of ``<home>/config.toml`` (empty when there is none), checked by
    :mod:`noetic.config`."""
    from noetic.config import load

    config = load(home)
    config.agent  # noqa: B018 - checks the table
    return dict(config.section("agent").table)


def searxng(settings: dict[str, Any]) -> Backend:
    url = str(settings.get("url", "")).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise InvalidValueError(
            "[agent.search] url must be an http(s) address", field="agent.search.url", value=url
        )

    def search(query: str, k: int) -> list[dict[str, str]]:
        import httpx

        reply = httpx.get(f"{url}/search", params={"q": query, "format": "json"}, timeout=TIMEOUT_S)
        reply.raise_for_status()
        results = reply.json().get("results", [])
        return [
            {"title": r.get("title", ""), "url": r.get("url", ""), "snippet": r.get("content", "")}
            for r in results[:k]
        ]

    return search


def _backend(settings: dict[str, Any]) -> Backend | None:
    name = settings.get("backend")
    if not name:
        return None
    if name == "searxng":
        return searxng(settings)
    for ep in entry_points(group=BACKEND_GROUP):
        if ep.name == name:
            made: Backend = ep.load()(settings)
            return made
    known = ["searxng", *sorted(ep.name for ep in entry_points(group=BACKEND_GROUP))]
    raise InvalidValueError(
        f"unknown search backend {name!r}", field="agent.search.backend", fix=f"use {known}"
    )


def search_tool(settings: dict[str, Any] | None = None) -> Tool:
    """The ``search`` tool on the configured backend (``[agent.search]``), if any."""
    backend = _backend(settings or {})

    def search(query: str, k: int = 5) -> str:
        """Search the web.

        Args:
            query: what to search for
            k: how many results (1 to 10)
        """
        if backend is None:
            return (
                "web search is not configured here, so no search was made; the user can set "
                "[agent.search] in Noetic's config.toml"
            )
        if not 1 <= k <= 10:
            raise InvalidValueError("k must be between 1 and 10", field="k", value=k)
        results = backend(query, k)
        if not results:
            return "no results"
        return "\n\n".join(f"{r['title']}\n{r['url']}\n{r['snippet']}" for r in results)

    return tool(search, improves_vectors=("know", "context"))


class _Text(HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    BREAK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "tr", "section", "pre"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        if tag == "title":
            self._in_title = True
        if tag in self.BREAK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self.skipping:
            self.parts.append(data)

    def text(self) -> str:
        joined = re.sub(r"[ \t\r\f\v]+", " ", "".join(self.parts))
        return re.sub(r"\n\s*\n+", "\n\n", joined).strip()


def page_text(body: str) -> tuple[str, str]:
    """The title and the readable text of an HTML page."""
    parser = _Text()
    parser.feed(body)
    parser.close()
    return html.unescape(parser.title.strip()), parser.text()


def scrape_tool(settings: dict[str, Any] | None = None) -> Tool:
    """The ``scrape`` tool, off unless ``[agent.scrape] enabled = true``."""
    settings = settings or {}
    enabled = bool(settings.get("enabled", False))
    max_bytes = int(settings.get("max_bytes", 500_000))

    def scrape(url: str, max_chars: int = 6000) -> str:
        """Fetch a web page and return its readable text.

        Args:
            url: the page's http(s) address
            max_chars: how much of the text to return
        """
        if not enabled:
            return (
                "fetching web pages is not enabled here, so nothing was fetched; the user can "
                "set [agent.scrape] enabled = true in Noetic's config.toml"
            )
        if not url.startswith(("http://", "https://")):
            raise InvalidValueError("the url must start with http:// or https://", field="url")
        import httpx

        with httpx.stream("GET", url, timeout=TIMEOUT_S, follow_redirects=True) as reply:
            reply.raise_for_status()
            data = b""
            for chunk in reply.iter_bytes():
                data += chunk
                if len(data) > max_bytes:
                    data = data[:max_bytes]
                    break
            kind = reply.headers.get("content-type", "")
            encoding = reply.encoding or "utf-8"
        body = data.decode(encoding, errors="replace")
        if "html" not in kind:
            return body[:max_chars]
        title, text = page_text(body)
        return (f"{title}\n\n" if title else "") + text[:max_chars]

    return tool(scrape, improves_vectors=("know", "context"))
