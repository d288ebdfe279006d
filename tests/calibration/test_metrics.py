import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

from noetic.calibration.metrics import (
    auroc,
    brier,
    calibration_metrics,
    calibration_test,
    ece,
    ece_debiased_squared,
    reliability,
)


@pytest.mark.parametrize("seed", range(8))
def test_metrics_agree_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 400))
    p = rng.uniform(0, 1, n)
    y = (rng.uniform(0, 1, n) < p ** rng.uniform(0.5, 2)).astype(float)
    assert brier(p, y) == pytest.approx(brier_score_loss(y, p))
    assert auroc(p, y) == pytest.approx(roc_auc_score(y, p))
    bins = int(rng.integers(2, 12))
    prob_true, prob_pred = calibration_curve(y, p, n_bins=bins, strategy="quantile")
    table = reliability(p, y, bins)
    assert [b.observed for b in table] == pytest.approx(list(prob_true))
    assert [b.mean_confidence for b in table] == pytest.approx(list(prob_pred))
    assert sum(b.count for b in table) == n
    expected_ece = sum(
        b.count / n * abs(t - q) for b, t, q in zip(table, prob_true, prob_pred, strict=True)
    )
    assert ece(p, y, bins) == pytest.approx(expected_ece)


def test_ties_in_auroc_count_half():
    p = np.array([0.5, 0.5, 0.5, 0.5])
    y = np.array([1.0, 0.0, 1.0, 0.0])
    assert auroc(p, y) == pytest.approx(roc_auc_score(y, p)) == 0.5


@pytest.mark.slow
def test_a_report_has_intervals_and_sample_sizes():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.2, 0.9, 200)
    y = (rng.uniform(0, 1, 200) < p).astype(float)
    m = calibration_metrics(p, y)
    for metric in (m.brier, m.ece, m.signed_bias, m.auroc):
        assert metric.n == 200
        assert metric.low <= metric.value <= metric.high
    assert m.ece.value < 0.1  # a calibrated simulated agent comes out calibrated
    assert calibration_metrics(p, y) == m  # seeded bootstrap: reproducible


def test_insufficient_data_is_said_not_computed():
    m = calibration_metrics([0.8] * 19, [1.0] * 19)
    assert m.test.verdict == "insufficient data"
    for metric in (m.brier, m.ece, m.ece_debiased, m.signed_bias, m.auroc):
        assert metric.value is None and "insufficient data: 19 outcomes" in metric.reason
    assert m.reliability == []
    one_class = calibration_metrics([0.7] * 30, [1.0] * 30)
    assert one_class.brier.value == pytest.approx(0.09)
    assert one_class.auroc.value is None and "5 successes and 5 failures" in one_class.auroc.reason


@pytest.mark.parametrize(
    ("p", "y"),
    [([0.5, 1.2], [1, 0]), ([0.5, float("nan")], [1, 0]), ([0.5], [1, 0]), ([0.5], [2.0])],
)
def test_bad_inputs_are_refused(p, y):
    with pytest.raises(ValueError):
        calibration_metrics(p, y)


pairs = st.lists(st.tuples(st.floats(0, 1), st.sampled_from([0.0, 1.0])), min_size=25, max_size=120)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(pairs)
def test_metrics_stay_in_their_ranges(data):
    p, y = zip(*data, strict=True)
    m = calibration_metrics(p, y, rounds=50)
    assert 0 <= m.brier.value <= 1
    assert 0 <= m.ece.value <= 1
    assert -1 <= m.signed_bias.value <= 1
    if m.auroc.value is not None:
        assert 0 <= m.auroc.value <= 1


def _agent(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.5, 0.95, n)
    return p, (rng.uniform(0, 1, n) < p - shift).astype(float)


def test_spiegelhalter_z_is_the_textbook_formula():
    p, y = _agent(60, 3)
    t = calibration_test(p, y)
    z = np.sum((y - p) * (1 - 2 * p)) / np.sqrt(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))
    assert t.spiegelhalter_z == pytest.approx(z, abs=1e-6)
    assert t.bias_z == pytest.approx(np.sum(y - p) / np.sqrt(np.sum(p * (1 - p))), abs=1e-6)


def test_calibrated_agents_are_called_consistent_and_overconfident_ones_are_not():
    calibrated = [calibration_test(*_agent(80, s)).verdict for s in range(200)]
    assert calibrated.count("consistent with calibration") >= 180
    over = [calibration_test(*_agent(80, s, shift=0.2)).verdict for s in range(100)]
    assert over.count("miscalibrated") >= 85


def test_debiased_ece_is_near_zero_on_average_where_binned_ece_is_not():
    runs = [_agent(40, s) for s in range(300)]
    debiased = np.mean([ece_debiased_squared(p, y, 8) for p, y in runs])
    binned = np.mean([ece(p, y, 8) ** 2 for p, y in runs])
    assert abs(debiased) < 0.004 < binned


@pytest.mark.slow
def test_the_debiased_interval_contains_zero_for_calibrated_agents():
    covered = 0
    for s in range(60):
        m = calibration_metrics(*_agent(40, s), rounds=200).ece_debiased
        assert m.low <= m.value <= m.high
        covered += m.low <= 0 <= m.high
    assert covered >= 54
    over = calibration_metrics(*_agent(160, 1, shift=0.25), rounds=200).ece_debiased
    assert over.low > 0


def test_the_test_names_what_it_cannot_judge():
    assert calibration_test(np.full(10, 0.8), np.ones(10)).verdict == "insufficient data"
    certain = calibration_test(np.ones(30), np.r_[np.ones(29), 0.0])
    assert certain.verdict == "miscalibrated" and "0 or 1" in certain.reason
    exact = calibration_test(np.ones(30), np.ones(30))
    assert exact.verdict == "insufficient data" and "nothing to test" in exact.reason
    halves = calibration_test(np.full(40, 0.5), np.r_[np.zeros(35), np.ones(5)])
    assert halves.spiegelhalter_z is None and halves.verdict == "miscalibrated"


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(pairs)
def test_the_estimators_stay_sane_on_any_input(data):
    p, y = (np.array(v) for v in zip(*data, strict=True))
    t = calibration_test(p, y)
    for value in (t.spiegelhalter_p, t.bias_p):
        assert value is None or 0 <= value <= 1
    for bins in (1, 3, 5):
        debiased = ece_debiased_squared(p, y, bins)
        plain = sum(b.count / len(p) * b.gap**2 for b in reliability(p, y, bins))
        assert -0.25 <= debiased <= plain + 1e-12  # noise is only ever taken away
