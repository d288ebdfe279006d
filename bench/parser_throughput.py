"""Assessment-parser throughput on the table of messy model replies used by the tests."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

from tests.llm.test_assess_parser import BAD, GOOD

from noetic.errors import ParseError
from noetic.llm.assessment_reply import parse_assessment_reply

ROUNDS = 200


def main() -> None:
    texts = [t for _, t, _ in GOOD] + [t for _, t, _ in BAD]
    start = time.perf_counter()
    for _ in range(ROUNDS):
        for text in texts:
            with contextlib.suppress(ParseError):
                parse_assessment_reply(text, "preflight")
    elapsed = time.perf_counter() - start
    n = ROUNDS * len(texts)
    print(
        f"{n} replies ({len(GOOD)} good, {len(BAD)} bad shapes) in {elapsed:.2f} s: "
        f"{n / elapsed:,.0f} replies/s, {elapsed / n * 1e6:.0f} µs each"
    )


if __name__ == "__main__":
    main()
