"""Index finished tasks for recall in a detached process, so a short-lived command (``noetic
postflight``) never waits for the embedder to load (``docs/recall.md``).

:func:`spawn_indexer` returns at once: a shell starts the indexer in the background and exits,
so no zombie is left for the caller to reap (a CLI command, which ends as it answers, starts it
directly and leaves it to the system). If it never runs or is killed, nothing is lost: the tasks
stay pending, ``recall`` catches up on them before it ranks, and ``noetic reindex`` embeds them
all. ``NOETIC_INDEX=inline`` indexes in the calling process; ``NOETIC_INDEX=off`` leaves the
tasks pending.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

MODES = ("background", "inline", "off")


def mode() -> str:
    """How finished tasks are indexed: ``$NOETIC_INDEX`` if it names a mode, else background."""
    value = os.environ.get("NOETIC_INDEX", "").strip().lower()
    return value if value in MODES else "background"


def spawn_indexer(where: str | Path | None, *, ends_soon: bool = False) -> None:
    """Index the pending tasks of the store at ``where`` (found as
    :func:`noetic.store.open_store` finds it) the way :func:`mode` says, never raising. In the
    background the store is not opened here: the indexer opens it. ``ends_soon``: the calling
    process ends as soon as it answers (a CLI command), so the indexer is started directly and
    left to the system, which adopts and reaps it; otherwise a shell starts it and exits, so a
    process that lives on is left no zombie."""
    how = mode()
    if how == "off":
        return
    if how == "inline":
        from noetic.recall.index import index_new_tasks
        from noetic.store import open_store

        index_new_tasks(open_store(where))  # closed with the command's stores
        return
    from noetic.store.location import locate_store, require_store

    home = str(require_store(locate_store(where)).resolve())
    # If the shell cannot start, the tasks stay pending and recall catches up on them.
    from noetic.spawning import Expired, detached, started

    indexer = [sys.executable, "-m", "noetic.recall.background", home]
    if ends_soon:
        with contextlib.suppress(OSError):
            if started(indexer) is not None:
                return
    with contextlib.suppress(OSError, Expired):
        # the command's words are the shell's arguments ("$@"), not text it parses: no quoting
        # (nor shlex) needed
        detached(["/bin/sh", "-c", '"$@" </dev/null >/dev/null 2>&1 &', "sh", *indexer],
                 timeout=10)  # fmt: skip


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m noetic.recall.background STORE_DIR", file=sys.stderr)
        return 2
    home = Path(argv[0])
    from noetic.store import open_store
    from noetic.store.location import store_url

    if store_url(home) is None and not (home / "noetic.db").is_file():
        return 1
    from noetic.recall.index import index_new_tasks

    with open_store(home, create=True) as store:
        index_new_tasks(store)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
