"""Noetic: epistemic infrastructure for LLM agents.

Start reading at :mod:`noetic.vectors` (the 13 vectors and the confidence formula),
:mod:`noetic.assessment` (assessments and the action rule) and :mod:`noetic.profiles`.
Importing :mod:`noetic` is cheap: the public names below load their modules on first use.

The public surface: the domain (vectors, assessments, profiles), the store and the tracker;
each engine's entry point on a run context (``run_cascade``, ``run_chain``, ``run_nova`` and
``resume_nova``, ``run_agent`` and the :class:`Agent` class), :func:`build_context` that makes
one and :class:`ScriptedProvider` for tests; and the operations an application calls to start
or read a run the way the CLI and the MCP server do (``start_cascade``, ``start_chain``,
``start_nova``, ``open_agent``, ``start_agent``, ``resume_agent``; the rest, such as the
workflow's phases, under :mod:`noetic.operations`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


__version__ = "0.1.0"

_PUBLIC = {
    "Action": "noetic.assessment",
    "Assessment": "noetic.assessment",
    "Phase": "noetic.assessment",
    "decide": "noetic.assessment",
    "Profile": "noetic.profiles",
    "ProfileRegistry": "noetic.profiles",
    "Store": "noetic.store",
    "Tracker": "noetic.runtime.tracker",
    "VECTOR_NAMES": "noetic.vectors",
    "overall_confidence": "noetic.vectors",
    "basic_calibration": "noetic.calibration",
    # the engines' entry points, and what they run on
    "run_cascade": "noetic.cascade.engine",
    "run_chain": "noetic.observer.chain",
    "run_nova": "noetic.nova",
    "resume_nova": "noetic.nova",
    "run_agent": "noetic.agent",
    "Agent": "noetic.agent",
    "build_context": "noetic.runtime.context",
    "Limits": "noetic.runtime.context",
    "RunContext": "noetic.runtime.context",
    "ScriptedProvider": "noetic.llm.scripted",
    # the operations: what the CLI, the MCP server and the dashboard call
    "start_cascade": "noetic.operations",
    "start_chain": "noetic.operations",
    "start_nova": "noetic.operations",
    "open_agent": "noetic.operations",
    "start_agent": "noetic.operations",
    "resume_agent": "noetic.operations",
}

__all__ = sorted([*_PUBLIC, "operations"])


def __getattr__(name: str) -> Any:
    # __import__, not importlib's import_module (importlib and the warnings it loads)
    if name == "operations":
        __import__("noetic.operations")
        return sys.modules["noetic.operations"]
    if name in _PUBLIC:
        __import__(_PUBLIC[name])
        return getattr(sys.modules[_PUBLIC[name]], name)
    raise AttributeError(f"module 'noetic' has no attribute {name!r}")
