"""Noetic: epistemic infrastructure for LLM agents.

Start reading at :mod:`noetic.vectors` (the 13 vectors and the confidence formula),
:mod:`noetic.assessment` (assessments and the action rule) and :mod:`noetic.profiles`.
Importing :mod:`noetic` is cheap: the public names below load their modules on first use.
"""

from __future__ import annotations

from importlib import import_module
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
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'noetic' has no attribute {name!r}")
