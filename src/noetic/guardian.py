"""Deprecated: the calibration functions live in :mod:`noetic.calibration`.

``noetic.guardian.record_outcome`` was documented, so the old names still resolve here (with a
``DeprecationWarning``); ``noetic.guardian.guardian`` is now ``noetic.calibration.run_guardian``.
"""

from __future__ import annotations

import warnings
from typing import Any

_RENAMED = {"guardian": "run_guardian"}


def __getattr__(name: str) -> Any:
    import noetic.calibration as calibration

    new = _RENAMED.get(name, name)
    if new.startswith("_") or new not in calibration.__all__:
        raise AttributeError(f"module 'noetic.guardian' has no attribute {name!r}")
    warnings.warn(
        f"noetic.guardian.{name} is deprecated; use noetic.calibration.{new}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(calibration, new)
