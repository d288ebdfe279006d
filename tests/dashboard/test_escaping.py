"""Every value reaching the dashboard's HTML is escaped by the template engine: no markup is
built in Python (the charts' SVG is Jinja macros with autoescape), text from the store
round-trips through any chart's attributes and text, an event kind holding markup renders as
text, and an import refuses an event kind Noetic does not know."""

from __future__ import annotations

import ast
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.cli import app
from noetic.dashboard import charts
from noetic.events import EventKind
from noetic.operations.calibration_view import Gap, Interval
from noetic.operations.run_view import Item, Span, Timeline
from noetic.store import Store

from .conftest import Site

NS = "{http://www.w3.org/2000/svg}"
DASHBOARD = Path(charts.__file__).parent
MARKUP = '"><script>alert(1)</script><b x="'
# text XML can hold (no control characters or lone surrogates), markup characters included
TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff"),
    min_size=1,
    max_size=40,
) | st.sampled_from([MARKUP, "<", "&amp;", "'\"", "]]>"])


def parse(svg: str) -> ET.Element:
    return ET.fromstring(str(svg).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def test_no_python_module_of_the_dashboard_builds_markup():
    """Markup lives in templates only: no string in the dashboard's Python holds a tag."""
    tag = re.compile(r"<\s*/?\s*[a-zA-Z][^<>]*>|<[a-zA-Z]+[\s/]")
    found = []
    for path in sorted(DASHBOARD.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if tag.search(node.value) and not _docstring_like(node.value):
                found.append(f"{path.name}:{node.lineno}: {node.value[:60]!r}")
    assert found == []


def _docstring_like(text: str) -> bool:
    """A docstring naming an element (``<svg role="img">``) in double backquotes."""
    return "``<" in text


@given(kind=TEXT, label=TEXT, lane=TEXT, phase=TEXT, role=TEXT, group=TEXT)
def test_every_chart_carries_any_text_as_text(kind, label, lane, phase, role, group):
    item = Item(id=1, at="2026-01-01T00:00:00+00:00", ms=5.0, lane=lane, kind=kind,
                label=label, flag=None, data={})  # fmt: skip
    span = Span(lane=lane, phase=phase, role=role, stage=None, start_ms=0.0, ms=3.0)
    t = Timeline(id="r", scope="task", session_id=None, title="t", lanes=[lane],
                 items=[item], spans=[span], duration_ms=10.0, truncated=False)  # fmt: skip
    root = parse(charts.timeline(t))
    tick = root.find(f".//{NS}line[@data-kind]")
    assert tick is not None and tick.attrib["data-kind"] == kind
    assert tick.find(f"{NS}title").text == label
    rect = root.find(f".//{NS}rect[@class='span']")
    assert rect.attrib["data-phase"] == phase
    assert rect.find(f"{NS}title").text == f"{phase} {role}: 3 ms"
    assert root.find(f"{NS}text[@class='name']").text == lane
    assert root.find(f".//{NS}script") is None and root.find(f".//{NS}b") is None

    gap = Gap(group=group, n=9, stated=0.8, observed=0.5, gap=0.3,
              interval=Interval(low=0.1, high=0.5), significant=True)  # fmt: skip
    root = parse(charts.gaps([gap], label=group))
    g = root.find(f"{NS}g[@class='gap']")
    assert g.attrib["data-group"] == group
    assert g.find(f"{NS}text").text == group[:18]
    assert root.find(f"{NS}title").text == f"Overconfidence gap by {group}"


def test_an_event_kind_holding_markup_is_shown_as_text(site: Site):
    """A row another writer put in the event log (the log takes any kind) reaches the run
    page escaped, in the chart's attribute and in the events table."""
    with Store(site.home) as store, store.transaction() as c:
        c.execute(
            "INSERT INTO events (at, kind, engine, session_id, cascade_id, data) "
            "VALUES (?, ?, 'cascade', ?, ?, '{}')",
            ("2026-01-01T00:00:01+00:00", MARKUP, site.ids.sessions[0], site.ids.engine_task),
        )
    page = httpx.get(f"{site.url}/runs/{site.ids.engine_task}", timeout=30).text
    assert "<script>alert(1)" not in page and '<b x="' not in page
    assert 'data-kind="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;b x=&#34;"' in page


def test_an_import_refuses_an_event_kind_noetic_does_not_know(tmp_path: Path):
    runner = CliRunner()
    source, target = tmp_path / "source", tmp_path / "target"
    with Store(source) as store:
        from noetic.events import Event

        session = store.create_session(ai_id="claude", profile="balanced")
        store.append_event(
            Event(kind=EventKind.DECISION, session_id=session.id, data={"action": "proceed"})
        )
        doc = store.export_session(session.id)
    assert [e["kind"] for e in doc["events"]] == ["decision"]
    doc["events"].append({**doc["events"][0], "kind": MARKUP})
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["sessions", "import", str(path), "--store", str(target), "--json"])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert "event 1 has the unknown kind" in error["message"] and "decision" in error["message"]
    with Store(target) as store:  # nothing of the session was stored
        assert store.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
        assert store.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    doc["events"].pop()
    path.write_text(json.dumps(doc))
    ok = runner.invoke(app, ["sessions", "import", str(path), "--store", str(target)])
    assert ok.exit_code == 0, ok.output
