"""The post-tool-use hook's reading of long Bash lines: the one-pass walk over a line's commands
beside the pairwise comparison it replaced, on the same parse, and a 10 MB line end to end.

    python bench/long_bash_lines.py
"""

from __future__ import annotations

import time

from noetic.hosts.testing import commands as testruns
from noetic.tools.shellgate.syntax import parse

PLACES = {"workspace": "/w", "cwd": "/w", "home": "/h"}


def _pairwise(ordered: list) -> list:
    def inside(inner, outer) -> bool:
        return (
            outer.start <= inner.start
            and inner.start + len(inner.text) <= outer.start + len(outer.text)
            and (outer.start, len(outer.text)) != (inner.start, len(inner.text))
        )

    return [c for c in ordered if not any(inside(c, o) for o in ordered if o is not c)]


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    print(f"{'commands':>9} {'one pass':>10} {'pairwise':>10}")
    for n in (1_000, 2_000, 4_000):
        line = "true; " * n + "pytest -q"
        ordered = sorted(parse(line, **PLACES).commands, key=lambda c: c.start)
        print(
            f"{n + 1:>9} {_timed(testruns._top_level, ordered) * 1000:>8.1f}ms "
            f"{_timed(_pairwise, ordered) * 1000:>8.1f}ms"
        )
    big = "pytest " + "tests/a.py " * 1_000_000
    seconds = _timed(lambda: testruns.recognise(big, ["pytest"], **PLACES))
    print(f"recognise() on a {len(big) / 1e6:.0f} MB line: {seconds * 1000:.1f} ms (not parsed)")


if __name__ == "__main__":
    main()
