"""The points a recalibration map is fitted on, kept in step with the outcomes
(:class:`noetic.calibration.recalibrating.Points`): after any sequence of tasks, outcomes
(new ones, and further ones for a task already judged, from another source or the same) and
assessments written after an outcome, the kept points are the points read afresh from the
store, and the map (with its release gate) refitted on them is the map a full refit gives;
on SQLite and on PostgreSQL."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.assessment import Assessment
from noetic.calibration import record_outcome
from noetic.calibration.outcomes import SOURCES, Filters, phase_points
from noetic.calibration.recalibrating import Points, Settings, fit_for, fit_on, points_of
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store.rows import now

from ..conftest import uniform

VECTORS = uniform(0.8, engagement=0.9, coherence=0.9, clarity=0.9, do=0.9)
AGENTS = [("a", "m1"), ("b", "m1"), ("c", "m2"), ("d", None)]
GATE = Settings(max_failure_rate=0.2)

task = st.tuples(
    st.just("task"),
    st.integers(0, len(AGENTS) - 1),
    st.sampled_from([None, 0.3, 0.6, 0.8, 0.95]),  # None: no p_success, the confidence counts
    st.booleans(),  # a CHECK
    st.booleans(),  # its POSTFLIGHT at once
)
outcome = st.tuples(
    st.just("outcome"),
    st.integers(0, 99),
    st.sampled_from(SOURCES),
    st.sampled_from([0, 0.5, 1]),
    st.booleans(),  # refitted at once (else with the outcomes after it)
)
late = st.tuples(st.just("post"), st.integers(0, 99))  # a POSTFLIGHT after an outcome
steps = st.lists(st.one_of(task, task, outcome, outcome, outcome, late), min_size=30, max_size=90)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def new_store(request):
    def make(home: Path):
        if request.param == "postgresql":
            from noetic.store.postgres import PostgresStore

            return PostgresStore(request.getfixturevalue("postgres_server").new_schema(), home=home)
        return Store(home, write_files=False)

    return make, 12 if request.param == "postgresql" else 60


def run(tracker: Tracker, plan) -> None:
    store = tracker.store
    mine = Points()
    tasks: list[tuple[str, str, tuple[str, str | None]]] = []  # session, task, agent
    for step in plan:
        if step[0] == "task":
            _, who, said, check, post = step
            ai_id, model = AGENTS[who]
            session, _ = tracker.bootstrap(ai_id=ai_id, ai_model=model)
            env = {"vectors": VECTORS} | ({} if said is None else {"p_success": said})
            r = tracker.preflight(session.id, "t", Assessment.from_input("preflight", env))
            if check:
                tracker.check(session.id, Assessment.from_input("check", env))
            if post:
                tracker.postflight(session.id, Assessment.from_input("postflight", env))
            tasks.append((session.id, r.cascade.id, AGENTS[who]))
            continue
        if not tasks:
            continue
        session_id, cascade_id, (ai_id, model) = tasks[step[1] % len(tasks)]
        if step[0] == "post":
            if store.open_cascade_of(session_id) is not None:
                tracker.postflight(
                    session_id, Assessment.from_input("postflight", {"vectors": VECTORS})
                )
            continue
        _, _, source, score, refit = step
        record_outcome(store, cascade_id, score=score, source=source, refit=refit)
        if not refit:
            continue
        full = phase_points(store, Filters())
        assert mine.update(store).flat == full
        assert fit_for(store, ai_id, model, GATE) == fit_on(full, ai_id, model, GATE)[0]
    full = phase_points(store, Filters())
    assert points_of(store).flat == full
    for ai_id, model in AGENTS:
        assert fit_for(store, ai_id, model, GATE) == fit_on(full, ai_id, model, GATE)[0]


def test_kept_points_and_maps_are_those_a_full_refit_gives(new_store):
    make, examples = new_store

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(steps)
    def check(plan):
        with tempfile.TemporaryDirectory() as home, make(Path(home)) as store:
            run(
                Tracker(store, ProfileRegistry(Path(home) / "profiles"), checkpoints=False),
                plan,
            )

    check()


@pytest.mark.parametrize("every", [Points.EVERY, 3])
def test_a_fit_over_enough_outcomes_matches_the_full_refit_in_every_scope(
    new_store, tmp_path, monkeypatch, every
):
    """Enough outcomes that maps are fitted and proved in each scope (the agent's own, its
    model's, the store's), some tasks judged twice, the second verdict reversing the first;
    several outcomes between refits (with ``every`` 3, more new tasks than that are read in one
    read of the whole store)."""
    monkeypatch.setattr(Points, "EVERY", every)
    with new_store[0](tmp_path) as store:
        tracker = Tracker(store, ProfileRegistry(tmp_path / "profiles"), checkpoints=False)
        plan = [("task", i % 3, 0.9, i % 2 == 0, True) for i in range(48)]
        plan += [("outcome", i, "test", float(i % 4 == 0), i % 7 == 0) for i in range(48)]
        plan += [("outcome", i, "test", float(i % 4 != 0), i % 2 == 0) for i in range(0, 48, 5)]
        run(tracker, plan)
        body = fit_for(store, "a", "m1", GATE)
        assert body["scope"] == "agent" and body["fitted"]["outcomes"] == 16
        assert fit_for(store, "d", None)["scope"] == "store"


def test_an_outcome_rolled_back_leaves_no_point_behind(tmp_path):
    """An outcome the kept points saw inside a write that was then rolled back (its id taken
    again by the next outcome, as SQLite does) is not counted: the points start again."""
    with Store(tmp_path, write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry(tmp_path / "profiles"), checkpoints=False)
        run(tracker, [("task", 0, 0.8, False, True), ("task", 1, 0.3, False, True)])
        first, second = [c.id for s in store.list_sessions() for c in store.cascades(s.id)]
        record_outcome(store, first, score=1.0, source="test")
        with pytest.raises(RuntimeError), store.unit():
            record_outcome(store, second, score=0.0, source="test")
            assert {p.cascade_id for p in points_of(store).flat} == {first, second}
            raise RuntimeError("the step failed after its outcome")
        record_outcome(store, first, score=0.0, source="human")
        assert points_of(store).flat == phase_points(store, Filters())
        assert {p.cascade_id for p in points_of(store).flat} == {first}


def test_an_outcome_committed_below_the_newest_seen_is_not_missed(tmp_path):
    """Another writer's outcome may commit after a later one (its id below the newest the
    kept points saw): the count of outcomes says so and the points start again."""
    with Store(tmp_path, write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry(tmp_path / "profiles"), checkpoints=False)
        run(tracker, [("task", 0, 0.8, False, True), ("outcome", 0, "test", 1.0, True)])
        (judged,) = store.conn.execute("SELECT id, cascade_id FROM outcomes").fetchall()

        def outcome(outcome_id: int, source: str) -> None:
            with store.transaction() as conn:
                conn.execute(
                    "INSERT INTO outcomes (id, at, session_id, cascade_id, ai_id, profile, source, "
                    "score) SELECT ?, ?, session_id, cascade_id, ai_id, profile, ?, 0 "
                    "FROM outcomes WHERE id = ?",
                    (outcome_id, now(), source, judged[0]),
                )

        outcome(judged[0] + 10, "human")
        assert points_of(store).flat == phase_points(store, Filters())
        outcome(judged[0] + 5, "check")  # committed late, below the newest seen
        assert points_of(store).flat == phase_points(store, Filters())
        assert points_of(store).flat[0].observed == pytest.approx(1 / 3)
