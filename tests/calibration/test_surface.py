"""`noetic.calibration` is the one public surface; the old documented path still resolves."""

import importlib

import pytest

import noetic.calibration as calibration


def test_every_public_name_resolves_to_its_module():
    for name in calibration.__all__:
        obj = getattr(calibration, name)
        module = getattr(obj, "__module__", None)
        if module is not None and module.startswith("noetic."):
            assert module.startswith("noetic.calibration."), (name, module)


def test_the_modules_behind_the_surface():
    for module in ("basic", "metrics", "beliefs", "drift", "outcomes", "guardian", "reports"):
        assert importlib.import_module(f"noetic.calibration.{module}").__doc__


def test_the_documented_old_path_warns_and_forwards():
    import noetic.guardian as old

    with pytest.warns(DeprecationWarning, match=r"noetic\.calibration\.record_outcome"):
        assert old.record_outcome is calibration.record_outcome
    with pytest.warns(DeprecationWarning, match=r"noetic\.calibration\.run_guardian"):
        assert old.guardian is calibration.run_guardian
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = old.no_such_name
