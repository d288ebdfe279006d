"""An eval run end to end: the loopback model server over real HTTP plays a model that writes
the right function for some problems and a wrong one for others, the tests run in real
bubblewrap, on both store backends: every outcome is the tests' verdict, task by task."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from noetic.evaluation.engine import EvalRun
from noetic.evaluation.problems import Problem
from noetic.operations.calibrating import report as calibration_report
from noetic.operations.evaluating import eval_report, resume_eval, start_eval
from noetic.store import evals

from ..llm.model_server import error
from .conftest import spec
from .standin import StandIn

pytestmark = pytest.mark.subprocess


def number(p: Problem) -> int:
    return int(p.task_id.split("/")[1])


def right_unless_three(p: Problem) -> str:
    return "wrong" if number(p) % 3 == 0 else "right"


def run(tracker, server, problems, code, **options) -> tuple[EvalRun, StandIn]:
    standin = StandIn(problems, code)
    server.responder = standin
    options.setdefault("concurrency", 3)
    result = asyncio.run(start_eval(tracker, provider=spec(server), **options))
    return result, standin


def test_every_outcome_is_the_tests_verdict_task_by_task(tracker, model_server, problems):
    heard = []
    result, standin = run(tracker, model_server, problems, right_unless_three,
                          matching="HumanEval/1?",
                          on_task=lambda t, _: heard.append(t))  # fmt: skip
    assert sorted(heard, key=lambda t: t.seq) == result.tasks  # as told, so stored
    assert result.status == "completed" and (result.total, result.done) == (10, 10)
    chosen = {p.task_id: p for p in problems if 10 <= number(p) <= 19}
    assert sorted(t.task_id for t in result.tasks) == sorted(chosen)
    for task in result.tasks:
        expected = right_unless_three(chosen[task.task_id]) == "right"
        assert task.passed is expected, task
        assert task.reason == (
            "the tests passed" if expected else "the tests failed: ValueError: not written"
        )
        (outcome,) = tracker.store.conn.execute(
            "SELECT score, source, evidence FROM outcomes WHERE cascade_id = ?",
            (task.cascade_id,),
        ).fetchall()
        assert (outcome[0], outcome[1]) == (float(expected), "test")
        assert outcome[2] == f"{task.task_id}: {task.reason}"
        assert tracker.store.get_cascade(task.cascade_id).status == "completed"
    assert result.passed == 7 and result.success_rate == 0.7
    sessions = {t.session_id for t in result.tasks}
    assert 1 <= len(sessions) <= 3  # one per worker, each ended with the run
    assert {tracker.store.get_session(s).status for s in sessions} == {"ended"}
    # each problem asked once at every step, the PREFLIGHT before the code
    for task_id in chosen:
        asked = [what for t, what in standin.asked if t == task_id]
        assert asked == ["preflight", "code", "postflight"], (task_id, asked)
    # ordinary tasks of the eval engine: the calibration report reads them
    calibration = calibration_report(tracker.store, ai_id="eval", by="engine")
    assert calibration.outcomes == 10 and [g.value for g in calibration.groups] == ["eval"]
    assert calibration.by_phase["preflight"].mean_stated == pytest.approx(0.8)
    assert calibration.by_phase["preflight"].success_rate.value == pytest.approx(0.7)


def test_the_report_per_phase_and_the_two_reviews(tracker, model_server, problems):
    result, _ = run(tracker, model_server, problems, right_unless_three,
                    matching="HumanEval/2?", review="split")  # fmt: skip
    report = eval_report(tracker, result.run_id[:8])
    outcomes = {t.seq: float(bool(t.passed)) for t in result.tasks}
    standard = [y for seq, y in outcomes.items() if seq % 2]
    adversarial = [y for seq, y in outcomes.items() if not seq % 2]
    pre = report.by_phase["preflight"]
    assert pre.n == 10 and pre.mean_stated == pytest.approx(0.8)
    assert pre.brier.value == pytest.approx(sum((0.8 - y) ** 2 for y in outcomes.values()) / 10)
    post, adv = report.by_phase["postflight"], report.by_phase["adversarial_review"]
    assert (post.n, adv.n) == (5, 5)
    assert post.gap.value == pytest.approx(0.7 - sum(standard) / 5)
    assert adv.gap.value == pytest.approx(0.5 - sum(adversarial) / 5)
    assert report.reviews is not None and report.reviews.standard.n == 5
    assert [t.review for t in result.tasks] == ["standard", "adversarial"] * 5
    assert report.run.usage.calls == 30 and report.timing.problems == 10
    assert report.timing.test_ms is not None and report.timing.test_ms > 0


def test_hostile_and_unusable_answers_are_failures_with_their_reasons(tracker, model_server,
                                                                       problems):  # fmt: skip
    kinds = {"HumanEval/40": "loops", "HumanEval/41": "escapes", "HumanEval/42": "none",
             "HumanEval/43": "unreadable", "HumanEval/44": "right"}  # fmt: skip
    result, _ = run(tracker, model_server, problems, lambda p: kinds[p.task_id],
                    matching="HumanEval/4[0-4]", test_timeout=1.5)  # fmt: skip
    by_id = {t.task_id: t for t in result.tasks}
    assert result.status == "completed"
    assert by_id["HumanEval/40"].reason == (
        "stopped after 1.5s: the tests did not finish (an endless loop?)"
    )
    assert "Read-only file system: '/usr/noetic-eval-escape'" in (
        by_id["HumanEval/41"].reason or ""
    )
    assert by_id["HumanEval/42"].reason == "the reply had no Python code block"
    assert [by_id[i].passed for i in ("HumanEval/40", "HumanEval/41", "HumanEval/42")] == [
        False, False, False
    ]  # fmt: skip
    unreadable = by_id["HumanEval/43"]
    assert unreadable.state == "error" and unreadable.passed is None
    assert (unreadable.reason or "").startswith("the model's assessment could not be read")
    assert by_id["HumanEval/44"].passed is True
    assert (result.done, result.errors, result.passed) == (4, 1, 1)


def test_a_function_that_allocates_without_end_fails_at_the_memory_limit(tracker, model_server,
                                                                        problems):  # fmt: skip
    kinds = {"HumanEval/45": "hungry", "HumanEval/46": "right"}
    result, _ = run(tracker, model_server, problems, lambda p: kinds[p.task_id],
                    matching="HumanEval/4[56]", test_memory=150)  # fmt: skip
    by_id = {t.task_id: t for t in result.tasks}
    hungry = by_id["HumanEval/45"]
    reason = "stopped at the memory limit (150 MiB): the tests ran out of memory (MemoryError)"
    assert (hungry.state, hungry.passed, hungry.reason) == ("done", False, reason)
    (outcome,) = tracker.store.conn.execute(
        "SELECT score, source, evidence FROM outcomes WHERE cascade_id = ?", (hungry.cascade_id,)
    ).fetchall()
    assert tuple(outcome) == (0.0, "test", f"HumanEval/45: {reason}")
    assert by_id["HumanEval/46"].passed is True  # the limit leaves room for ordinary tests
    kept = evals.get_run(tracker.store, result.run_id).settings["engine"]
    assert kept["test_memory_mb"] == 150  # a resume judges under the same limit


@pytest.mark.parametrize(
    ("state", "code", "left"),
    [
        ("started", "right",
         {"cascades": 0, "assessments": 0, "outcomes": 0, "tests": 0, "calls": 1}),
        ("answered", "right",
         {"cascades": 1, "assessments": 1, "outcomes": 0, "tests": 0, "calls": 3}),
        # the tests still ran when the reassessment came: it was written before them
        ("done", "slow", {"cascades": 1, "assessments": 2, "outcomes": 0, "tests": 0, "calls": 3}),
        # they had ended: the reassessment and the verdict are one write, and went together
        ("done", "right",
         {"cascades": 1, "assessments": 1, "outcomes": 0, "tests": 0, "calls": 3}),
    ],
)  # fmt: skip
def test_each_step_and_the_problems_state_are_one_write(state, code, left, model_server, problems,
                                                         _isolated_home, tmp_path,
                                                         monkeypatch):  # fmt: skip
    import tempfile

    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    store = Store(_isolated_home)  # SQLite joins the writes of one step into one transaction
    tracker = Tracker(store, ProfileRegistry(_isolated_home / "profiles"))
    store.conn.execute(  # writing the problem's new state fails, as on a disk that gave out
        f"CREATE TRIGGER refuse BEFORE UPDATE OF state ON eval_tasks WHEN NEW.state = '{state}' "
        "BEGIN SELECT RAISE(ABORT, 'no room for the state'); END"
    )
    standin = StandIn(problems, lambda p: code)
    standin.after_the_tests = code == "right"  # the reassessment only once the tests ended
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where it looks for them
    standin.slow_s = 1.0
    model_server.responder = standin
    with pytest.raises(Exception, match="no room for the state"):
        asyncio.run(start_eval(tracker, provider=spec(model_server), matching="HumanEval/12",
                               limit=1, concurrency=1))  # fmt: skip
    (stopped,) = evals.runs(store)
    assert stopped.status == "failed"

    def count(sql: str) -> int:
        return int(store.conn.execute(sql).fetchone()[0])

    # the step's records went with the state that failed: nothing is left half-written; the
    # model calls made are all kept, each with its event
    assert {
        "cascades": count("SELECT COUNT(*) FROM cascades"),
        "assessments": count("SELECT COUNT(*) FROM assessments"),
        "outcomes": count("SELECT COUNT(*) FROM outcomes"),
        "tests": count("SELECT COUNT(*) FROM events WHERE data LIKE '%\"TEST\"%'"),
        "calls": count("SELECT COUNT(*) FROM llm_calls"),
    } == left
    assert count("SELECT COUNT(*) FROM events WHERE kind = 'llm_call'") == left["calls"]
    store.conn.execute("DROP TRIGGER refuse")
    resumed = asyncio.run(resume_eval(tracker, stopped.id))
    assert resumed.status == "completed" and resumed.done == 1
    assert (count("SELECT COUNT(*) FROM outcomes"), count(
        "SELECT COUNT(*) FROM events WHERE data LIKE '%\"TEST\"%'")) == (1, 1)  # fmt: skip
    assert count("SELECT COUNT(*) FROM cascades WHERE status = 'completed'") == 1
    store.close()


def test_each_model_call_is_written_with_the_step_that_follows_it(model_server, problems,
                                                                   _isolated_home):  # fmt: skip
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    store = Store(_isolated_home)  # SQLite joins the writes of one step into one transaction
    tracker = Tracker(store, ProfileRegistry(_isolated_home / "profiles"))
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    result, _ = run(tracker, model_server, problems, right_unless_three, matching="HumanEval/12",
                    limit=1, concurrency=1)  # fmt: skip
    store.conn.set_trace_callback(None)
    assert result.done == 1
    writes = _writes(statements)
    with_calls = [w for w in writes if any(s.startswith("INSERT INTO llm_calls") for s in w)]
    # the PREFLIGHT call with the task opened, the code's with the ACT event, the POSTFLIGHT
    # call with the task closed: three writes, not six
    assert len(with_calls) == 3
    pre, act, post = with_calls
    assert any(s.startswith("INSERT INTO assessments") and "'preflight'" in s for s in pre)
    assert any(s.startswith("INSERT INTO cascades") for s in pre)
    assert any(s.startswith("INSERT INTO events") and '"ACT"' in s for s in act)
    assert any(s.startswith("INSERT INTO assessments") and "'postflight'" in s for s in post)
    for w in with_calls:  # each row before its event, and both before the step's own writes
        first = next(i for i, s in enumerate(w) if s.startswith("INSERT INTO llm_calls"))
        assert "'llm_call'" in w[first + 1]
    store.close()


def _writes(statements: list[str]) -> list[list[str]]:
    """The statements of each transaction, in order."""
    writes: list[list[str]] = []
    for sql in statements:
        if sql.startswith("BEGIN"):
            writes.append([])
        elif writes and not sql.startswith(("COMMIT", "ROLLBACK")):
            writes[-1].append(sql)
    return writes


def _postflight_write(writes: list[list[str]]) -> int:
    (found,) = [
        i for i, w in enumerate(writes)
        if any(s.startswith("INSERT INTO assessments") and "'postflight'" in s for s in w)
    ]  # fmt: skip
    return found


def _outcome_write(writes: list[list[str]]) -> int:
    (found,) = [i for i, w in enumerate(writes)
                if any(s.startswith("INSERT INTO outcomes") for s in w)]  # fmt: skip
    return found


def _traced_run(home, model_server, standin):
    """One problem (12, right) run on a SQLite store at ``home`` by ``standin``: the result,
    the statements of each write, and the store (open)."""
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    store = Store(home)
    tracker = Tracker(store, ProfileRegistry(home / "profiles"))
    model_server.responder = standin
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    result = asyncio.run(start_eval(tracker, provider=spec(model_server), limit=1,
                                    matching="HumanEval/12", concurrency=1))  # fmt: skip
    store.conn.set_trace_callback(None)
    return result, _writes(statements), store


def test_the_tests_run_while_the_model_reassesses_and_one_write_keeps_both(
    model_server, problems, _isolated_home, tmp_path, monkeypatch
):
    import tempfile

    # the judge's workspaces go where the stand-in looks for them, and nobody else's do
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    standin = StandIn(problems, lambda p: "right")
    standin.after_the_tests = True  # it reassesses only once it has seen the tests end
    result, writes, store = _traced_run(_isolated_home, model_server, standin)
    # the tests had started before the model was asked to reassess, and ended while it did
    assert standin.overlapped == [True]
    (task,) = result.tasks
    assert task.state == "done" and task.passed is True  # written right: the verdict
    # the reassessment and the verdict: one write, with the problem done
    assert _postflight_write(writes) == _outcome_write(writes)
    assert any("UPDATE eval_tasks SET state = 'done'" in s for s in writes[_outcome_write(writes)])
    # three writes hold the three model calls, the last of them the verdict too
    assert sum(any(s.startswith("INSERT INTO llm_calls") for s in w) for w in writes) == 3
    # the tests' time passed inside the reassessment's: Noetic's own time counts neither
    assert task.ms_other is not None and task.ms_test is not None and task.ms_model is not None
    assert task.ms_total is not None
    assert task.ms_model + task.ms_test + task.ms_other > task.ms_total
    assert task.ms_other < task.ms_total - task.ms_model + 1
    store.close()


def test_a_reassessment_that_comes_before_the_tests_end_is_written_before_them(
    model_server, problems, _isolated_home
):
    standin = StandIn(problems, lambda p: "slow")  # right, after a second's sleep
    standin.slow_s = 1.0
    result, writes, store = _traced_run(_isolated_home, model_server, standin)
    (task,) = result.tasks
    assert task.state == "done" and task.passed is True
    assert task.ms_test is not None and task.ms_test >= 1000
    post, outcome = _postflight_write(writes), _outcome_write(writes)
    # kept (with the problem answered) before the tests were waited for: a stop while they
    # run leaves no model call to make again
    assert post < outcome
    assert any("UPDATE eval_tasks SET state = 'answered'" in s for s in writes[post])
    store.close()


def test_the_tests_start_before_the_functions_call_is_written(
    model_server, problems, _isolated_home, tmp_path, monkeypatch
):
    import glob
    import tempfile

    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    # the judge's workspaces go where this test looks for them, and nobody else's do
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    standin = StandIn(problems, lambda p: "slow")  # tests that run a second at least
    standin.slow_s = 1.0
    model_server.responder = standin
    store = Store(_isolated_home)
    tracker = Tracker(store, ProfileRegistry(_isolated_home / "profiles"))
    running: list[tuple[str, bool]] = []  # each statement, and whether the tests had started
    workspace = str(tmp_path / "noetic-eval-*" / "program.py")
    store.conn.set_trace_callback(lambda sql: running.append((sql, bool(glob.glob(workspace)))))
    result = asyncio.run(start_eval(tracker, provider=spec(model_server), limit=1,
                                    matching="HumanEval/12", concurrency=1))  # fmt: skip
    store.conn.set_trace_callback(None)
    assert result.tasks[0].passed is True
    act = [started for sql, started in running
           if sql.startswith("INSERT INTO events") and '"ACT"' in sql]  # fmt: skip
    # the function's call and its ACT event are written while its tests already run
    assert act == [True]
    # and the PREFLIGHT, written before the function was asked for, had none to run beside
    pre = [started for sql, started in running
           if sql.startswith("INSERT INTO assessments") and "'preflight'" in sql]  # fmt: skip
    assert pre == [False]
    store.close()


@pytest.mark.parametrize("slow", ["reassessed", "record_outcome", "context"])
def test_only_the_work_no_test_ran_beside_is_counted_as_added(
    model_server, problems, _isolated_home, monkeypatch, slow
):
    """Noetic's work made slow by 0.4 s: the reassessment's write, made while the tests (a
    second at least) still run, is Noetic's own time but not time the problem waited for; the
    outcome's, written once they ended, and the problem's context, built before anything
    else, are both."""
    import time

    from noetic.evaluation import engine

    def slowly(original):
        def wrapped(*args, **kwargs):
            time.sleep(0.4)
            return original(*args, **kwargs)

        return wrapped

    if slow == "reassessed":
        monkeypatch.setattr(engine._Runner, "reassessed", slowly(engine._Runner.reassessed))
    elif slow == "context":
        from noetic.store import llm_calls

        monkeypatch.setattr(llm_calls, "last_call_id", slowly(llm_calls.last_call_id))
    else:
        from noetic.calibration.learning import record_outcome

        monkeypatch.setattr(engine, "record_outcome", slowly(record_outcome))
    standin = StandIn(problems, lambda p: "slow")
    standin.slow_s = 1.0
    result, _, store = _traced_run(_isolated_home, model_server, standin)
    (task,) = result.tasks
    assert task.passed is True
    assert task.ms_other is not None and task.ms_added is not None and task.ms_test is not None
    assert task.ms_other >= 400  # Noetic's own time holds the slow write either way
    assert 0 <= task.ms_added <= task.ms_other
    if slow == "reassessed":
        assert task.ms_added < 400  # hidden behind the tests
    else:
        assert task.ms_added >= 400  # after them: the problem waited for it
    from noetic.evaluation.report import eval_report as report_of

    assert report_of(store, result.run_id).timing.added_ms == task.ms_added
    store.close()


def test_a_failing_provider_stops_the_run_and_a_resume_finishes_it(tracker, model_server,
                                                                   problems):  # fmt: skip
    standin = StandIn(problems, right_unless_three)
    answered: list[str] = []

    def flaky(body):
        behaviour = standin(body)
        if standin.asked[-1][1] == "code":
            answered.append(standin.asked[-1][0])
            if len(answered) > 3:
                return error(400, text="the key was revoked")
        return behaviour

    model_server.responder = flaky
    failed = asyncio.run(start_eval(tracker, provider=spec(model_server),
                                    matching="HumanEval/5?", concurrency=1))  # fmt: skip
    assert failed.status == "failed" and failed.done == 3 and failed.pending == 7
    assert "the key was revoked" in failed.detail
    assert f"noetic eval resume {failed.run_id}" in failed.detail
    done_before = {t.task_id for t in failed.tasks if t.state == "done"}
    model_server.responder = standin
    standin.asked.clear()
    resumed = asyncio.run(resume_eval(tracker, failed.run_id))
    assert resumed.status == "completed" and resumed.done == 10
    assert not done_before & {t for t, _ in standin.asked}  # nothing that finished ran again
    rows = tracker.store.conn.execute(
        "SELECT cascade_id FROM outcomes WHERE cascade_id IN "
        "(SELECT cascade_id FROM eval_tasks WHERE run_id = ?)",
        (failed.run_id,),
    ).fetchall()
    assert len(rows) == 10
    assert evals.get_run(tracker.store, failed.run_id).status == "completed"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 65}, "concurrency: Input should be less than or equal to 64"),
        ({"test_timeout": 0}, "test_timeout_s: Input should be greater than 0"),
        ({"test_memory": 10}, "test_memory_mb: Input should be greater than or equal to 64"),
        ({"sandbox": "maybe"}, "unknown sandbox mode 'maybe'"),
        ({"review": "gentle"}, "unknown review 'gentle'"),
        ({"tasks_file": "x.jsonl"}, "give a task set ('humaneval') or --tasks FILE, not both"),
        ({"limit": 0}, "--limit must be at least 1"),
        ({"matching": "Nothing/"}, "no problem's task id matches 'Nothing/'"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_recorded(tracker, options, message):
    from noetic.errors import NoeticError

    with pytest.raises(NoeticError, match=re.escape(message)):
        asyncio.run(start_eval(tracker, provider="openai-compatible:http://127.0.0.1:9#m",
                               **options))  # fmt: skip
    assert evals.runs(tracker.store) == []


def test_a_run_reads_its_calibration_settings_once(tracker, model_server, problems, monkeypatch):
    """[calibration] and [gate] are read as the run starts, not for every decision."""
    from noetic.calibration import recalibrating
    from noetic.evaluation import engine

    reads = []
    real = recalibrating.read_settings

    def read_settings(home):
        reads.append(home)
        return real(home)

    for module in (recalibrating, engine):
        monkeypatch.setattr(module, "read_settings", read_settings)
    result, _ = run(tracker, model_server, problems, right_unless_three,
                    matching="HumanEval/1?", concurrency=2)  # fmt: skip
    assert result.done == 10 and reads == [tracker.store.home]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_each_outcome_is_refitted_once_and_every_decision_reads_the_map_of_all_before_it(
    tracker, model_server, problems, monkeypatch, concurrency
):
    """After each outcome the map is refitted once: with one problem at a time on the run's
    refit thread, while the model is asked for the next PREFLIGHT (that decision waits for it,
    and keeps the map in its own write: the thread reads and writes nothing, it only fits),
    with several inside the outcome's write. Either way every decision reads the map fitted on
    every outcome before it, and the map the run leaves has seen them all."""
    import threading

    from noetic.calibration import learning, recalibrating
    from noetic.calibration.recalibration import recalibrate
    from noetic.evaluation import engine
    from noetic.store import outcome_rows

    threads: list[str] = []  # where each map was fitted
    keeping: list[str] = []  # where each was kept
    reading: set[str] = set()  # and where the outcomes were read
    real_fit, real_keep = recalibrating.fit_snapshot, outcome_rows.keep_map
    real_read = outcome_rows.outcomes_from

    def fit_snapshot(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real_fit(*args, **kwargs)

    def keep_map(*args, **kwargs):
        keeping.append(threading.current_thread().name)
        return real_keep(*args, **kwargs)

    def outcomes_from(*args, **kwargs):
        reading.add(threading.current_thread().name)
        return real_read(*args, **kwargs)

    monkeypatch.setattr(recalibrating, "fit_snapshot", fit_snapshot)  # fit_for's too
    monkeypatch.setattr(engine, "fit_snapshot", fit_snapshot)
    monkeypatch.setattr(outcome_rows, "keep_map", keep_map)
    monkeypatch.setattr(outcome_rows, "outcomes_from", outcomes_from)
    writes_with_outcome = []
    real_record = learning.record_outcome

    def record_outcome(store, *args, **kwargs):
        done = real_record(store, *args, **kwargs)
        writes_with_outcome.append(kwargs["refit"])
        return done

    monkeypatch.setattr(engine, "record_outcome", record_outcome)
    standin = StandIn(problems, lambda p: "right" if number(p) % 3 == 0 else "wrong",
                      stated={"preflight": 0.8})  # fmt: skip
    model_server.responder = standin
    result = asyncio.run(start_eval(tracker, provider=spec(model_server), limit=24,
                                    concurrency=concurrency))  # fmt: skip
    assert result.done == 24
    main = threading.main_thread().name
    if concurrency == 1:
        # the first decision fits the map it finds missing; every other fit is the refit after
        # an outcome, on the refit thread, none in the outcome's write
        assert threads == [main] + ["noetic-eval-refit_0"] * 24
        assert writes_with_outcome == [False] * 24
    else:
        assert set(threads) == {main} and writes_with_outcome == [True] * 24
    # every map kept, and every outcome read, by the thread that does everything else: the
    # run's own
    assert set(keeping) == {main} and len(keeping) == 25
    assert reading == {main}
    tasks = {t.cascade_id: t for t in result.tasks}
    rows = tracker.store.conn.execute(
        "SELECT a.cascade_id, a.calibrated, "
        "(SELECT count(*) FROM outcomes o WHERE o.id <= (SELECT coalesce(max(e.id), 0) "
        " FROM outcomes e WHERE e.at < a.created_at)) AS earlier "
        "FROM assessments a WHERE a.phase = 'preflight' ORDER BY a.id"
    ).fetchall()
    judged = [
        float(bool(tasks[c].passed))
        for (c,) in tracker.store.conn.execute("SELECT cascade_id FROM outcomes ORDER BY id")
    ]
    in_force = 0
    for row in rows:  # each PREFLIGHT decided on the outcomes recorded before it
        before = row["earlier"]
        fitted = recalibrate([0.8] * before, judged[:before])
        if not fitted.in_force:
            assert row["calibrated"] is None, before
            continue
        in_force += 1
        calibrated = json.loads(row["calibrated"])
        assert calibrated["outcomes"] == before
        assert calibrated["value"] == pytest.approx(fitted(0.8), abs=1e-6)
    assert in_force >= 5  # the map came into force during the run
    (kept,) = tracker.store.conn.execute("SELECT outcomes FROM calibration_maps").fetchall()
    assert kept[0] == 24  # the last outcome's refit is in before the run returns
