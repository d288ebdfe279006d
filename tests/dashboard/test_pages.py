"""Every dashboard route over real HTTP: what each page shows, unknown ids, bad parameters."""

from __future__ import annotations

import re

import httpx
import pytest

from .conftest import Site

pytestmark = pytest.mark.subprocess  # a server on loopback


def get(site: Site, path: str, **params: str) -> httpx.Response:
    return httpx.get(site.url + path, params=params or None, timeout=30)


def test_sessions_list_shows_every_session_newest_first_with_its_latest_task(site):
    r = get(site, "/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert f"{len(site.ids.sessions)} sessions" in r.text
    ids = re.findall(r'href="/sessions/(s_\w+)"', r.text)
    assert ids == list(reversed(site.ids.sessions))  # newest first
    assert f'href="/tasks/{site.ids.full_task}">Fix the flaky login test</a>' in r.text
    assert get(site, "/sessions").text.count('href="/sessions/s_') == len(ids)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"agent": "gpt"}, 15),
        ({"agent": "claude"}, 16),
        ({"project": "other"}, 10),
        ({"q": "flaky login"}, 1),
        ({"q": "task number 1"}, 11),  # 1, 10–19
        ({"q": "100%_"}, 0),  # LIKE wildcards are literal
        ({"engine": "nova"}, 1),
        ({"outcome": "none"}, 0),
        ({"status": "active"}, 31),
        ({"since": "2000-01-01", "until": "2000-01-02"}, 0),
    ],
)
def test_filters_narrow_the_list_and_say_how_many(site, params, expected):
    r = get(site, "/", **params)
    assert r.status_code == 200
    assert re.search(rf"\b{expected} sessions?\b", r.text), params
    assert len(re.findall(r'href="/sessions/s_', r.text)) == min(expected, 50)


def test_outcome_filter_splits_scored_sessions_by_success(site):
    def count(outcome: str) -> int:
        return int(re.search(r"(\d+) sessions?", get(site, "/", outcome=outcome).text)[1])

    assert count("success") + count("failure") >= len(site.ids.sessions)
    assert count("success") > 0 and count("failure") > 0


def test_paging_keeps_the_filters_and_covers_every_session_once(site):
    seen: list[str] = []
    page = 1
    while True:
        r = get(site, "/", agent="claude", per_page="5", page=str(page))
        seen += re.findall(r'href="/sessions/(s_\w+)"', r.text)
        nxt = re.search(r'rel="next" href="([^"]+)"', r.text)
        if not nxt:
            break
        assert "agent=claude" in nxt[1] and "per_page=5" in nxt[1]
        page += 1
    assert len(seen) == len(set(seen)) == 16
    assert page == 4


def test_session_page_lists_its_tasks_with_confidence_path_and_outcome(site):
    sid = site.ids.sessions[0]
    r = get(site, f"/sessions/{sid}")
    assert r.status_code == 200
    assert f'href="/tasks/{site.ids.full_task}"' in r.text
    assert 'data-values="0.6647' in r.text or "0.66 → 0.89" in r.text
    assert f'href="/runs/{sid}"' in r.text


def test_task_page_shows_vectors_decisions_investigation_outcome_and_calls(site):
    r = get(site, f"/tasks/{site.ids.full_task}")
    assert r.status_code == 200
    text = r.text
    for phase in ("PREFLIGHT #1", "CHECK #2", "POSTFLIGHT #3"):
        assert phase in text
    # know went 0.60 → 0.85 → 0.93; levels are printed beside the colour
    assert "0.60</span>" in text and "needs attention" in text and "excellent" in text
    # density 0.40 at POSTFLIGHT is a *bad* load: judged on 1 − 0.40 = 0.60
    assert re.search(r'data-value="0.4" data-level="needs attention"', text)
    assert "INVESTIGATE" in text and "confidence 0.66 is below the threshold 0.70" in text
    assert "read the test and the fixture" in text and "read_file" in text
    assert "12 passed" in text and "from test" in text
    assert "1200" in text and "812 ms" in text and "$0.0087" in text


def test_run_timeline_lists_every_engines_events_and_marks_refusals(site):
    r = get(site, f"/runs/{site.ids.engine_task}")
    assert r.status_code == 200
    text = r.text
    assert "gate refused: max_tool_calls (31 against limit 30)" in text
    assert "tool read_file failed" in text and "no such file" in text
    assert "decision escalate [cae_severity]" in text
    assert 'class="flag-refused"' in text and 'class="flag-escalated"' in text
    assert 'data-phase="THINK" data-ms="12.5"' in text
    lanes = re.search(r"<dt>Engines</dt><dd>([^<]+)</dd>", text)[1]
    assert lanes == "cascade, nova, workflow"


def test_run_of_a_session_is_its_whole_timeline(site):
    r = get(site, f"/runs/{site.ids.sessions[0]}")
    assert r.status_code == 200
    assert "session started: claude" in r.text


def test_calibration_page_has_metrics_reliability_gaps_drift_and_guardian(site):
    r = get(site, "/calibration")
    assert r.status_code == 200
    text = r.text
    for part in (
        "Brier score",
        "ECE",
        "Debiased ECE",
        "Bias",
        "AUROC",
        "Reliability",
        "By phase",
        "By agent",
        "By model",
        "By engine",
        "By profile",
        "By persona",
        "Phase by phase",
        "Drift",
        "Guardian",
        "Corrections",
    ):
        assert part in text, part
    assert "31 scored tasks" in text and "31 with a PREFLIGHT statement" in text
    # one task went through CHECK; claude's tasks have POSTFLIGHTs, standard or adversarial
    phases = re.search(r'<table class="phases">.*?</table>', text, re.S)[0]
    rows = re.findall(r'<th scope="row">([A-Z ]+)</th><td class="num">(\d+)</td>', phases)
    assert rows == [
        ("PREFLIGHT", "31"),
        ("CHECK", "1"),
        ("POSTFLIGHT", "9"),
        ("ADVERSARIAL REVIEW", "7"),
    ]
    reviews = re.search(r'aria-labelledby="h-reviews">.*?</table>', text, re.S)[0]
    assert '<th scope="row">claude</th>' in reviews and "n = 9" in reviews and "n = 7" in reviews
    assert re.search(r"95% 0\.\d+ to 0\.\d+", text)  # intervals beside the numbers


def test_calibration_filters_by_agent_and_prediction(site):
    r = get(site, "/calibration", agent="gpt", prediction="check")
    assert r.status_code == 200
    assert "15 scored tasks" in r.text
    # only the seeded task of claude's reached a CHECK: gpt's tasks have none to score
    assert "0 with a CHECK statement" in r.text
    assert "<option selected>gpt</option>" in r.text


def test_compare_puts_a_task_beside_an_agent(site):
    r = get(site, "/compare", a=site.ids.full_task, b="agent:gpt")
    assert r.status_code == 200
    assert "Fix the flaky login test" in r.text and "Agent gpt" in r.text
    assert "15 sessions" in r.text
    two = get(site, "/compare", a="claude", b="gpt")
    assert "Agent claude" in two.text and "Agent gpt" in two.text


def test_compare_without_both_sides_asks_for_them(site):
    r = get(site, "/compare", a=site.ids.full_task)
    assert r.status_code == 200
    assert "Name two tasks" in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/sessions/s_nope",
        "/tasks/c_nope",
        "/runs/c_nope",
        "/nowhere",
        "/tasks/c_nope/more",
        "/compare?a=c_nope&b=agent:gpt",
    ],
)
def test_unknown_ids_and_paths_get_the_404_page(site, path):
    r = httpx.get(site.url + path)
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in r.text and 'href="/"' in r.text


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/?outcome=maybe", "outcome"),
        ("/?since=yesterday", "since"),
        ("/?page=0", "page"),
        ("/?colour=red", "colour"),
        ("/?agent=%3Cscript%3E", "agent"),
        ("/calibration?prediction=later", "prediction"),
        ("/calibration?since_days=-1", "since_days"),
    ],
)
def test_bad_parameters_get_a_400_page_naming_them(site, path, named):
    r = httpx.get(site.url + path)
    assert r.status_code == 400
    assert named in r.text and "<script>" not in r.text


def test_static_files_and_the_live_script_are_served(site):
    css = get(site, "/static/style.css")
    js = get(site, "/static/live.js")
    assert css.status_code == js.status_code == 200
    assert "EventSource" in js.text
    assert len(js.content) < 8_000  # one small script, no framework


def test_pages_are_read_only(site):
    for path in ("/", f"/tasks/{site.ids.full_task}", "/calibration"):
        assert httpx.post(site.url + path).status_code == 405


def test_the_mcp_endpoint_still_answers_beside_the_dashboard(site):
    from ..mcp._client import INITIALIZE

    r = httpx.post(
        site.url + "/mcp",
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream"},
        timeout=30,
    )
    assert r.status_code == 200
    assert "noetic" in r.text


def test_a_long_task_shows_its_latest_decisions_and_links_to_all(tmp_path):
    from noetic.assessment import Decision
    from noetic.store import Store

    from ..conftest import serving
    from .seed import assessment

    home = tmp_path / "store"
    with Store(home) as store:
        session = store.create_session(ai_id="long", profile="balanced")
        task = store.open_cascade(session.id, "a long task", profile="balanced")
        for i in range(250):
            phase = "preflight" if i == 0 else "check"
            decision = Decision(
                action="INVESTIGATE",
                confidence=0.5,
                threshold=0.7,
                rule="threshold",
                reason=f"round {i}",
                gaps=(),
            )
            store.add_assessment(session.id, assessment(phase, 0.5), decision, cascade_id=task.id)
    with serving(home) as url:
        latest = httpx.get(f"{url}/tasks/{task.id}").text
        every = httpx.get(f"{url}/tasks/{task.id}", params={"decisions": "all"}).text
    assert "The latest 200 of 250 decisions" in latest
    assert "round 49<" not in latest and "round 50<" in latest and "round 249<" in latest
    assert "round 0<" in every and "The latest" not in every
    # the trajectory still draws every assessment
    assert latest.count('points="') >= 1 and "250 assessments" in latest


def test_a_nova_run_lists_its_turns_by_round_and_persona_with_the_critics_severity(tmp_path):
    from noetic.store import Store
    from noetic.store import nova as records

    from ..conftest import serving

    home = tmp_path / "store"
    with Store(home) as store:
        session = store.create_session(ai_id="nova-user", profile="balanced")
        run = records.create_run(store, "ship it on friday?", {}, session_id=session.id)
        turns = [
            {
                "seq": 1,
                "round": 1,
                "node": "unpack",
                "persona": "dce",
                "role": "dce",
                "status": "ok",
                "content": "…",
                "know": 0.7,
                "uncertainty": 0.3,
                "block": {},
                "ms": 120.0,
                "tokens_in": 300,
                "tokens_out": 80,
            },
            {
                "seq": 2,
                "round": 1,
                "node": "critique",
                "persona": "cae",
                "role": "cae",
                "status": "ok",
                "content": "…",
                "know": 0.8,
                "uncertainty": 0.2,
                "block": {"severity": "critical"},
                "ms": 95.0,
                "tokens_in": 410,
                "tokens_out": 60,
            },
        ]
        for t in turns:
            records.save_turn(store, run, t["seq"], f"{t['round']}:{t['node']}:{t['persona']}", t)
        records.update_run(store, run, status="escalated", result={"exit": "escalated"})
    with serving(home) as url:
        page = httpx.get(f"{url}/runs/{run}").text
    assert "Nova deliberation" in page and "escalated, exit escalated" in page
    rows = re.findall(r'<td class="num">(\d)</td><td>(\w+)</td><td>(\w+)</td>', page)
    assert rows == [("1", "unpack", "dce"), ("1", "critique", "cae")]
    assert '<strong class="flag">critical</strong>' in page and "410 / 60" in page


def test_an_observer_run_shows_its_stages_and_why_it_stopped(tmp_path):
    from noetic.store import Store
    from noetic.store.observations import save_run

    from ..conftest import serving

    home = tmp_path / "store"
    with Store(home) as store:
        run = save_run(
            store,
            {
                "query": "why is the sky blue",
                "provider": "scripted",
                "model": "m",
                "stages": 2,
                "reason": "high_confidence",
                "model_calls": 2,
                "cache_hit": False,
                "stage_budget": 4,
                "answer": "Rayleigh",
                "confidence": 0.91,
                "note": "",
            },
            [
                {"stage": 1, "layers": ["causal"], "confidence": 0.6, "content": "scattering"},
                {"stage": 2, "layers": ["physical"], "confidence": 0.91, "content": "Rayleigh"},
            ],
        )
    with serving(home) as url:
        page = httpx.get(f"{url}/runs/{run}").text
    assert "why is the sky blue" in page
    assert "2 of 4 stages, stopped: <strong>high confidence</strong>" in page
    assert "stage 2: confidence 0.91" in page and "Rayleigh" in page


def test_agents_text_is_escaped_and_the_browser_runs_only_the_dashboards_script(tmp_path):
    from noetic.store import Store

    from ..conftest import serving

    home = tmp_path / "store"
    with Store(home) as store:
        session = store.create_session(ai_id="mallory", profile="balanced")
        task = store.open_cascade(session.id, "<script>alert(1)</script>", profile="balanced")
    with serving(home) as url:
        pages = [httpx.get(url + path) for path in ("/", f"/tasks/{task.id}", "/?q=%3Cscript")]
    for r in pages:
        assert "<script>alert(1)</script>" not in r.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
        policy = r.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert r.headers["x-content-type-options"] == "nosniff"
