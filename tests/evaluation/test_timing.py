"""How a problem's time is split: what Noetic's work added to it, with the model's call and the
tests overlapping, for any timeline."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from noetic.evaluation.engine import _added, _Span

ms = st.floats(min_value=0, max_value=10_000, allow_nan=False)


@st.composite
def timelines(draw):
    """A problem's tests and its reassessment's call, each an interval on one clock (seconds),
    the call's model time within it, and the problem's total and model time around both."""
    t0 = draw(st.floats(0, 10))
    tests = _Span(start=t0, end=t0 + draw(st.floats(0, 5)))
    c0 = draw(st.floats(0, 10))
    call = _Span(start=c0, end=c0 + draw(st.floats(0, 5)))
    call.model_ms = draw(st.floats(0, 1)) * (call.end - call.start) * 1000
    other_model = draw(ms)
    busy = (tests.end - tests.start + call.end - call.start) * 1000 + other_model
    total = busy + draw(ms)
    return total, other_model + call.model_ms, tests, call


@given(timelines())
def test_the_added_time_lies_between_the_two_ways_of_counting_the_overlap(timeline):
    total, model_ms, tests, call = timeline
    added = _added(total, model_ms, tests, call)
    ran = (tests.end - tests.start) * 1000
    assert added >= 0
    # never less than with no overlap at all (model and tests taken as one after the other)
    assert added >= total - model_ms - ran - 1e-6
    # and never more than the overlap of the model's own time could give back
    assert added <= max(0.0, total - model_ms - ran) + call.model_ms + 1e-6


def test_a_call_inside_the_tests_gives_back_its_model_time():
    tests = _Span(start=0.0, end=0.030)  # 30 ms of tests
    call = _Span(start=0.005, end=0.015, model_ms=8.0)  # a 10 ms call, 8 of them the model's
    # 50 ms in all, 20 of them the model's (8 of those inside the tests)
    assert abs(_added(50.0, 20.0, tests, call) - 8.0) < 1e-9


def test_a_call_after_the_tests_gives_nothing_back():
    tests = _Span(start=0.0, end=0.010)
    call = _Span(start=0.020, end=0.030, model_ms=10.0)
    assert abs(_added(50.0, 20.0, tests, call) - 20.0) < 1e-9


def test_without_tests_or_a_call_everything_not_the_models_is_added():
    assert _added(12.0, 5.0, _Span(), _Span()) == 7.0
