"""The page handlers and the template environment: parse the URL, call one read operation,
render one template. No figures are computed here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode

from jinja2 import Environment
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from noetic.calibration.metrics import MIN_SAMPLES
from noetic.dashboard import charts
from noetic.errors import InvalidValueError
from noetic.operations import live
from noetic.operations.session_list import SessionFilters, list_sessions
from noetic.operations.session_view import session_view
from noetic.operations.task_view import level
from noetic.vectors import DESCRIPTIONS, INVERTED, TIERS, VECTOR_NAMES

if TYPE_CHECKING:
    from noetic.store.base import BaseStore

PREDICTIONS: Final = ("preflight", "check", "postflight", "adversarial_review")
# Agents' text (tasks, reasons, evidence) is shown on every page: it is escaped by the templates,
# and the browser is told to run no script but the dashboard's own file, and not to be framed.
HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
DECISIONS_SHOWN: Final = 200  # the latest; ?decisions=all shows every one
LONGEST: Final = 500  # characters in a query or path parameter


def environment() -> Environment:
    env = charts.templates()
    env.globals.update(
        charts=charts,
        level=level,
        level_of=charts.level_of,
        level_class=charts.LEVEL_CLASS,
        vector_names=VECTOR_NAMES,
        tiers=TIERS,
        inverted=INVERTED,
        descriptions=DESCRIPTIONS,
        urlencode=urlencode,
    )
    env.globals["min_samples"] = MIN_SAMPLES
    env.filters.update(num=_num, signed=_signed, when=_when, ms=_ms, usd=_usd, count=_count)
    return env


def _count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def _when(value: str | None) -> str:
    if not value:
        return "–"
    try:
        return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return value


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


class Pages:
    def __init__(self, stores: Callable[[], BaseStore]) -> None:
        self.stores = stores
        self.env = environment()

    def _opened(self) -> tuple[BaseStore, Any]:
        """The store, and its change cursor from before the page reads it."""
        store = self.stores()
        return store, live.cursor(store)

    def render(
        self, request: Request, template: str, context: dict[str, Any], status_code: int = 200
    ) -> Response:
        html = self.env.get_template(template).render(
            request=request,
            path=request.url.path,
            guarded=request.scope.get("noetic.guarded", False),
            **context,
        )
        return HTMLResponse(html, status_code=status_code, headers=HEADERS)

    def _page(self, request: Request, template: str, **context: Any) -> Response:
        return self.render(request, template, context)

    # pages --------------------------------------------------------------------------------

    def sessions(self, request: Request) -> Response:
        return self._list(request, SessionFilters, list_sessions, "sessions.html", "Sessions")

    def tasks(self, request: Request) -> Response:
        from noetic.operations.task_list import TaskFilters, list_tasks

        return self._list(request, TaskFilters, list_tasks, "tasks.html", "Tasks")

    def _list(
        self,
        request: Request,
        kind: type[SessionFilters],
        read: Callable[[BaseStore, Any], Any],
        template: str,
        title: str,
    ) -> Response:
        """A list page: its filters (of ``kind``) from the query string, the page ``read``."""
        _checked(request)
        store, cursor = self._opened()
        filters = kind.model_validate(_params(request, kind.model_fields))
        page = read(store, filters)
        return self._page(request, template, page=page, cursor=cursor, title=title)

    def session(self, request: Request) -> Response:
        return self._view(request, session_view, "session.html", "s", "Session")

    def _view(
        self,
        request: Request,
        read: Callable[[BaseStore, str], Any],
        template: str,
        name: str,
        title: str,
    ) -> Response:
        """A page of one thing, ``read`` by the id in its path and given to the template as
        ``name``."""
        _checked(request, ())
        store, cursor = self._opened()
        view = read(store, request.path_params["id"])
        return self._page(
            request, template, cursor=cursor, title=f"{title} {view.id}", **{name: view}
        )

    def task(self, request: Request) -> Response:
        from noetic.operations.task_view import task_view

        _checked(request, ("decisions",))
        shown_all = request.query_params.get("decisions")
        if shown_all not in (None, "all"):
            raise InvalidValueError(
                f"decisions must be 'all' (every decision) or left out, got {shown_all[:40]!r}",
                field="decisions",
            )
        store, cursor = self._opened()
        view = task_view(store, request.path_params["id"])
        shown = view.assessments if shown_all == "all" else view.assessments[-DECISIONS_SHOWN:]
        return self._page(
            request, "task.html", t=view, decisions=shown, cursor=cursor, title=f"Task {view.id}"
        )

    def run(self, request: Request) -> Response:
        from noetic.operations.run_view import run_timeline

        return self._view(request, run_timeline, "run.html", "t", "Run")

    def calibration(self, request: Request) -> Response:
        from noetic.calibration.outcomes import Filters
        from noetic.operations.calibration_view import calibration_view, outcome_choices

        _checked(request, ("agent", "profile", "domain", "since_days", "prediction"))
        store, cursor = self._opened()
        q = request.query_params
        filters = Filters(
            ai_id=q.get("agent") or None,
            profile=q.get("profile") or None,
            domain=q.get("domain") or None,
            since_days=_days(q.get("since_days") or None),
        )
        prediction = q.get("prediction") or "preflight"
        if prediction not in PREDICTIONS:
            raise InvalidValueError(
                f"prediction must be one of {', '.join(PREDICTIONS)}, got {prediction!r}",
                field="prediction",
            )
        view = calibration_view(store, filters, prediction=prediction)  # type: ignore[arg-type]
        agents, profiles = outcome_choices(store)
        return self._page(
            request,
            "calibration.html",
            v=view,
            agents=agents,
            profiles=profiles,
            predictions=PREDICTIONS,
            cursor=cursor,
            title="Calibration",
        )

    def compare(self, request: Request) -> Response:
        from noetic.operations.compare import compare, compare_choices

        _checked(request, ("a", "b"))
        store, cursor = self._opened()
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        comparison = compare(store, a, b) if a and b else None
        agents = compare_choices(store)
        return self._page(
            request,
            "compare.html",
            c=comparison,
            a=a,
            b=b,
            agents=agents,
            cursor=cursor,
            title="Compare",
        )

    def evals(self, request: Request) -> Response:
        """Every run of ``noetic eval``, newest first."""
        from noetic.operations.eval_view import eval_runs

        store, cursor = self._opened()
        return self._page(
            request, "evals.html", runs=eval_runs(store), cursor=cursor, title="Evals"
        )

    def eval_run(self, request: Request) -> Response:
        """One eval run's calibration per phase, and its problems."""
        from noetic.operations.eval_view import eval_view

        store, cursor = self._opened()
        report = eval_view(store, request.path_params["id"])
        title = f"Eval {report.run.run_id}"
        return self._page(request, "eval.html", r=report, cursor=cursor, title=title)

    # errors -------------------------------------------------------------------------------

    def _error(self, request: Request, title: str, message: str, status: int) -> Response:
        return self.render(
            request, "error.html", {"title": title, "message": message}, status_code=status
        )

    def not_found(self, request: Request, exc: Exception) -> Response:
        return self._error(request, "Not found", str(exc), 404)

    def bad_request(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, ValidationError):
            message = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
        else:
            message = str(exc)
        return self._error(request, "Bad request", message, 400)

    def http_error(self, request: Request, exc: Exception) -> Response:
        if not isinstance(exc, HTTPException):
            raise exc
        title = "Not found" if exc.status_code == 404 else "Error"
        message = f"nothing at {request.url.path}" if exc.status_code == 404 else str(exc.detail)
        return self._error(request, title, message, exc.status_code)


def _days(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not 0 <= days < 1e6:
        raise InvalidValueError(
            f"since_days must be a number of days from 0, got {text[:20]!r}", field="since_days"
        )
    return days


def _checked(request: Request, known: Any = None) -> None:
    """Refuse what no page can use, before any is read: a query parameter the page does not
    know (``known``; None: the page checks its own), a repeated one, or a query or path
    parameter too long or holding control characters (a NUL, which PostgreSQL refuses)."""
    if known is not None:
        _params(request, known)
    for name in request.query_params:
        if len(request.query_params.getlist(name)) > 1:
            raise InvalidValueError(f"{name} is given more than once", field=name)
    values = [*request.query_params.items(), *request.path_params.items()]
    for name, value in values:
        if len(value) > LONGEST or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise InvalidValueError(
                f"{name} must be at most {LONGEST} characters with no control characters, "
                f"got {value[:40]!r}",
                field=name,
            )


def _params(request: Request, fields: Any) -> dict[str, str]:
    """The query parameters the model knows; an unknown one is a mistake worth naming."""
    unknown = sorted(set(request.query_params) - set(fields))
    if unknown:
        known = f"known: {', '.join(fields)}" if fields else "this page takes none"
        raise InvalidValueError(f"unknown parameter {unknown[0]!r}; {known}", field=unknown[0])
    return dict(request.query_params)
