"""Extracting JSON from hostile replies: seconds by size, beside the earlier algorithm.

The baseline is the extractor Noetic used before its input limits (``raw_decode`` tried at
every ``{``), copied here so both run on the same machine in the same run. Linear work shows
as time doubling with size; quadratic as time quadrupling. Sizes stay under the 200,000
character reply limit."""

import contextlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.errors import ParseError
from noetic.llm.structured import extract_json

SHAPES = {"'{\"a' * n": '{"a', "'{x} ' * n": "{x} ", "'{' * n": "{"}
SIZES = (25_000, 50_000, 100_000, 190_000)
_DECODER = json.JSONDecoder()


def baseline(text: str) -> dict:
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError, ValueError):
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ParseError("no JSON object", raw=text)


def seconds(fn, text: str) -> float:
    start = time.perf_counter()
    with contextlib.suppress(ParseError):
        fn(text)
    return time.perf_counter() - start


def main() -> None:
    print(f"{'shape':<12} {'chars':>8} {'baseline s':>11} {'now s':>8}")
    for label, unit in SHAPES.items():
        for size in SIZES:
            text = unit * (size // len(unit))
            print(
                f"{label:<12} {len(text):>8,} {seconds(baseline, text):>11.3f} "
                f"{seconds(extract_json, text):>8.3f}"
            )


if __name__ == "__main__":
    main()
