"""The MCP SDK's server side, imported without what a server does not use (docs/mcp.md,
"Start-up").

:func:`defer_package_init` registers the ``mcp`` package with its ``__init__`` (which imports
the SDK's client to re-export it) not yet run, so the server's modules load alone; the file
runs, once, the first time anything reads a name the package itself defines, so a client in the
same process works as usual. :func:`plain_logging` keeps ``MCPServer()`` from importing Rich for
its log handler.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_LOCK = threading.RLock()


def defer_package_init(name: str = "mcp") -> bool:
    """Register package ``name`` without running its ``__init__`` until one of its own names is
    read. False (and nothing done) when it is already imported or is not a package."""
    with _LOCK:
        if name in sys.modules:
            return False
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # a parent package that does not exist
            return False
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return False
        package = importlib.util.module_from_spec(spec)
        pending = [True]

        def __getattr__(attribute: str) -> Any:  # PEP 562: only names not yet in the module
            with _LOCK:  # other threads wait here while the __init__ runs
                if pending.pop() if pending else False:  # the first read runs it, once
                    try:
                        spec.loader.exec_module(package)  # type: ignore[union-attr]
                    finally:
                        package.__dict__.pop("__getattr__", None)
            try:
                return package.__dict__[attribute]
            except KeyError:  # not defined, or read by the __init__ itself before defining it
                raise AttributeError(
                    f"module {name!r} has no attribute {attribute!r}", name=attribute, obj=package
                ) from None

        package.__getattr__ = __getattr__  # type: ignore[method-assign]
        sys.modules[name] = package
        return True


@contextmanager
def plain_logging() -> Iterator[None]:
    """While ``MCPServer()`` is made, its logging set-up uses a plain stderr handler instead of
    importing Rich for one (both only take effect if the root logger has no handler yet)."""
    module = importlib.import_module("mcp.server.mcpserver.server")
    configure = getattr(module, "configure_logging", None)
    if configure is None:  # another SDK version: nothing to replace
        yield
        return

    def plain(level: str = "INFO") -> None:
        logging.basicConfig(level=level, format="%(message)s", handlers=[logging.StreamHandler()])

    setattr(module, "configure_logging", plain)  # noqa: B010 (found by name: another SDK may lack it)
    try:
        yield
    finally:
        setattr(module, "configure_logging", configure)  # noqa: B010
