"""`noetic run -- CMD` and `noetic outcome --from-junit FILE`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.calibration import list_outcomes as outcomes
from noetic.errors import ValidationError
from noetic.hosts.testing.junit import read_junit
from noetic.store import Store

from ..conftest import uniform
from .conftest import cli, cli_json

NOETIC = str(Path(sys.executable).parent / "noetic")


def noetic(*args: str, env_home: Path, cwd: Path, input: str | None = None):
    env = {**os.environ, "NOETIC_HOME": str(env_home)}
    env.pop("NOETIC_SESSION", None)
    return subprocess.run(
        [NOETIC, *args], capture_output=True, text=True, env=env, cwd=cwd, input=input, timeout=120
    )


@pytest.fixture
def task(project, _isolated_home) -> str:
    cli_json("bootstrap")
    pre = cli_json("preflight", "make the tests pass", "--vectors", json.dumps(uniform(0.8)))
    return pre["cascade"]["id"]


def recorded(home: Path) -> list:
    with Store(home) as store:
        return outcomes(store)


@pytest.mark.subprocess
def test_run_streams_output_records_success_and_exits_zero(project, _isolated_home, task):
    done = noetic(
        "run", "--", sys.executable, "-c", "print('all 4 passed')",
        env_home=_isolated_home, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stdout == "all 4 passed\n"
    assert f"recorded for task {task}" in done.stderr
    [row] = recorded(_isolated_home)
    assert row.score == 1.0 and row.source == "test" and row.cascade_id == task
    assert (
        row.evidence
        == f"`{sys.executable} -c 'print('\"'\"'all 4 passed'\"'\"')'` exited 0 (noetic run)"
    )


@pytest.mark.subprocess
def test_run_gives_the_command_the_users_environment(project, _isolated_home, monkeypatch):
    # Noetic tells pydantic it uses no plugin, for itself: the user's command is not told
    # so, and a value the user set is theirs
    show = [sys.executable, "-c", "import os; print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'))"]
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    done = noetic("run", "--", *show, env_home=_isolated_home, cwd=project)
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    done = noetic("run", "--", *show, env_home=_isolated_home, cwd=project)
    assert (done.returncode, done.stdout) == (0, "logfire\n"), done.stderr


@pytest.mark.subprocess
def test_run_records_a_failure_and_exits_with_the_commands_status(project, _isolated_home, task):
    done = noetic(
        "run", "--", sys.executable, "-c", "import sys; print('boom'); sys.exit(3)",
        env_home=_isolated_home, cwd=project,
    )  # fmt: skip
    assert done.returncode == 3 and done.stdout == "boom\n"
    [row] = recorded(_isolated_home)
    assert row.score == 0.0 and "exited 3" in row.evidence


@pytest.mark.subprocess
def test_run_json_keeps_stdout_for_the_document(project, _isolated_home, task):
    done = noetic(
        "run", "--json", "--", sys.executable, "-c", "print('out')",
        env_home=_isolated_home, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == 0 and doc["outcome"]["cascade_id"] == task
    assert doc["not_recorded"] is None
    assert "out" in done.stderr


@pytest.mark.subprocess
def test_a_missing_command_is_127_and_records_nothing(project, _isolated_home, task):
    done = noetic("run", "--", "no-such-command-xyz", env_home=_isolated_home, cwd=project)
    assert done.returncode == 127
    assert "command not found: no-such-command-xyz" in done.stderr
    assert recorded(_isolated_home) == []


@pytest.mark.subprocess
def test_a_file_that_is_not_executable_is_126(project, _isolated_home, task):
    script = project / "script.sh"
    script.write_text("echo hi\n")
    done = noetic("run", "--", str(script), env_home=_isolated_home, cwd=project)
    assert done.returncode == 126 and "cannot run" in done.stderr


@pytest.mark.subprocess
def test_without_an_open_task_the_status_stands_and_nothing_is_recorded(project, _isolated_home):
    cli_json("bootstrap")
    done = noetic("run", "--", "false", env_home=_isolated_home, cwd=project)
    assert done.returncode == 1
    assert "not recorded" in done.stderr and "no open task" in done.stderr
    assert recorded(_isolated_home) == []


@pytest.mark.subprocess
def test_without_a_store_the_command_still_runs(project, _isolated_home):
    done = noetic("run", "--", "true", env_home=_isolated_home, cwd=project)
    assert done.returncode == 0 and "not recorded" in done.stderr
    assert not _isolated_home.exists()


HAND_WRITTEN = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="api" tests="4">
    <testcase classname="api.users" name="test_create"/>
    <testcase classname="api.users" name="test_delete"><skipped message="later"/></testcase>
    <testcase classname="api.users" name="test_update">
      <failure message="500">trace</failure>
    </testcase>
    <testcase classname="api.auth" name="test_login"><error message="timeout"/></testcase>
  </testsuite>
  <testsuite name="ui"><testcase name="test_render"/></testsuite>
</testsuites>
"""


@pytest.mark.subprocess
def test_a_hand_written_report_counts_skipped_and_errored_cases(
    project, _isolated_home, task, tmp_path
):
    report = tmp_path / "report.xml"
    report.write_text(HAND_WRITTEN)
    row = cli_json("outcome", "--from-junit", str(report))
    assert row["score"] == 0.0 and row["source"] == "test" and row["cascade_id"] == task
    assert row["evidence"] == (
        "JUnit report.xml: 2 passed, 1 failed, 1 errored, 1 skipped; "
        "failing: api.users.test_update, api.auth.test_login"
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_pytests_own_report_of_a_passing_run_is_a_success(project, _isolated_home, task, tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_x.py").write_text(
        "import pytest\n\ndef test_a():\n    assert True\n\n"
        # as real suites skip most often: an optional dependency that is not installed
        "def test_b():\n    pytest.importorskip('noetic_optional_dependency_absent')\n"
    )
    report = tmp_path / "pytest.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "suite"),
         f"--junitxml={report}"],
        capture_output=True, cwd=tmp_path, check=True, timeout=120,
    )  # fmt: skip
    row = cli_json("outcome", "--from-junit", str(report))
    assert row["score"] == 1.0
    assert row["evidence"] == "JUnit pytest.xml: 1 passed, 0 failed, 0 errored, 1 skipped"


@pytest.mark.slow
@pytest.mark.subprocess
def test_pytests_report_of_a_failing_run_is_a_failure(project, _isolated_home, task, tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_y.py").write_text("def test_bad():\n    assert 1 == 2\n")
    report = tmp_path / "pytest.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "suite"),
         f"--junitxml={report}"],
        capture_output=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    row = cli_json("outcome", "--from-junit", str(report))
    assert row["score"] == 0.0 and "test_y.test_bad" in row["evidence"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("<testsuites><testsuite>", "report.xml:1:"),
        ("<html><body/></html>", "not a JUnit report"),
        ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuites/>', "DTD"),
        ('<testsuite><testcase name="a"><skipped/></testcase></testsuite>', "no test ran"),
        ("<testsuites/>", "no test ran"),
    ],
)
@pytest.mark.subprocess
def test_bad_reports_are_refused_and_record_nothing(
    project, _isolated_home, task, tmp_path, content, message
):
    report = tmp_path / "report.xml"
    report.write_text(content)
    result = cli_json("outcome", "--from-junit", str(report), code=1)
    assert message in result["error"]["message"]
    assert recorded(_isolated_home) == []


@pytest.mark.subprocess
def test_from_junit_and_a_verdict_are_not_both_given(project, _isolated_home, task, tmp_path):
    report = tmp_path / "report.xml"
    report.write_text(HAND_WRITTEN)
    result = cli_json("outcome", "--from-junit", str(report), "--success", code=1)
    assert "--from-junit" in result["error"]["message"]
    assert cli_json("outcome", "--from-junit", str(tmp_path / "nope.xml"), code=1)


@given(st.binary(max_size=300))
def test_the_reader_never_fails_unexpectedly_on_any_bytes(data):
    try:
        summary = read_junit(data, "fuzz.xml")
    except ValidationError as exc:
        assert "fuzz.xml" in exc.message
    else:
        assert summary.tests == summary.passed + summary.failed + summary.errored + summary.skipped


@pytest.mark.subprocess
def test_run_without_a_command_is_a_malformed_command_line(project):
    assert cli("run").exit_code == 2


@pytest.mark.subprocess
def test_run_records_no_outcome_for_a_pytest_usage_error(project, _isolated_home, task):
    """pytest's 4 (a usage error) says nothing about the work: the pass recorded first stands."""
    (project / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    passed = noetic(
        "run", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_ok.py",
        env_home=_isolated_home, cwd=project,
    )  # fmt: skip
    assert passed.returncode == 0, passed.stderr
    mistyped = noetic(
        "run", "--json", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/nonexist.py", env_home=_isolated_home, cwd=project,
    )  # fmt: skip
    assert mistyped.returncode == 4
    data = json.loads(mistyped.stdout)
    assert data["outcome"] is None
    assert data["not_recorded"] == (
        "not an outcome: pytest exit 4 means a usage error (bad option or path)"
    )
    assert [r.score for r in recorded(_isolated_home)] == [1.0]


ENTITY_REPORT = """<?xml version="1.0" encoding="{encoding}"?>
<!DOCTYPE testsuites [<!ENTITY leak "EXPANDED-SECRET">]>
<testsuites><testsuite name="s"><testcase classname="a" name="&leak;"><failure/></testcase>
</testsuite></testsuites>
"""


@pytest.mark.parametrize(
    ("codec", "declared"),
    [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-8", "UTF-8")],
)
@pytest.mark.subprocess
def test_an_entity_is_refused_in_any_encoding_the_parser_reads(
    project, _isolated_home, task, tmp_path, codec, declared
):
    report = tmp_path / "report.xml"
    text = ENTITY_REPORT.format(encoding=declared)
    bom = "" if codec in ("utf-16", "utf-8") else "\ufeff"  # the utf-16 codec writes its own
    report.write_bytes((bom + text).encode(codec))
    assert b"<!ENTITY" not in report.read_bytes() or codec == "utf-8"
    result = cli_json("outcome", "--from-junit", str(report), code=1)
    message = result["error"]["message"]
    assert "declares a DTD or entities" in message and "EXPANDED-SECRET" not in message
    assert recorded(_isolated_home) == []


@pytest.mark.subprocess
def test_a_report_over_the_file_limit_says_what_it_is(project, _isolated_home, task, tmp_path):
    report = tmp_path / "huge.xml"
    with report.open("wb") as fh:
        fh.write(b"<testsuites>")
        fh.truncate(17 * 1024 * 1024)
    message = cli_json("outcome", "--from-junit", str(report), code=1)["error"]["message"]
    assert f"the JUnit report {report} is 17,825,792 bytes, over the file_bytes limit" in message
    assert "settings file" not in message
