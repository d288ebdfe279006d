"""`noetic hook EVENT`: what a host (Claude Code) runs on each event, JSON in and out.

A hook never stands in the agent's way: whatever goes wrong is appended to
``<store>/hooks.log`` (one line on stderr says where), nothing is printed on stdout, and it
exits 0 — except ``pre-tool-use``, which then prints ``deny`` naming the error (a payload too
big to read, say: an error the agent can cause must not open the gate). On success stdout
holds only the JSON the host reads, or nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def hook(event: str, store: Path | None = None) -> None:
    """Handle one host hook event: reads the host's JSON on stdin, answers on stdout. Typer's
    declaration is in :mod:`noetic.cli.declared`; a plain call takes the fast path."""
    payload: dict[str, Any] = {}
    try:
        payload = _read_payload()
        from noetic.hosts.hooks.answer import run_hook

        reply = run_hook(event, payload, store=store)
    except Exception as exc:  # a hook must never fail the agent: log, say where, exit 0
        from noetic.errors import error_name
        from noetic.hosts.hooks.shared import log_failure

        where = log_failure(event, payload, store, exc)
        sys.stderr.write(
            f"noetic hook {event}: {error_name(exc)}: {exc}"
            + (f" (logged in {where})" if where else "")
            + "\n"
        )
        if event == "pre-tool-use":  # an error the agent can cause must not open the gate
            from noetic.hosts.hooks.pretool import failed

            sys.stdout.write(json.dumps(failed(exc), ensure_ascii=False) + "\n")
        return
    if reply is not None:
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")


def _read_payload() -> dict[str, Any]:
    from noetic.cli.inputs import read_stdin
    from noetic.errors import InvalidValueError
    from noetic.untrusted import load_json

    if sys.stdin is None or sys.stdin.isatty():
        return {}
    text = read_stdin()
    if not text.strip():
        return {}
    data = load_json(text, "the hook's stdin")
    if not isinstance(data, dict):
        raise InvalidValueError("the hook's stdin is not a JSON object", field="stdin")
    return data
