"""The dashboard, measured: server time for the heaviest pages, and how soon a write by another
process shows in a browser.

1. A task with 1,000 assessments (PREFLIGHT, 998 CHECKs, POSTFLIGHT, each with all 13 vectors,
   rationales and a decision): ``GET /tasks/{id}`` through the ASGI app, median of 10, split
   into the read operation (``task_view``) and the rest (templates, SVG). Baselines in the same
   run: the same page for a task of 10 assessments, and the store's own read of the 1,000
   (``Store.assessments``, validated records).
2. The sessions list at 10,000 sessions (each with a task, an assessment's confidence, an
   event, half with an outcome): ``GET /`` page 1, the last page (200), a search, and an
   agent + outcome filter, and ``GET /tasks`` page 1 and 200, median of 10 each. Baselines:
   ``Store.list_sessions(limit=50)``, and the four pages again on the same store with
   migration m017's ``created_at`` indexes dropped.
3. Event to DOM in a real Chromium (Debian's, headless, through Playwright): a writer process
   records a new session and task; the page's script hears of it over ``/live`` and swaps its
   content; latency is from the writer's commit to the task's name appearing in the DOM (one
   clock), median and 90th percentile of 20. Baselines in the same run: one ``GET /`` of the
   same page, and the stream's poll interval.

4. A ``/live`` stream's poll: the store's cursor and, since a logout or a revoked token ends
   the stream, whether its request would still be let in (a store token's login session, a
   store token as a bearer, the admin token's login), median of 2,000 each. Baseline in the
   same run: the cursor query alone, which is what a poll cost before.

    python bench/dashboard.py [task] [lists] [live] [poll]   # all four when none is named
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from tests.dashboard.conftest import serving

from noetic.assessment import Assessment, Decision
from noetic.dashboard.app import dashboard_app
from noetic.dashboard.live import POLL_S
from noetic.operations.task_view import task_view
from noetic.store import Store
from noetic.vectors import VECTOR_NAMES

ROUNDS = 10
LATENCY_SAMPLES = 20


def _median_ms(fn, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _task(store: Store, n: int) -> str:
    session = store.create_session(ai_id="bench", profile="balanced")
    cascade = store.open_cascade(session.id, f"a task of {n} assessments", profile="balanced")
    for i in range(n):
        phase = "preflight" if i == 0 else "postflight" if i == n - 1 else "check"
        value = 0.5 + 0.45 * i / max(1, n - 1)
        vectors = {v: round(value, 3) for v in VECTOR_NAMES}
        vectors["density"] = vectors["uncertainty"] = round(1 - value, 3)
        a = Assessment(
            phase=phase,
            vectors=vectors,
            rationales={v: f"why {v} is {value:.2f}" for v in VECTOR_NAMES},
        )
        d = Decision(
            action="PROCEED" if value >= 0.7 else "INVESTIGATE",
            confidence=value,
            threshold=0.7,
            rule="threshold",
            reason=f"confidence {value:.2f} against the threshold 0.70",
            gaps=(),
        )
        store.add_assessment(session.id, a, d, cascade_id=cascade.id)
    return cascade.id


def task_pages(home: Path) -> None:
    with Store(home, write_files=False) as store:
        big, small = _task(store, 1000), _task(store, 10)
        from starlette.testclient import TestClient

        client = TestClient(dashboard_app(home), base_url="http://127.0.0.1")
        for task in (big, small):
            assert client.get(f"/tasks/{task}").status_code == 200  # warm: templates compiled
        page_big = _median_ms(lambda: client.get(f"/tasks/{big}"))
        page_small = _median_ms(lambda: client.get(f"/tasks/{small}"))
        read_big = _median_ms(lambda: task_view(store, big))
        store_read = _median_ms(lambda: store.assessments(cascade_id=big))
        size = len(client.get(f"/tasks/{big}").content)
    print("1. task page (server time, median of 10)")
    print(f"   1,000 assessments: {page_big:7.1f} ms  ({size / 1024:.0f} KiB of HTML)")
    print(f"     of which the read operation: {read_big:7.1f} ms")
    print(f"   baseline, 10 assessments: {page_small:7.1f} ms")
    print(f"   baseline, Store.assessments() of the 1,000: {store_read:7.1f} ms")


def _fill(home: Path, n: int) -> None:
    with Store(home, write_files=False) as store, store.transaction() as c:
        for i in range(n):
            sid, cid = f"s_bench{i:011d}", f"c_bench{i:011d}"
            at = f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:00:{i % 60:02d}.{i:06d}+00:00"
            agent = f"agent{i % 7}"
            c.execute(
                "INSERT INTO sessions (id, ai_id, profile, project, status, created_at) "
                "VALUES (?,?,?,?,?,?)",
                (sid, agent, "balanced", f"project{i % 5}", "active", at),
            )
            c.execute(
                "INSERT INTO cascades (id, session_id, task, status, profile, created_at) "
                "VALUES (?,?,?,?,?,?)",
                (cid, sid, f"task {i}: fix the thing", "completed", "balanced", at),
            )
            cols = ", ".join(f'"{v}"' for v in VECTOR_NAMES)
            marks = ", ".join("?" for _ in VECTOR_NAMES)
            c.execute(
                f"INSERT INTO assessments (session_id, cascade_id, seq, phase, {cols}, confidence,"
                f" action, rule, reason, created_at) VALUES (?,?,?,?,{marks},?,?,?,?,?)",
                (
                    sid,
                    cid,
                    1,
                    "preflight",
                    *([0.8] * len(VECTOR_NAMES)),
                    0.8,
                    "PROCEED",
                    "threshold",
                    "ok",
                    at,
                ),
            )
            c.execute(
                "INSERT INTO events (at, kind, engine, session_id, cascade_id, data) "
                "VALUES (?,?,?,?,?,?)",
                (
                    at,
                    "session_started",
                    "cascade" if i % 2 else None,
                    sid,
                    None,
                    json.dumps({"ai_id": agent, "profile": "balanced"}),
                ),
            )
            if i % 2:
                c.execute(
                    "INSERT INTO outcomes (at, session_id, cascade_id, ai_id, profile, source, "
                    "score, predicted_preflight) VALUES (?,?,?,?,?,?,?,?)",
                    (at, sid, cid, agent, "balanced", "test", float(i % 3 > 0), 0.8),
                )


def sessions_list(home: Path) -> None:
    from starlette.testclient import TestClient

    _fill(home, 10_000)
    client = TestClient(dashboard_app(home), base_url="http://127.0.0.1")
    assert "10000 sessions" in client.get("/").text
    assert "10000 tasks" in client.get("/tasks").text
    first = _median_ms(lambda: client.get("/"))
    last = _median_ms(lambda: client.get("/?page=200"))
    search = _median_ms(lambda: client.get("/?q=fix+the"))
    narrow = _median_ms(lambda: client.get("/?agent=agent3&outcome=success&engine=cascade"))
    tasks_first = _median_ms(lambda: client.get("/tasks"))
    tasks_last = _median_ms(lambda: client.get("/tasks?page=200"))
    with Store(home, write_files=False) as store:
        base = _median_ms(lambda: store.list_sessions(limit=50))
        # the same store without migration m017's indexes: each page sorts every row
        with store.transaction() as c:
            c.execute("DROP INDEX sessions_created")
            c.execute("DROP INDEX cascades_created")
    client = TestClient(dashboard_app(home), base_url="http://127.0.0.1")
    client.get("/")
    unindexed = [
        _median_ms(lambda path=path: client.get(path))
        for path in ("/", "/?page=200", "/tasks", "/tasks?page=200")
    ]
    print("2. sessions and tasks lists at 10,000 sessions (server time, median of 10)")
    print(f"   sessions page 1: {first:7.1f} ms   last page (200): {last:7.1f} ms")
    print(f"   search 'fix the': {search:7.1f} ms   agent + outcome + engine: {narrow:7.1f} ms")
    print(f"   tasks page 1: {tasks_first:7.1f} ms   last page (200): {tasks_last:7.1f} ms")
    print(f"   baseline, Store.list_sessions(limit=50): {base:7.1f} ms")
    print(
        "   baseline, without m017's indexes: sessions page 1 / 200: "
        f"{unindexed[0]:.1f} / {unindexed[1]:.1f} ms, tasks page 1 / 200: "
        f"{unindexed[2]:.1f} / {unindexed[3]:.1f} ms"
    )


WRITER = textwrap.dedent(
    """
    import sys, time
    from noetic.assessment import Assessment
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store
    from noetic.vectors import VECTOR_NAMES
    vectors = {name: 0.8 for name in VECTOR_NAMES}
    with Store(sys.argv[1], write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry(), checkpoints=False)
        for line in sys.stdin:
            name = line.strip()
            session, _ = tracker.bootstrap(ai_id="writer")
            tracker.preflight(session.id, name, Assessment(phase="preflight", vectors=vectors))
            print(time.time() * 1000, flush=True)
    """
)


def event_to_dom(home: Path) -> None:
    from playwright.sync_api import sync_playwright
    from tests.dashboard.test_browser import CHROMIUM, FLAGS

    with Store(home):
        pass
    latencies = []
    with serving(home) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        page.goto(url + "/?per_page=10")
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent === 'Live'"
        )
        page.evaluate(
            """() => { window.__seen = {};
            new MutationObserver(() => {
              const text = document.getElementById('main').textContent;
              for (const m of text.matchAll(/latency probe (\\d+)/g)) {
                const now = performance.timeOrigin + performance.now();
                if (!(m[1] in window.__seen)) window.__seen[m[1]] = now;
              }
            }).observe(document.getElementById('main'), {childList: true, subtree: true}); }"""
        )
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            for i in range(LATENCY_SAMPLES):
                writer.stdin.write(f"latency probe {i}\n")
                writer.stdin.flush()
                written = float(writer.stdout.readline())
                page.wait_for_function(f"() => '{i}' in window.__seen", timeout=20_000)
                latencies.append(page.evaluate(f"() => window.__seen['{i}']") - written)
                time.sleep(0.3)
        finally:
            writer.stdin.close()
            writer.wait(timeout=30)
        get_page = _median_ms(lambda: httpx.get(url + "/?per_page=10"))
        page.goto("about:blank")
        browser.close()
    latencies.sort()
    print(f"3. event to DOM in Chromium ({LATENCY_SAMPLES} writes by another process)")
    print(
        f"   median {statistics.median(latencies):6.0f} ms, 90th percentile "
        f"{latencies[int(0.9 * len(latencies)) - 1]:6.0f} ms, worst {latencies[-1]:6.0f} ms"
    )
    print(
        f"   baselines: one GET of the page {get_page:6.1f} ms; the stream polls every "
        f"{POLL_S * 1000:.0f} ms"
    )


def stream_poll(home: Path) -> None:
    from noetic.dashboard import auth
    from noetic.operations.access_tokens import Access, create_token
    from noetic.operations.live import cursor

    with Store(home) as store:
        token = create_token(store, "alice")["token"]
    access = Access(home, "admin-secret")
    reader = Store(home)
    try:
        alice = access.token(token)
        assert alice is not None
        login, admin_login = access.login(alice), access.login(access.token("admin-secret"))

        def poll(**request: str | None) -> float:
            def once() -> None:
                cursor(reader)
                assert auth.admitted(access, host_header="127.0.0.1", **request) is not None

            return _median_ms(once, rounds=2000) * 1000

        alone = _median_ms(lambda: cursor(reader), rounds=2000) * 1000
        print("4. a /live poll (median of 2,000; µs)")
        print(f"   baseline: the cursor alone                  {alone:7.1f} µs")
        for label, request in (
            ("+ a store token's login session", {"cookie": login, "authorization": None}),
            ("+ a store token as bearer", {"cookie": None, "authorization": f"Bearer {token}"}),
            ("+ the admin token's login session", {"cookie": admin_login, "authorization": None}),
        ):
            print(f"   {label:<43} {poll(**request):7.1f} µs")
        print(f"   a stream polls every {POLL_S * 1000:.0f} ms")
    finally:
        reader.close()
        access.close()


def main() -> None:
    only = sys.argv[1:]  # e.g. `lists` for the sessions and tasks lists alone
    with tempfile.TemporaryDirectory() as tmp:
        if not only or "task" in only:
            task_pages(Path(tmp) / "tasks")
        if not only or "lists" in only:
            sessions_list(Path(tmp) / "sessions")
        if not only or "live" in only:
            event_to_dom(Path(tmp) / "live")
        if not only or "poll" in only:
            stream_poll(Path(tmp) / "poll")


if __name__ == "__main__":
    main()
