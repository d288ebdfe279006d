"""`noetic cascade run` names the phases its trajectory went through, a repeated phase once with
its count: ``PREFLIGHT → CHECK ×2 → POSTFLIGHT``."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from noetic.cli.cascade import _phases


def points(*phases: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(phase=p) for p in phases]


def test_a_repeated_phase_is_named_once_with_its_count():
    trajectory = points("PREFLIGHT", "CHECK", "CHECK", "POSTFLIGHT")
    assert _phases(trajectory) == "PREFLIGHT → CHECK ×2 → POSTFLIGHT"
    assert _phases(points("CHECK", "PREFLIGHT", "CHECK")) == "CHECK → PREFLIGHT → CHECK"
    assert _phases([]) == ""


@given(st.lists(st.sampled_from(["PREFLIGHT", "CHECK", "ACT", "POSTFLIGHT"]), max_size=30))
def test_the_names_expand_back_to_the_trajectory(phases):
    expanded: list[str] = []
    for part in filter(None, _phases(points(*phases)).split(" → ")):
        name, _, count = part.partition(" ×")
        assert count != "1"
        expanded += [name] * int(count or 1)
    assert expanded == phases
