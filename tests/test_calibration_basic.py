import pytest

from noetic.assessment import Assessment
from noetic.calibration import CalibrationClass, basic_calibration, classify, epistemic_delta

from .conftest import uniform


@pytest.mark.parametrize(
    ("pre", "post", "expected"),
    [
        (0.7, 0.6, CalibrationClass.WELL_CALIBRATED),  # exactly −τ
        (0.6, 0.7, CalibrationClass.WELL_CALIBRATED),  # exactly +τ
        (0.7, 0.5999, CalibrationClass.OVERCONFIDENT),
        (0.6, 0.7001, CalibrationClass.UNDERCONFIDENT),
        (0.5, 0.5, CalibrationClass.WELL_CALIBRATED),
    ],
)
def test_classification_boundaries(pre, post, expected):
    assert classify(pre, post) is expected


def test_tolerance_is_configurable():
    assert classify(0.5, 0.7, tolerance=0.25) is CalibrationClass.WELL_CALIBRATED
    assert classify(0.5, 0.7, tolerance=0.1) is CalibrationClass.UNDERCONFIDENT


def test_delta_is_post_minus_pre_per_vector():
    pre = Assessment.from_input("preflight", uniform(0.5))
    post = Assessment.from_input("postflight", uniform(0.8))
    delta = epistemic_delta(pre, post)
    assert delta["know"] == pytest.approx(0.3)
    assert delta["uncertainty"] == pytest.approx(-0.3)
    result = basic_calibration(pre, post)
    assert result.learning_magnitude == pytest.approx(0.3)
    assert result.classification is CalibrationClass.UNDERCONFIDENT
    assert basic_calibration(post, pre).classification is CalibrationClass.OVERCONFIDENT
