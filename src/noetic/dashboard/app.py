"""The dashboard's routes: each page calls one read operation and renders one template.

Pages are read-only (``GET``); the one ``POST`` is the login form. A bad query parameter is a
400 page naming it, an unknown id a 404 page. Each page carries the store's change cursor from
before it was read, so its script (``static/live.js``) asks ``/live`` for whatever changed
after that and re-renders the page in place.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, urlencode

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from noetic.dashboard import auth
from noetic.dashboard.live import live_endpoint
from noetic.errors import InvalidValueError, NotFoundError
from noetic.store import open_store

if TYPE_CHECKING:
    from noetic.dashboard.pages import Pages
    from noetic.operations.access_tokens import Access, Identity
    from noetic.store.base import BaseStore

HERE: Final = Path(__file__).parent


class _Store:
    """The store, opened on first use and shared by the worker threads (a SQLite store opens
    a connection per thread itself, so their reads run in parallel)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._store: BaseStore | None = None
        self._lock = threading.Lock()

    def __call__(self) -> BaseStore:
        with self._lock:
            if self._store is None:
                self._store = open_store(self.home, create=True, write_files=False)
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def dashboard_app(home: Path, *, access: Access | None = None) -> Starlette:
    """The dashboard over the store at ``home``; ``access``: who may read it, as for ``noetic
    serve`` (default: the admin token none, the store's tokens)."""
    from noetic.dashboard.pages import Pages
    from noetic.operations.access_tokens import Access

    access = access or Access(home, None)
    stores = _Store(home)
    pages = Pages(stores)
    routes = [
        Route("/", pages.sessions),
        Route("/sessions", pages.sessions),
        Route("/sessions/{id}", pages.session),
        Route("/tasks", pages.tasks),
        Route("/tasks/{id}", pages.task),
        Route("/runs/{id}", pages.run),
        Route("/calibration", pages.calibration),
        Route("/compare", pages.compare),
        Route("/evals", pages.evals),
        Route("/evals/{id}", pages.eval_run),
        Route("/live", live_endpoint(stores)),
        Route("/login", _login_form(pages), methods=["GET"]),
        Route("/login", _login(access), methods=["POST"]),
        Route("/logout", _logout(access), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            NotFoundError: pages.not_found,
            HTTPException: pages.http_error,
            InvalidValueError: pages.bad_request,
            ValidationError: pages.bad_request,
        },
    )
    app.add_middleware(_Guard, access=access)
    app.state.stores = stores
    app.state.pages = pages
    return app


class _Guard:
    """Plain ASGI middleware applying :func:`noetic.dashboard.auth.allowed` to each request:
    a page without it redirects to the login form, anything else is a 401."""

    def __init__(self, app: Any, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or _public(scope):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        cookies = Request(scope).cookies

        def admitted() -> Identity | None:
            return auth.admitted(
                self.access,
                authorization=headers.get("authorization"),
                cookie=cookies.get(auth.COOKIE),
                host_header=headers.get("host"),
            )

        who = admitted()
        if who is not None:
            scope["noetic.guarded"] = not who.open  # the pages offer to log out
            # asked again while a /live stream is open: a logout or a revoke ends it
            scope["noetic.still_admitted"] = lambda: admitted() is not None
            await self.app(scope, receive, send)
            return
        if not self.access.required:
            response: Response = PlainTextResponse(
                "this dashboard answers requests addressed to this machine only", status_code=403
            )
        elif scope["method"] == "GET" and scope["path"] != "/live":
            target = scope["path"] + (
                "?" + scope["query_string"].decode("latin-1") if scope["query_string"] else ""
            )
            response = RedirectResponse("/login?" + urlencode({"next": target}), status_code=303)
        else:
            challenge = {"WWW-Authenticate": 'Bearer realm="noetic"'}
            response = PlainTextResponse(
                "missing or wrong token", status_code=401, headers=challenge
            )
        await response(scope, receive, send)


def _public(scope: dict[str, Any]) -> bool:
    path: str = scope["path"]
    return path == "/login" or path.startswith("/static/")


def _login_form(pages: Pages) -> Callable[[Request], Any]:
    def login_form(request: Request) -> Response:
        return pages.render(
            request,
            "login.html",
            {"next": auth.safe_next(request.query_params.get("next")), "failed": False},
        )

    return login_form


def _login(access: Access) -> Callable[[Request], Any]:
    async def login(request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        target = auth.safe_next((form.get("next") or ["/"])[0])
        if not access.required:
            return RedirectResponse(target, status_code=303)
        given = (form.get("token") or [""])[0]
        who = access.token(given) if given else None
        if who is None:
            pages: Pages = request.app.state.pages
            return pages.render(
                request, "login.html", {"next": target, "failed": True}, status_code=401
            )
        response = RedirectResponse(target, status_code=303)
        previous = request.cookies.get(auth.COOKIE)
        if previous:
            access.logout(previous)
        response.set_cookie(
            auth.COOKIE, access.login(who), httponly=True, samesite="strict", path="/"
        )
        return response

    return login


def _logout(access: Access) -> Callable[[Request], Any]:
    def logout(request: Request) -> Response:
        """End this browser's login session on the server (and so its open streams), then
        forget the cookie."""
        given = request.cookies.get(auth.COOKIE)
        if given:
            access.logout(given)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(auth.COOKIE, path="/")
        return response

    return logout
