import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.vectors import VECTOR_NAMES

runner = CliRunner()


def ok_json(*args, input=None):
    result = runner.invoke(app, [*args, "--json"], input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_without_scores_preflight_prints_the_prompt_and_records_nothing():
    runner.invoke(app, ["bootstrap"])
    out = ok_json("preflight", "migrate the billing schema", input="")
    assert out["recorded"] is False
    assert "migrate the billing schema" in out["prompt"]
    for name in VECTOR_NAMES:
        assert name in out["prompt"]
    state = ok_json("state")
    assert state["open_cascade"] is None and state["latest"] is None


@pytest.mark.subprocess
def test_check_without_scores_prints_the_check_prompt_for_the_open_task():
    runner.invoke(app, ["bootstrap"])
    early = runner.invoke(app, ["check", "--json"], input="")
    assert early.exit_code == 1 and "PREFLIGHT first" in early.stdout
    scores = {v: 0.8 for v in VECTOR_NAMES}
    runner.invoke(app, ["preflight", "tidy the docs", "--vectors", json.dumps(scores)])
    out = ok_json("check", input="")
    assert out["recorded"] is False and "TASK: tidy the docs" in out["prompt"]
    assert '"know": 0.8' in out["prompt"] and "only the vectors that changed" in out["prompt"]
