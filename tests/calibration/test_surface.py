"""`noetic.calibration` is the one public surface; the old documented path still resolves."""

import importlib

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
