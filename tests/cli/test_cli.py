import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform

runner = CliRunner()


def run(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def ok_json(*args, input=None):
    result = run(*args, "--json", input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def gated(value):
    return uniform(value, engagement=0.85, coherence=0.85)


@pytest.mark.subprocess
def test_a_whole_transaction_chains_on_the_agents_current_session(monkeypatch):
    boot = ok_json("bootstrap", "--ai-model", "claude-3-5-haiku", "--ai-id", "claude")
    assert boot["profile"]["name"] == "autonomous_agent"
    assert boot["env"] == {"NOETIC_AI_ID": "claude", "NOETIC_SESSION": boot["session"]["id"]}
    assert boot["exports"] == [f"export {k}={v}" for k, v in boot["env"].items()]
    # Naming the agent once (as the export line does) is enough for every later command.
    monkeypatch.setenv("NOETIC_AI_ID", "claude")
    pre = ok_json("preflight", "ship the fix", "--vectors", json.dumps(gated(0.5)))
    assert pre["decision"]["action"] == "INVESTIGATE"
    assert pre["session_id"] == boot["session"]["id"]
    inv = ok_json("investigate", "--note", "read the logs", "--tool", "grep", "--vector", "know")
    assert inv["round"] == 1 and inv["target_vector"] == "know"
    chk = ok_json("check", input=json.dumps({"know": 0.9, "context": 0.9}))
    assert chk["assessment"]["assessment"]["carried"]
    post = ok_json("postflight", "--vectors", json.dumps(gated(0.9)))
    assert post["calibration"]["classification"] == "underconfident"
    assert post["cascade"]["status"] == "completed"
    listed = ok_json("sessions", "list")
    assert [s["id"] for s in listed] == [boot["session"]["id"]]


@pytest.mark.subprocess
def test_vectors_file_and_human_output(tmp_path):
    run("bootstrap")
    path = tmp_path / "v.json"
    path.write_text(json.dumps(gated(0.9)))
    result = run("preflight", "a task", "--vectors-file", str(path))
    assert result.exit_code == 0
    assert "PROCEED" in result.stdout and "know" in result.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["--vectors", '{"know": 1.5}'], None, "outside"),
        (["--vectors", "{not json"], None, "not valid JSON"),
        (["--vectors-file", "/nonexistent/v.json"], None, "not found"),
        ([], '{"know": NaN}', "finite"),
        (["--vectors", json.dumps({**gated(0.8), "wisdom": 0.4})], None, "unknown vector"),
        (["--vectors", json.dumps({"know": 0.5})], None, "needs all 13 vectors"),
    ],
)
def test_bad_scores_exit_1_with_a_named_problem(args, stdin, message):
    run("bootstrap")
    result = run("preflight", "t", *args, "--json", input=stdin)
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert message in error["message"]
    human = run("preflight", "t", *args, input=stdin)
    assert human.exit_code == 1 and message in human.stderr and human.stdout == ""


@pytest.mark.subprocess
def test_workflow_errors_exit_1_and_say_the_fix():
    run("bootstrap")
    result = run("check", "--vectors", '{"know": 0.5}')
    assert result.exit_code == 1
    assert "PREFLIGHT first" in result.stderr and "noetic preflight" in result.stderr
    run("preflight", "t", "--vectors", json.dumps(gated(0.8)))
    run("postflight", "--vectors", json.dumps(gated(0.8)))
    again = run("postflight", "--vectors", json.dumps(gated(0.8)), "--json")
    assert again.exit_code == 1
    assert "already completed" in json.loads(again.stdout)["error"]["message"]


def test_unknown_session_and_no_current_session():
    run("bootstrap", "--ai-id", "someone")
    result = run("state", "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert "agent 'agent' has no current session" in error["message"]
    assert "bootstrap" in error["fix"] and "someone" in error["fix"]
    result = run("state", "--session", "s_missing", "--json")
    assert result.exit_code == 1 and "unknown session" in result.stdout


def test_usage_errors_exit_2():
    assert run("preflight").exit_code == 2
    assert run("bootstrap", "--no-such-flag").exit_code == 2


@pytest.mark.slow
def test_unknown_profile_lists_the_known_ones():
    result = run("bootstrap", "--profile", "paranoid", "--json")
    assert result.exit_code == 1
    assert "balanced" in json.loads(result.stdout)["error"]["fix"]


@pytest.mark.subprocess
def test_export_import_round_trip_through_the_cli(tmp_path):
    run("bootstrap")
    run("preflight", "t", "--vectors", json.dumps(gated(0.8)))
    sid = ok_json("state")["session"]["id"]
    out = tmp_path / "s.json"
    assert run("sessions", "export", sid, "-o", str(out)).exit_code == 0
    other = tmp_path / "other"
    imported = ok_json("sessions", "import", str(out), "--store", str(other))
    assert imported["id"] == sid
    exported = json.loads(run("sessions", "export", sid, "--store", str(other)).stdout)
    assert exported == json.loads(out.read_text())
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert run("sessions", "import", str(bad)).exit_code == 1


@pytest.mark.subprocess
def test_rebuild_and_show(tmp_path):
    run("bootstrap")
    run("preflight", "t", "--vectors", json.dumps(gated(0.8)))
    assert ok_json("rebuild") == {"sessions": 1, "reflex_logs": 1, "temporary_files_removed": 0}
    sid = ok_json("state")["session"]["id"]
    shown = run("sessions", "show", sid[:8])
    assert shown.exit_code == 0 and "PREFLIGHT" in shown.stdout


@pytest.mark.slow
def test_profile_commands(tmp_path):
    names = [p["name"] for p in ok_json("profile", "list")]
    assert "critical_domain" in names
    shown = ok_json("profile", "show", "critical_domain")
    assert shown["tuning"]["foundation_weight"] == 1.5
    target = tmp_path / "cd.yaml"
    assert run("profile", "export", "critical_domain", str(target)).exit_code == 0
    imported = ok_json("profile", "import", str(target), "--name", "strict")
    assert imported["name"] == "strict"
    assert "strict" in [p["name"] for p in ok_json("profile", "list")]
    target.write_text("name: x\ninvestigation:\n  tool_mode: loud\n")
    bad = run("profile", "import", str(target), "--json")
    assert bad.exit_code == 1 and "investigation.tool_mode" in bad.stdout


@pytest.mark.subprocess
def test_demo_runs_in_a_scratch_store(tmp_path):
    result = run("demo")
    assert result.exit_code == 0, result.output
    assert "postflight" in result.stdout and "calibration" in result.stdout
    doc = ok_json("demo")
    assert [a["assessment"]["phase"] for a in doc["assessments"]] == [
        "preflight",
        "check",
        "postflight",
    ]


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and text in (proc / "cmdline").read_bytes().decode(
                errors="replace"
            ):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.subprocess
def test_the_demo_labels_each_file_and_leaves_no_folder_behind(tmp_path, monkeypatch):
    import time

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.delenv(
        "NOETIC_INDEX"
    )  # as a user runs it: finished tasks indexed in the background
    noetic = str(Path(sys.executable).parent / "noetic")
    shown = subprocess.run(
        [noetic, "demo"], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert "(the agent's current session, not a record)" in shown
    assert ".jsonl  (reflex log: one line per assessment)" in shown
    assert "current/" not in next(line for line in shown.splitlines() if "reflex log" in line)
    deadline = time.monotonic() + 60  # whatever the demo started must be done before looking
    while _processes_mentioning(str(scratch)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(scratch.iterdir()) == []


@pytest.mark.subprocess
def test_importing_the_cli_loads_nothing_heavy():
    code = (
        "import sys, noetic.cli; "
        "heavy = [m for m in ('pydantic', 'rich', 'mcp', 'anthropic', 'openai', 'numpy', 'yaml') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.subprocess
def test_goals_generate_list_and_show():
    run("bootstrap", "--profile", "balanced")
    run("preflight", "t", "--vectors", json.dumps(gated(0.8) | {"know": 0.3, "context": 0.5}))
    created = ok_json("goals", "generate")
    assert [g["target_vector"] for g in created] == ["know", "context"]
    assert ok_json("goals", "generate") == []  # no duplicates
    listed = ok_json("goals", "list")
    assert [g["id"] for g in listed] == [g["id"] for g in created]
    assert ok_json("goals", "show", created[0]["id"])["source"] == "threshold"
    assert run("goals", "show", "g_missing").exit_code == 1


@pytest.mark.subprocess
def test_p_success_and_the_review_kind_on_the_command_line():
    ok_json("bootstrap")
    pre = ok_json("preflight", "t", "--vectors", json.dumps(uniform(0.8)), "--p-success", "0.7")
    assert pre["assessment"]["assessment"]["p_success"] == 0.7
    twice = run(
        "check", "--vectors", json.dumps({"vectors": {"know": 0.8}, "p_success": 0.5}),
        "--p-success", "0.6",
    )  # fmt: skip
    assert twice.exit_code == 1 and "p_success given twice" in twice.stderr
    for bad, says in (("1.5", "outside [0, 1]"), ("likely", "must be a number in [0, 1]")):
        refused = run("check", "--vectors", '{"know": 0.8}', "--p-success", bad)
        assert refused.exit_code == 1 and says in refused.stderr, refused.stderr
    alone = run("check", "--p-success", "0.5")
    assert alone.exit_code == 1 and "none were given" in alone.stderr
    prompt = run("postflight", "--review", "adversarial")
    assert prompt.exit_code == 0 and "find bugs" in prompt.stdout
    bad_kind = run("postflight", "--review", "harsh", "--vectors", json.dumps(uniform(0.8)))
    assert bad_kind.exit_code == 1 and "unknown review kind 'harsh'" in bad_kind.stderr
    post = ok_json(
        "postflight", "--review", "adversarial", "--vectors", json.dumps(uniform(0.8)),
        "--p-success", "0.3",
    )  # fmt: skip
    assert post["assessment"]["assessment"]["review"] == "adversarial"
    assert post["assessment"]["assessment"]["p_success"] == 0.3
