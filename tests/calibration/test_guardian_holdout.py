"""The guardian proves a correction on outcomes it was not fitted on before proposing it."""

import random

import pytest

from noetic.calibration.guardian import FIT_SHARE, MIN_FIT, MIN_HELD_OUT, held_out_check


def agent(n, bias, *, seed=1):
    """Confidences uniform in 0.5–0.95; success with probability confidence − bias."""
    rng = random.Random(seed)
    stated = [rng.uniform(0.5, 0.95) for _ in range(n)]
    observed = [1.0 if rng.random() < max(0.0, p - bias) else 0.0 for p in stated]
    return stated, observed


def test_a_steady_overconfidence_is_corrected_and_the_correction_is_shown_to_help():
    stated, observed = agent(90, 0.3)
    proposal, check, why = held_out_check("balanced", 1.0, stated, observed)
    assert proposal is not None and proposal.new < 1.0 and why == ""
    fit = round(90 * FIT_SHARE)
    assert (check.fitted_on, check.held_out) == (fit, 90 - fit)
    late_p, late_y = stated[fit:], observed[fit:]
    before = sum((p - y) ** 2 for p, y in zip(late_p, late_y, strict=True)) / len(late_p)
    after = sum((p * proposal.new - y) ** 2 for p, y in zip(late_p, late_y, strict=True)) / len(
        late_p
    )
    assert check.brier_before == pytest.approx(before, abs=1e-6)
    assert check.brier_after == pytest.approx(after, abs=1e-6)
    assert check.helps and check.brier_after < check.brier_before
    assert check.weight == proposal.new


def test_a_correction_that_does_not_help_on_later_outcomes_is_not_proposed():
    """Overconfident at first, calibrated since: the early correction would now do harm."""
    early = agent(60, 0.35, seed=2)
    late = agent(60, 0.0, seed=3)
    stated, observed = early[0] + late[0], early[1] + late[1]
    proposal, check, why = held_out_check("balanced", 1.0, stated, observed)
    assert proposal is None
    assert check.weight is not None and check.weight < 1.0  # it was fitted, then refused
    assert not check.helps and check.brier_after >= check.brier_before
    assert "fitted on the first 80 outcomes" in why
    assert "did not lower the Brier score on the 40 after them" in why
    assert "nothing proposed" in why


def test_too_few_outcomes_to_prove_a_correction_propose_nothing_and_say_so():
    stated, observed = agent(MIN_FIT + MIN_HELD_OUT - 1, 0.5)
    proposal, check, why = held_out_check("balanced", 1.0, stated, observed)
    assert proposal is None and check is None
    assert f"{MIN_FIT + MIN_HELD_OUT} needed" in why
    enough = agent(MIN_FIT + MIN_HELD_OUT, 0.5)
    assert held_out_check("balanced", 1.0, *enough)[1] is not None


def test_a_calibrated_agent_gets_nothing_and_the_held_out_brier_is_still_shown():
    stated, observed = agent(90, 0.0, seed=4)
    proposal, check, why = held_out_check("balanced", 1.0, stated, observed)
    assert proposal is None and check.brier_after is None and check.brier_before > 0
    assert why.startswith("no credible bias in the first")
