"""The calibration report's text: its metric values in one column, its window checked."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.calibration.outcomes import Filters
from noetic.cli import app
from noetic.errors import ValidationError

runner = CliRunner()


@pytest.mark.parametrize("bins", ["1", "10", "50"])
def test_the_metric_values_start_in_one_column(bins):
    assert runner.invoke(app, ["bootstrap"]).exit_code == 0
    shown = runner.invoke(app, ["calibration", "report", "--bins", bins])
    assert shown.exit_code == 0, shown.output
    labels = r"Brier score|ECE \(\d+ bins?\)|debiased ECE|signed bias|AUROC|verdict"
    starts = set()
    for line in shown.stdout.splitlines():
        if found := re.match(rf"  ({labels}) +", line):
            starts.add(found.end())
    assert len(starts) == 1 and "ECE (" in shown.stdout, shown.stdout


def test_an_empty_phase_row_puts_its_dash_under_stated():
    runner.invoke(app, ["bootstrap"])
    lines = runner.invoke(app, ["calibration", "report"]).stdout.splitlines()
    header = next(ln for ln in lines if ln.strip().startswith("phase"))
    empty = next(ln for ln in lines if ln.strip().startswith("preflight "))
    assert empty.index("—") == header.index("stated") + len("stated") - 1


@pytest.mark.slow
@pytest.mark.parametrize("days", ["-1", "0", "nan", "inf", "36501"])
def test_a_window_that_is_no_number_of_days_is_refused(days):
    runner.invoke(app, ["bootstrap"])
    refused = runner.invoke(app, ["calibration", "report", "--since-days", days, "--json"])
    assert refused.exit_code == 1
    assert (
        "since_days must be a number of days above 0"
        in json.loads(refused.stdout)["error"]["message"]
    )


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_the_window_is_a_positive_finite_number_of_days(days):
    if math.isfinite(days) and 0 < days <= 36_500:
        assert Filters(since_days=days).since_days == days
    else:
        with pytest.raises(ValidationError, match="since_days"):
            Filters(since_days=days)
