"""The dashboard on ``noetic serve``'s app, beside ``/mcp`` on the same port.

The MCP SDK's Starlette app keeps its routes (``/mcp``, and any added before this); the
dashboard is mounted after them at ``/``, so it answers every other path, including the 404
page. :func:`owns` tells the server's bearer check which paths the dashboard guards itself
(pages take a login cookie as well as the bearer header; see :mod:`noetic.dashboard.auth`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from starlette.routing import Mount

if TYPE_CHECKING:
    from noetic.operations.access_tokens import Access

PAGES: Final = (
    "/sessions",
    "/tasks",
    "/runs",
    "/calibration",
    "/compare",
    "/evals",
    "/live",
    "/login",
    "/logout",
    "/static",
)
"""The dashboard's paths: each one itself and everything below it."""


def owns(path: str) -> bool:
    """Whether ``path`` is one of the dashboard's (:data:`PAGES`), which checks its own
    access: ``/tasks`` as well as ``/tasks/ID``, never a path that only begins the same
    (``/tasksx``)."""
    return path == "/" or any(path == page or path.startswith(page + "/") for page in PAGES)


def mount_dashboard(app: Any, home: Path, *, access: Access) -> Any:
    """Add the dashboard to the Starlette ``app`` after its own routes; returns the dashboard."""
    from noetic.dashboard.app import dashboard_app

    dashboard = dashboard_app(home, access=access)
    app.router.routes.append(Mount("", app=dashboard))
    return dashboard
