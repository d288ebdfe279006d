"""What deciding per request whether a token is required costs ``noetic serve``.

Each request's check (:meth:`noetic.operations.access_tokens.Access.admit`) is timed
in-process, on a
SQLite store and on PostgreSQL (the tests' own server, tests/_postgres.py, on a loopback port;
``--no-pg`` skips it), beside the baseline from the same run: the
lookup of a bearer token alone (:meth:`Access.bearer`), which was the whole per-request cost
before, when whether tokens were required was fixed at start. The statements each check runs
are counted too (SQLite's trace callback).

    .venv/bin/python bench/token_check.py [--no-pg] [--n 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noetic.operations.access_tokens import Access, create_token
from noetic.store import open_store


def _per_call_us(cases: dict[str, Callable[[], Any]], n: int) -> dict[str, float]:
    """Each case's time per call in microseconds: the median of 5 rounds of ``n // 5`` calls,
    the cases interleaved round by round (after a warm-up round) so a busy machine slows all
    alike."""
    rounds: dict[str, list[float]] = {name: [] for name in cases}
    for i in range(6):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(n // 5):
                fn()
            if i:  # round 0 warms up
                rounds[name].append((time.perf_counter() - start) / (n // 5) * 1e6)
    return {name: statistics.median(times) for name, times in rounds.items()}


def _bench(label: str, home: Path, n: int, urls: tuple[str, str] | None = None) -> None:
    """``urls``: two empty PostgreSQL schemas (the store without tokens, the one with)."""
    if urls:
        os.environ["NOETIC_STORE_URL"] = urls[0]
    empty = Access(home.with_name("empty"), None)
    assert empty.admit(None) is not None  # opened, and open: no tokens there
    if urls:
        os.environ["NOETIC_STORE_URL"] = urls[1]
    with open_store(home, create=True) as store:
        alice = create_token(store, "alice")["token"]
    header = f"Bearer {alice}"
    guarded = Access(home, None)
    assert guarded.admit(None) is None  # opened, and closed: alice is live
    us = _per_call_us(
        {
            "before": lambda: guarded.bearer(header),
            "valid": lambda: guarded.admit(header),
            "none": lambda: guarded.admit(None),
            "wrong": lambda: guarded.admit("Bearer wrong"),
            "open": lambda: empty.admit(None),
        },
        n,
    )
    print(f"{label}: per request, µs (median of 5 rounds of {n // 5})")
    print(f"  baseline, a valid token's lookup alone (before)   {us['before']:8.1f}")
    print(f"  a valid token                                     {us['valid']:8.1f}  "
          f"({us['valid'] / us['before']:.2f}x)")  # fmt: skip
    print(f"  no token, the store has tokens (refused)          {us['none']:8.1f}")
    print(f"  a wrong token (refused)                           {us['wrong']:8.1f}")
    print(f"  no token, no tokens yet (let in; before: none)    {us['open']:8.1f}")
    reader = guarded._reader()
    if reader.dialect == "sqlite":
        seen: list[str] = []
        reader.conn.set_trace_callback(seen.append)
        for name, value in (("valid", header), ("none", None), ("wrong", "Bearer wrong")):
            seen.clear()
            guarded.admit(value)
            print(f"  statements, {name:5} token: {len(seen)}")
        reader.conn.set_trace_callback(None)
    empty.close()
    guarded.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-pg", action="store_true", help="SQLite only")
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _bench("SQLite", Path(tmp) / "store", args.n)
    if not args.no_pg:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests._postgres import running

        with running() as server, tempfile.TemporaryDirectory() as tmp:
            urls = (server.new_schema(), server.new_schema())
            _bench("PostgreSQL", Path(tmp) / "store", args.n, urls)


if __name__ == "__main__":
    main()
