"""Threshold goals say which way to move: density and uncertainty are lowered, not raised."""

import pytest

from noetic.assessment import Assessment
from noetic.cascade.goals import threshold_goals
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker

from ..conftest import uniform


@pytest.mark.subprocess
def test_goals_move_each_vector_in_its_own_direction(store):
    tracker = Tracker(store, ProfileRegistry())
    session, profile = tracker.bootstrap(ai_id="a", profile="balanced")
    gap = profile.investigation.gap_threshold
    vectors = uniform(0.85, know=0.3, uncertainty=0.75, density=0.7)
    tracker.preflight(session.id, "t", Assessment.from_input("preflight", vectors))
    goals = {g.target_vector: g for g in threshold_goals(store, session.id, profile)}
    assert set(goals) == {"know", "uncertainty", "density"}
    assert goals["know"].description.startswith(f"Raise know from 0.30 to at least {gap:.2f}")
    assert goals["uncertainty"].description.startswith(
        f"Lower uncertainty from 0.75 to at most {1 - gap:.2f}"
    )
    assert goals["density"].description.startswith(
        f"Lower density from 0.70 to at most {1 - gap:.2f}"
    )
    # Priority is the distance to the target on the 'higher is better' scale, either way.
    assert goals["uncertainty"].priority == round(gap - 0.25, 6)
