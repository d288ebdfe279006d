"""The dashboard shows decisions on calibrated numbers: the calibration page lists each agent's
map with its held-out proof and draws it over the reliability diagram; the task page puts the
calibrated value beside what the agent stated."""

from __future__ import annotations

import re

import httpx
import pytest

from noetic.assessment import Assessment
from noetic.calibration import record_outcome
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..conftest import serving, uniform

pytestmark = pytest.mark.subprocess  # a server on loopback
VECTORS = uniform(0.8, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)


@pytest.fixture
def overconfident(tmp_path, monkeypatch):
    """40 tasks stating P(success) 0.8, 14 succeeding; then task 41's PREFLIGHT."""
    home = tmp_path / "store"
    monkeypatch.setenv("NOETIC_INDEX", "inline")
    with Store(home) as store:
        t = Tracker(store, ProfileRegistry(home / "profiles"), checkpoints=False)
        session, _ = t.bootstrap(ai_id="over")
        for i in range(40):
            env = {"vectors": VECTORS, "p_success": 0.8}
            r = t.preflight(session.id, f"task {i}", Assessment.from_input("preflight", env))
            t.postflight(session.id, Assessment.from_input("postflight", {"vectors": VECTORS}))
            ok = int((i + 1) * 14 / 40) > int(i * 14 / 40)
            record_outcome(store, r.cascade.id, score=float(ok), source="test", refit=False)
        env = {"vectors": VECTORS, "p_success": 0.8}
        last = t.preflight(session.id, "task 41", Assessment.from_input("preflight", env))
    assert last.decision.calibrated is not None
    with serving(home) as url:
        yield url, last.cascade.id, last.decision.calibrated


def test_the_calibration_page_shows_the_map_and_draws_it(overconfident):
    url, _, _ = overconfident
    text = httpx.get(url + "/calibration", timeout=30).text
    assert "Decisions on calibrated numbers" in text
    row = re.search(r'<tr data-agent="over">.*?</tr>', text, re.S)[0]
    assert "logistic" in row and '<td class="num">40</td>' in row
    assert re.search(r"0\.\d{2} / 0\.3\d / 0\.\d{2}", row)  # stated 0.80 has meant 0.3x
    assert "→" in row and "lowered the Brier score" in row
    assert re.search(r'<g class="map" data-agent="over" data-method="logistic">', text)
    assert 'class="map-curve"' in text
    assert "Release gate (not configured" in text


def test_the_task_page_shows_stated_and_calibrated_side_by_side(overconfident):
    url, task, calibrated = overconfident
    text = httpx.get(f"{url}/tasks/{task}", timeout=30).text
    cell = re.search(r'<td class="num calibrated">(.*?)</td>', text, re.S)[1]
    assert f"{calibrated.value:.2f}" in cell and "stated 0.80" in cell and "logistic on 40" in cell
    assert f"stated 0.80, calibrated {calibrated.value:.2f} from 40 outcomes" in text
