"""The tool model: schemas from type hints, calls checked before they run, failures as results."""

import asyncio
import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.errors import ValidationError
from noetic.tools import Tool, Toolset, tool
from noetic.tools.base import schema_validator
from noetic.tools.discovery import discover
from noetic.tools.workspace import search_text_tool


def lookup(city: str, days: int = 3, units: str = "metric") -> str:
    """Look up the weather forecast.

    Longer explanation that the model does not need.

    Args:
        city: the city's name
        days: how many days ahead,
            counting today
        units: metric or imperial
    """
    return f"{city} {days} {units}"


def run(coro):
    return asyncio.run(coro)


def test_schema_comes_from_hints_and_docstring():
    t = tool(lookup)
    assert (t.name, t.description) == ("lookup", "Look up the weather forecast.")
    props = t.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "the city's name"}
    assert props["days"]["type"] == "integer" and props["days"]["default"] == 3
    assert props["days"]["description"] == "how many days ahead, counting today"
    assert t.parameters["required"] == ["city"]
    assert t.spec()["parameters"] is t.parameters


def test_the_decorator_takes_options_on_the_function_itself():
    @tool(name="forecast", improves_vectors=("know",), confidence_gain=0.3)
    def weather(city: str) -> str:
        """Today's weather."""
        return city

    assert isinstance(weather, Tool)
    assert (weather.name, weather.description) == ("forecast", "Today's weather.")
    assert (weather.improves_vectors, weather.confidence_gain) == (("know",), 0.3)
    assert run(weather.call({"city": "Oslo"})).output == "Oslo"


def test_a_good_call_runs_and_coerces_like_pydantic():
    result = run(tool(lookup).call({"city": "Oslo", "days": "2"}))
    assert result.ok and result.output == "Oslo 2 metric" and result.error is None


@pytest.mark.parametrize(
    ("arguments", "argument", "problem"),
    [
        ({}, "city", "Field required"),
        ({"city": "Oslo", "days": "soon"}, "days", "valid integer"),
        ({"city": "Oslo", "weeks": 2}, "weeks", "unknown argument"),
        ({"city": ["Oslo"]}, "city", "valid string"),
    ],
)
def test_a_bad_call_names_the_argument_and_does_not_run(arguments, argument, problem):
    ran = []

    def record(city: str, days: int = 1) -> str:
        """Record."""
        ran.append(city)
        return city

    result = run(tool(record).call(arguments))
    assert not result.ok and result.retry and result.argument == argument
    assert problem in result.error and ran == []
    assert result.for_model().startswith("error: argument") and "call again" in result.for_model()


def test_arguments_that_are_not_an_object_are_refused():
    result = run(tool(lookup).call(["Oslo"]))
    assert not result.ok and "must be a JSON object, not list" in result.error


def test_a_tool_that_raises_becomes_a_result_without_retry():
    def fail(x: int) -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    result = run(tool(fail).call({"x": 1}))
    assert not result.ok and not result.retry and result.error == "RuntimeError: disk on fire"


def test_output_is_capped():
    def big() -> str:
        """Big."""
        return "x" * 10_000

    out = run(tool(big).call({})).output
    assert len(out) < 4100 and out.endswith("(truncated at 4000 characters)")


def test_async_tools_are_awaited():
    async def later(n: int) -> int:
        """Later."""
        await asyncio.sleep(0)
        return n * 2

    assert run(tool(later).call({"n": 21})).output == "42"


def test_untyped_or_variadic_functions_are_refused_when_built():
    def untyped(x):
        """No hints."""

    def variadic(*args: int) -> None:
        """Varargs."""

    with pytest.raises(ValidationError, match="argument 'x' has no type hint"):
        tool(untyped)
    with pytest.raises(ValidationError, match=r"\*args and \*\*kwargs"):
        tool(variadic)


def test_toolset_answers_unknown_tools_with_the_real_ones():
    tools = Toolset([tool(lookup), tool(lookup, name="forecast")])
    result = run(tools.call("weather", {}))
    assert not result.ok and result.retry
    assert result.error == "unknown tool 'weather'; available: lookup, forecast"


def test_toolset_caps_invalid_retries_per_tool():
    tools = Toolset([tool(lookup)], max_retries=2)
    results = [run(tools.call("lookup", {})) for _ in range(3)]
    assert [r.retry for r in results] == [True, True, False]
    assert "stop calling 'lookup'" in results[-1].error
    assert run(tools.call("lookup", {"city": "Rome"})).ok  # valid calls still run


def test_duplicate_names_are_refused():
    with pytest.raises(ValidationError, match="two tools are named 'lookup'"):
        Toolset([tool(lookup), tool(lookup)])


def test_schema_validator_for_tools_known_only_by_schema():
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["q"],
    }
    t = Tool(
        name="srv.search",
        description="d",
        parameters=schema,
        function=lambda **kw: json.dumps(kw, sort_keys=True),
        validate_arguments=schema_validator(schema),
    )
    assert run(t.call({"q": "x", "n": 2})).output == '{"n": 2, "q": "x"}'
    missing = run(t.call({"n": 2}))
    assert missing.argument == "q" and "required" in missing.error
    wrong = run(t.call({"q": "x", "n": "two"}))
    assert wrong.argument == "n" and "not of type 'integer'" in wrong.error


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(arguments=json_values)
def test_any_json_arguments_give_a_result_never_an_exception(arguments):
    result = run(tool(lookup).call(arguments))
    assert result.ok or (result.error and not result.output)
    if result.ok:
        assert isinstance(arguments, dict) and isinstance(arguments.get("city"), str)


def test_builtins_are_discovered_through_entry_points(tmp_path):
    found = {t.name: t for t in discover(tmp_path)}
    assert {"read_file", "list_tree", "search_text"} <= set(found)
    assert all(isinstance(t, Tool) for t in found.values())
    assert found["read_file"].parameters["required"] == ["path"]


@pytest.mark.subprocess
def test_search_and_list_skip_what_the_project_ignores(tmp_path):
    (tmp_path / "app.py").write_text("needle = 1\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "dep.py").write_text("needle = 2\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "x.js").write_text("needle = 3\n")
    outside_git = run(search_text_tool(tmp_path).call({"pattern": "needle"})).output
    assert outside_git == "app.py:1: needle = 1"

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "out.py").write_text("needle = 4\n")
    (tmp_path / "node_modules" / "x.js").unlink()
    (tmp_path / ".venv" / "lib" / "dep.py").unlink()
    in_git = run(search_text_tool(tmp_path).call({"pattern": "needle"})).output
    assert in_git == "app.py:1: needle = 1"
    tree = {t.name: t for t in discover(tmp_path)}["list_tree"]
    listing = run(tree.call({})).output
    assert "app.py" in listing and "generated" not in listing


def test_workspace_tools_refuse_symlinks_out(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (ws / "link.txt").symlink_to(tmp_path / "secret.txt")
    read = {t.name: t for t in discover(ws)}["read_file"]
    for path in ["../secret.txt", "link.txt", str(tmp_path / "secret.txt")]:
        result = run(read.call({"path": path}))
        assert not result.ok and "outside the workspace" in result.error, path
