"""The CLI's vector input on arbitrary bytes and arbitrary JSON.

Every input ends in exit code 0 or 1 with one JSON document on stdout (``--json``): recorded, or
refused with an error naming the problem; never a traceback, never exit code 3."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.cli import app
from noetic.cli.inputs import read_json_input
from noetic.errors import NoeticError, UsageError
from noetic.vectors import VECTOR_NAMES

from ..conftest import uniform

FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
runner = CliRunner()

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers()
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from([*VECTOR_NAMES, "vectors", "note", "KNOW", "x"]), inner)
    ),
    max_leaves=25,
)
scores_like = st.dictionaries(
    st.sampled_from([*VECTOR_NAMES, "Know", "vectors", "note", "rationales", "evidence"]),
    json_values,
    max_size=6,
)


@pytest.fixture
def open_task():
    runner.invoke(app, ["bootstrap"])
    result = runner.invoke(app, ["preflight", "t", "--vectors", json.dumps(uniform(0.7))])
    assert result.exit_code == 0, result.output


def _one_document(result) -> dict:
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    doc = json.loads(result.stdout)
    if result.exit_code == 1:
        assert doc["error"]["message"]
    return doc


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes_in_a_vectors_file(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("v") / "v.json"
    path.write_bytes(data)
    try:
        read_json_input(None, path)
    except UsageError as exc:
        assert exc.message
    except NoeticError as exc:  # pragma: no cover - a runtime failure here is a bug
        pytest.fail(f"runtime failure on input: {exc}")


@pytest.mark.slow
@pytest.mark.subprocess
@FUZZ
@given(st.one_of(json_values, scores_like))
def test_arbitrary_json_through_check(open_task, value):
    _one_document(runner.invoke(app, ["check", "--vectors", json.dumps(value), "--json"]))


@pytest.mark.slow
@pytest.mark.subprocess
@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes_on_stdin_through_check(open_task, data):
    _one_document(runner.invoke(app, ["check", "--vectors-file", "-", "--json"], input=data))
