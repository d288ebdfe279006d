"""CASCADE's investigation on a provider with native tool calls."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.cascade.engine import RunStatus, wire_names
from noetic.llm.base import TOOL_NAME
from noetic.llm.scripted import calling
from noetic.tools import tool
from noetic.tools.discovery import discover

from .test_engine import go, scores, think, tracker  # noqa: F401  (the fixture)


def web_search(q: str) -> str:
    """Search the web."""
    return "nothing"


@pytest.mark.subprocess
def test_tools_are_offered_natively_and_parallel_calls_run(tracker, tmp_path):  # noqa: F811
    (tmp_path / "app.py").write_text("def parse(x):\n    return int(x)\n")
    replies = [
        scores(0.5), think(),
        calling(("read_file", {"path": "app.py"}), ("search_text", '{"pattern": '),
                ("delete_everything", {}), text="parse is in app.py, I expect."),
        scores(0.9), "Guard the empty string.", scores(0.9),
    ]  # fmt: skip
    run, provider, session = go(tracker, replies, tools=discover(tmp_path), native_tools=True)
    assert run.status is RunStatus.COMPLETED
    request = provider.calls[2]
    offered = {t.name for t in request.tools}
    assert {"read_file", "search_text"} <= offered and request.tool_choice == "auto"
    read, search, unknown = run.tool_uses
    assert read.success and "return int(x)" in read.information
    assert read.purpose == "parse is in app.py, I expect."
    assert read.target_vector == "know"  # read_file improves know, one of the gaps
    assert not search.success and "not valid JSON" in search.information
    assert not unknown.success and "there is no tool 'delete_everything'" in unknown.information
    # the CHECK after it rests on what was read
    assert "return int(x)" in provider.calls[3].messages[0].content
    rows = tracker.store.investigations(session_id=session.id)
    assert [(r.tool, r.success) for r in rows] == [
        ("read_file", True), ("search_text", False), ("delete_everything", False),
    ]  # fmt: skip


@pytest.mark.subprocess
def test_only_approved_tools_are_offered_under_a_prescribed_profile(tracker, tmp_path):  # noqa: F811
    (tmp_path / "dose.md").write_text("max 4 g/day")
    web = tool(web_search, improves_vectors=("know",))
    replies = [
        scores(0.7), think(strategy="research"),
        calling(("read_file", {"path": "dose.md"})),
        scores(0.95), "Max 4 g a day.", scores(0.95),
    ]  # fmt: skip
    run, provider, _ = go(tracker, replies, profile="critical_domain",
                          tools=[web, *discover(tmp_path)], native_tools=True)  # fmt: skip
    assert "web_search" not in {t.name for t in provider.calls[2].tools}
    (read,) = run.tool_uses
    assert read.success and "max 4 g/day" in read.information


@pytest.mark.subprocess
def test_reasoning_alone_makes_no_calls(tracker, tmp_path):  # noqa: F811
    replies = [scores(0.5), think(), "I know this already.", scores(0.9), "ok", scores(0.9)]
    run, provider, _ = go(tracker, replies, tools=discover(tmp_path), native_tools=True)
    assert run.status is RunStatus.COMPLETED and run.tool_uses == []
    assert "I know this already." in provider.calls[3].messages[0].content


@pytest.mark.subprocess
def test_more_than_five_calls_are_cut_to_five(tracker, tmp_path):  # noqa: F811
    (tmp_path / "a.txt").write_text("a")
    many = calling(*[("read_file", {"path": "a.txt"})] * 7)
    replies = [scores(0.5), think(), many, scores(0.9), "ok", scores(0.9)]
    run, _, _ = go(tracker, replies, tools=discover(tmp_path), native_tools=True)
    assert len(run.tool_uses) == 5


@pytest.mark.slow
@given(st.lists(st.text(min_size=1, max_size=80), max_size=12, unique=True))
def test_wire_names_are_valid_and_unique(names):
    wire = wire_names(names)
    assert set(wire) == set(names)
    assert len(set(wire.values())) == len(names)
    assert all(TOOL_NAME.match(w) for w in wire.values())
