import json

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
