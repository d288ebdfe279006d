"""The agent's own record, in one line, where it forms its next statement (``docs/calibration.md``
says where it is shown), read from the map kept in ``calibration_maps`` (:mod:`.recalibrating`)
as plain numbers: this module imports nothing but :mod:`json` and the store's plain reads, so a
hook pays for no model library. Nothing is said before the agent has outcomes.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.store.base import BaseStore


def record_line(store: BaseStore, ai_id: str) -> str | None:
    """The line for ``ai_id`` from its newest kept map, or None when it has no outcomes yet (or
    no map was kept: one is at its first outcome)."""
    from noetic.store.reads import newest_map_body

    return line_from(newest_map_body(store, ai_id))


def line_from(body: str | None) -> str | None:
    """The line from a kept map's body (None: no map kept)."""
    record = json.loads(body).get("record") if body is not None else None
    if not record:
        return None
    tasks, mean = record["tasks"], record["mean_stated"]
    line = (
        f"Your record in Noetic: your last {tasks} PREFLIGHT statement"
        f"{'s' if tasks != 1 else ''} {'averaged' if tasks != 1 else 'was'} {mean:.2f}; "
        f"{record['succeeded']:.0%} of those tasks succeeded"
    )
    if record.get("calibrated") is not None:
        line += (
            f"; calibrated, your {mean:.2f} has meant {record['calibrated']:.2f}, and Noetic "
            "decides on the calibrated value"
        )
    return line + ". State what you expect, not what you hope."
