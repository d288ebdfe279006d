import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

from noetic.calibration.metrics import auroc, brier, calibration_metrics, ece, reliability


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
    for metric in (m.brier, m.ece, m.signed_bias, m.auroc):
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
