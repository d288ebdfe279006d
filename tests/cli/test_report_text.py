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


def _task(p_success: float, success: bool) -> None:
    from noetic.vectors import VECTOR_NAMES

    scores = json.dumps({v: 0.8 for v in VECTOR_NAMES} | {"p_success": p_success})
    assert runner.invoke(app, ["preflight", "t", "--vectors", scores]).exit_code == 0
    assert runner.invoke(app, ["postflight", "--vectors", scores]).exit_code == 0
    assert runner.invoke(app, ["outcome", "--success" if success else "--failure"]).exit_code == 0


def test_a_figure_without_an_interval_is_marked_in_the_table_and_the_metrics_agree():
    """Seven tasks, two failures: Brier has its interval, AUROC has a value but no interval yet
    (5 failures needed); the table marks it and says why, and the scored metrics show the same
    Brier as the table, not "insufficient data" beneath a number."""
    runner.invoke(app, ["bootstrap"])
    for i in range(7):
        _task(0.6 + i / 20, success=i >= 2)
    lines = runner.invoke(app, ["calibration", "report"]).stdout.splitlines()
    row = next(ln for ln in lines if ln.strip().startswith("preflight "))
    assert row.rstrip().endswith("1.00*"), row
    assert any(
        ln.startswith("  * preflight AUROC: no interval yet: 5 successes and 2 failures")
        for ln in lines
    ), lines
    brier = next(ln for ln in lines if ln.strip().startswith("Brier score"))
    assert "insufficient" not in brier and row.split()[-2].rstrip("*") in brier
