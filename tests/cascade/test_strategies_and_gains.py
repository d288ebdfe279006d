"""Investigation as the seed designs it: each strategy recommends tools by domain, guided mode
ranks tools by the confidence gain they declare, and after each round the declared gain is set
beside the change the next CHECK showed, per tool, for `noetic cascade tools` to sum up."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from noetic.cascade.engine import RunStatus
from noetic.cascade.offer import Strategy, offer, recommended
from noetic.cli import app
from noetic.llm.scripted import calling
from noetic.operations.tool_gains import tool_gains
from noetic.profiles import ProfileRegistry
from noetic.tools import tool
from noetic.tools.discovery import discover

from .test_engine import go, scores, think, tracker  # noqa: F401  (the fixture)

runner = CliRunner()


def search(query: str) -> str:
    """Search the web."""
    return "nothing"


def recall(query: str) -> str:
    """Recall earlier tasks."""
    return "nothing"


def _tools(tmp_path):
    return [
        tool(search, improves_vectors=("know",), confidence_gain=0.3),
        tool(recall, improves_vectors=("context",), confidence_gain=0.05),
        *discover(tmp_path),  # read_file, list_tree, search_text…
    ]


def test_each_strategy_recommends_its_domains_tools(tmp_path) -> None:
    tools = _tools(tmp_path)
    names = {s: [t.name for t in recommended(tools, s)] for s in Strategy}
    assert names[Strategy.CODE][:3] == ["search_text", "read_file", "list_tree"]
    assert names[Strategy.RESEARCH][:2] == ["search", "recall"]
    assert names[Strategy.CREATIVE][:2] == ["recall", "search"]
    assert names[Strategy.GENERAL] == []
    profile = ProfileRegistry().get("balanced")
    brief = offer(tools, profile, ("know",), Strategy.RESEARCH)
    assert "For research work, reach first for: search, recall" in brief


def test_guided_mode_ranks_the_tools_by_their_declared_gain(tmp_path) -> None:
    profile = ProfileRegistry().get("autonomous_agent")
    brief = offer(_tools(tmp_path), profile, ("know", "context"), Strategy.CODE)
    recommended_part = brief.split("Recommended first")[1].split("Also available")[0]
    listed = [line[2:].split(" (")[0] for line in recommended_part.splitlines()[1:]]
    # the highest declared gain first; among equal gains the code strategy's own tools first,
    # in its order (search_text before read_file; list_tree before recall, no code tool)
    assert listed == ["search", "search_text", "read_file", "list_tree", "recall"]
    assert "- search (+0.30): Search the web." in brief


@pytest.mark.subprocess
def test_the_declared_gain_is_compared_with_the_next_check(tracker, tmp_path):  # noqa: F811
    (tmp_path / "app.py").write_text("def parse(x):\n    return int(x)\n")
    replies = [
        scores(0.5), think(),
        calling(("read_file", {"path": "app.py"})),  # round 1: one tool
        scores(0.6),
        calling(("read_file", {"path": "app.py"}), ("search", {"query": "int parse"})),
        scores(0.9), "Guard the empty string.", scores(0.9),
    ]  # fmt: skip
    run, _, _ = go(tracker, replies, tools=_tools(tmp_path), native_tools=True)
    assert run.status is RunStatus.COMPLETED and run.rounds == 2
    pre, check1, check2 = (p.confidence for p in run.trajectory[:3])
    first, *second = run.tool_gains
    assert (first.round, first.tool, first.declared, first.shared_by) == (1, "read_file", 0.1, 1)
    assert first.observed == pytest.approx(check1 - pre)
    assert [(g.tool, g.declared, g.shared_by) for g in second] == [
        ("read_file", 0.1, 2),
        ("search", 0.3, 2),
    ]
    assert all(g.observed == pytest.approx(check2 - check1) for g in second)

    summary = {s.tool: s for s in tool_gains(tracker.store)}
    assert summary["read_file"].rounds == 2 and summary["read_file"].alone == 1
    assert summary["read_file"].observed_alone == pytest.approx(check1 - pre, abs=1e-6)
    assert summary["search"].declared == 0.3
    listed = runner.invoke(app, ["cascade", "tools", "--store", str(tracker.store.home),
                                 "--json"])  # fmt: skip
    assert listed.exit_code == 0, listed.output
    rows = {r["tool"]: r for r in json.loads(listed.stdout)}
    assert rows["search"]["difference"] == pytest.approx(rows["search"]["observed"] - 0.3)
    shown = runner.invoke(app, ["cascade", "tools", "--store", str(tracker.store.home)])
    assert "read_file" in shown.stdout and "declared" in shown.stdout


@pytest.mark.postgres
def test_the_gains_are_read_back_from_postgresql(postgres_url, tmp_path) -> None:
    from noetic.runtime.tracker import Tracker
    from noetic.store.postgres import PostgresStore

    (tmp_path / "app.py").write_text("x = 1\n")
    replies = [
        scores(0.5), think(), calling(("read_file", {"path": "app.py"})), scores(0.8),
        "ok", scores(0.8),
    ]  # fmt: skip
    with PostgresStore(postgres_url) as store:
        pg = Tracker(store, ProfileRegistry())
        run, _, _ = go(pg, replies, tools=_tools(tmp_path), native_tools=True)
        (summary,) = tool_gains(store)
    (gain,) = run.tool_gains
    assert (summary.tool, summary.rounds, summary.alone) == ("read_file", 1, 1)
    assert summary.observed == pytest.approx(gain.observed, abs=1e-6)
