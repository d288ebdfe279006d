"""The eval pages: ``/evals`` lists the runs of ``noetic eval``, ``/evals/{id}`` shows one run's
calibration per phase and its problems. Each parses the URL, calls one read operation
(:mod:`noetic.operations.eval_view`) and renders its own template."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from noetic.operations import live

if TYPE_CHECKING:
    from noetic.dashboard.pages import Pages


def eval_routes(pages: Pages) -> list[Route]:
    """The routes of the eval pages, rendered by ``pages``."""

    def evals(request: Request) -> Response:
        from noetic.operations.eval_view import eval_runs

        store = pages.store()
        cursor = live.cursor(store)
        return pages.render(
            request, "evals.html", {"runs": eval_runs(store), "cursor": cursor, "title": "Evals"}
        )

    def eval_run(request: Request) -> Response:
        from noetic.operations.eval_view import eval_view

        store = pages.store()
        cursor = live.cursor(store)
        report = eval_view(store, request.path_params["id"])
        title = f"Eval {report.run.run_id}"
        return pages.render(request, "eval.html", {"r": report, "cursor": cursor, "title": title})

    return [Route("/evals", evals), Route("/evals/{id}", eval_run)]
