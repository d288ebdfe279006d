"""Run by test_resume.py in a child process: a Nova run that hangs in the synthesis, to be
killed with SIGKILL once the experts' turns are in the store."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from noetic.nova import NovaSettings, run_nova
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from .panel import Panel
from .test_engine import SEED


def hang(request):
    print("SYNTHESIS", flush=True)  # the experts are persisted: the parent may kill us now
    time.sleep(120)
    raise SystemExit("not killed")


def main(home: str) -> None:
    panel = Panel({**SEED, ("dce", "synthesize"): hang})
    store = Store(Path(home))
    ctx = build_context("nova", tracker=Tracker(store, ProfileRegistry()), provider=panel.provider)
    asyncio.run(run_nova(ctx, "Should we use OAuth2 or custom JWT?", settings=NovaSettings()))


if __name__ == "__main__":
    main(sys.argv[1])
