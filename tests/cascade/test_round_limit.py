"""`noetic cascade run` says when the profile's round limit, not readiness, ended investigating."""

import json

from typer.testing import CliRunner

from noetic.cli import app

from ..llm.model_server import reply, running
from .test_engine import call, scores, step, think

runner = CliRunner()


def test_the_round_limit_is_said_when_it_ends_the_investigation(tmp_path):
    exported = runner.invoke(app, ["profile", "export", "balanced", "--json"])
    yaml = json.loads(exported.stdout)["yaml"].replace("max_rounds: 7", "max_rounds: 1")
    (tmp_path / "one.yaml").write_text(yaml)
    imported = runner.invoke(app, ["profile", "import", str(tmp_path / "one.yaml"),
                                   "--name", "one_round"])  # fmt: skip
    assert imported.exit_code == 0, imported.output
    (tmp_path / "notes.txt").write_text("nothing useful")
    args = ["cascade", "run", "t", "--workspace", str(tmp_path), "--profile", "one_round"]
    script = [scores(0.5, clarity=0.9), think(complex_=False, strategy="research"),
              step(call("read_file", path="notes.txt")), scores(0.55, clarity=0.9),
              "my best try", scores(0.6, clarity=0.9)]  # fmt: skip
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        human = runner.invoke(app, [*args, "--provider", spec])
    assert human.exit_code == 0, human.output
    assert (
        "investigation stopped at the round limit (1 of 1 rounds, the profile's max_rounds) "
        "before the model was ready; confidence 0."
    ) in human.stdout
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        as_json = json.loads(runner.invoke(app, [*args, "--provider", spec, "--json"]).stdout)
    assert as_json["loop_exit"] == "max_rounds" and as_json["rounds"] == 1


def test_no_round_limit_line_when_the_model_became_ready(tmp_path):
    script = [scores(0.5, clarity=0.9), think(complex_=False, strategy="research"),
              step(call("read_file", path="n.txt")), scores(0.9), "done", scores(0.9)]  # fmt: skip
    (tmp_path / "n.txt").write_text("x")
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        args = ["cascade", "run", "t", "--provider", spec, "--workspace", str(tmp_path)]
        result = runner.invoke(app, [*args, "--profile", "balanced"])
    assert result.exit_code == 0, result.output
    assert "round limit" not in result.stdout
