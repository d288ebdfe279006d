"""Idempotency keys: a write retried with the same request id is applied once, through the CLI
and through the real MCP client, and the retry gets the first answer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.cli import app
from noetic.store import Store
from noetic.store.migrations import MIGRATIONS

from ..conftest import uniform
from ..mcp._client import call, err, ok

SCORES = json.dumps(uniform(0.8))
NOETIC = [sys.executable, "-c", "from noetic.cli import main; main()"]


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def rows(home, table: str) -> int:
    with Store(home) as store:
        return store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_the_migration_is_m016() -> None:
    assert "m016_requests" in [fn.__name__ for fn in MIGRATIONS]


@pytest.mark.subprocess
def test_a_retried_cli_write_is_applied_once_and_answered_the_same(_isolated_home):
    first_boot = cli("bootstrap", "--request-id", "boot-1", "--json")
    again_boot = cli("bootstrap", "--request-id", "boot-1", "--json")
    assert first_boot.exit_code == again_boot.exit_code == 0
    assert json.loads(first_boot.stdout) == json.loads(again_boot.stdout)
    assert rows(_isolated_home, "sessions") == 1
    assert "was already applied" in again_boot.stderr
    pre = ("preflight", "fix it", "--vectors", SCORES, "--request-id", "pre-1", "--json")
    assert json.loads(cli(*pre).stdout) == json.loads(cli(*pre).stdout)
    check = ("check", "--vectors", SCORES, "--request-id", "chk-1", "--json")
    answers = [cli(*check) for _ in range(6)]  # six retries of one request
    assert {a.exit_code for a in answers} == {0}
    assert len({a.stdout for a in answers}) == 1
    assert rows(_isolated_home, "assessments") == 2  # the preflight and one check
    note = ("investigate", "--note", "read the log", "--request-id", "inv-1", "--json")
    assert cli(*note).exit_code == cli(*note).exit_code == 0
    assert rows(_isolated_home, "investigations") == 1
    human = cli("check", "--vectors", SCORES, "--request-id", "chk-1")
    assert human.exit_code == 0 and "request chk-1 (check) was already applied" in human.stdout
    plain = cli("check", "--vectors", SCORES, "--json")  # no key: applied each time
    assert plain.exit_code == 0 and rows(_isolated_home, "assessments") == 3
    verdict = ("outcome", "--success", "--evidence", "tests pass", "--request-id", "o-1", "--json")
    assert json.loads(cli(*verdict).stdout) == json.loads(cli(*verdict).stdout)
    assert rows(_isolated_home, "outcomes") == 1


@pytest.mark.subprocess
def test_one_id_names_one_request(_isolated_home):
    cli("bootstrap")
    cli("preflight", "fix it", "--vectors", SCORES)
    assert cli("check", "--vectors", SCORES, "--request-id", "r", "--json").exit_code == 0
    other = cli("check", "--vectors", json.dumps(uniform(0.6)), "--request-id", "r", "--json")
    assert other.exit_code == 1
    message = json.loads(other.stdout)["error"]["message"]
    assert "request id 'r' was already used for another request (check at" in message
    elsewhere = cli("investigate", "--note", "x", "--request-id", "r", "--json")
    assert elsewhere.exit_code == 1 and rows(_isolated_home, "investigations") == 0
    blank = cli("check", "--vectors", SCORES, "--request-id", " ", "--json")
    assert blank.exit_code == 1 and "request_id" in blank.stdout


@pytest.mark.subprocess
def test_a_prompt_without_scores_records_no_request(_isolated_home):
    cli("bootstrap")
    prompt = cli("preflight", "fix it", "--request-id", "p", "--json")
    assert prompt.exit_code == 0 and "prompt" in json.loads(prompt.stdout)
    done = cli("preflight", "fix it", "--request-id", "p2", "--vectors", SCORES, "--json")
    assert done.exit_code == 0 and rows(_isolated_home, "requests") == 1


@pytest.mark.subprocess
def test_concurrent_calls_with_one_id_apply_it_once(_isolated_home):
    cli("bootstrap")
    cli("preflight", "fix it", "--vectors", SCORES)
    command = [*NOETIC, "check", "--vectors", SCORES, "--request-id", "same", "--json"]
    procs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    results = [(p.wait(60), *p.communicate()) for p in procs]
    assert rows(_isolated_home, "assessments") == 2
    for code, out, _ in results:  # each got the answer, or was told the other call applied it
        assert code == 0 or "applied meanwhile by another call" in out, out


@pytest.mark.subprocess
def test_mcp_write_tools_apply_a_request_once(_isolated_home, monkeypatch):
    from noetic.mcp.server import build_server

    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    server = build_server(_isolated_home)
    scores = uniform(0.8)
    results = call(
        server,
        ("bootstrap_session", {"ai_id": "mcp", "request_id": "b"}),
        ("bootstrap_session", {"ai_id": "mcp", "request_id": "b"}),
        ("submit_preflight_assessment", {"vectors": scores, "task": "t", "request_id": "p"}),
        ("submit_preflight_assessment", {"vectors": scores, "task": "t", "request_id": "p"}),
        ("submit_check_assessment", {"vectors": scores, "request_id": "c"}),
        ("submit_check_assessment", {"vectors": scores, "request_id": "c"}),
        ("record_outcome", {"score": 1.0, "evidence": "tests pass", "request_id": "o"}),
        ("record_outcome", {"score": 1.0, "evidence": "tests pass", "request_id": "o"}),
        ("submit_postflight_assessment", {"vectors": scores, "request_id": "f"}),
        ("submit_postflight_assessment", {"vectors": scores, "request_id": "f"}),
        ("submit_check_assessment", {"vectors": uniform(0.5), "request_id": "c"}),
    )
    for first, again in zip(results[0:10:2], results[1:10:2], strict=True):
        assert ok(first) == ok(again)
    assert "already used for another request" in err(results[10])
    assert rows(_isolated_home, "sessions") == 1
    assert rows(_isolated_home, "assessments") == 3
    assert rows(_isolated_home, "outcomes") == 1


@pytest.mark.subprocess
def test_one_request_sent_through_the_cli_and_through_mcp_is_applied_once(
    _isolated_home, monkeypatch
):
    """The operation records the request as it reads it, so a retry through the other
    interface is answered with the first call's result, not refused nor applied again."""
    from noetic.mcp.server import build_server

    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    sid = json.loads(cli("bootstrap", "--json").stdout)["session"]["id"]
    cli("preflight", "fix it", "--vectors", SCORES)
    checked, recorded = call(
        build_server(_isolated_home),
        ("submit_check_assessment", {"vectors": {"know": 0.7}, "session_id": sid,
                                     "request_id": "x"}),
        ("record_outcome", {"score": 1.0, "evidence": "tests pass", "task_id": sid,
                            "request_id": "o"}),
    )  # fmt: skip
    again = cli("check", "--vectors", '{"know": 0.7}', "--request-id", "x", "--json")
    assert again.exit_code == 0 and "request x (check) was already applied" in again.stderr
    doc = json.loads(again.stdout)
    assert doc["assessment"]["seq"] == ok(checked)["seq"] == 2
    assert doc["decision"] == ok(checked)["decision"]
    verdict = ("outcome", sid, "--success", "--source", "check", "--evidence", "tests pass")
    told = cli(*verdict, "--request-id", "o", "--json")
    assert told.exit_code == 0 and "request o (outcome) was already applied" in told.stderr
    assert json.loads(told.stdout)["id"] == ok(recorded)["id"]
    done = cli("postflight", "--vectors", SCORES, "--request-id", "f", "--json")
    assert done.exit_code == 0
    (replayed,) = call(
        build_server(_isolated_home),
        ("submit_postflight_assessment", {"vectors": uniform(0.8), "session_id": sid,
                                          "request_id": "f"}),
    )  # fmt: skip
    assert ok(replayed)["seq"] == json.loads(done.stdout)["assessment"]["seq"] == 3
    assert rows(_isolated_home, "assessments") == 3
    assert rows(_isolated_home, "outcomes") == 1
    assert rows(_isolated_home, "requests") == 3


@pytest.mark.subprocess
def test_a_retry_after_the_answer_was_lost_says_the_write_is_applied(_isolated_home):
    """What a process ending between its write and keeping its answer leaves (two
    transactions on PostgreSQL): the CLI prints what happened and exits 0, the MCP tool is an
    error saying so; neither writes again."""
    from noetic.mcp.server import build_server

    sid = json.loads(cli("bootstrap", "--json").stdout)["session"]["id"]
    cli("preflight", "fix it", "--vectors", SCORES)
    assert cli("check", "--vectors", SCORES, "--request-id", "c", "--json").exit_code == 0
    with Store(_isolated_home) as store, store.transaction() as c:
        c.execute("UPDATE requests SET response = NULL WHERE id = 'c'")
    again = cli("check", "--vectors", SCORES, "--request-id", "c", "--json")
    assert again.exit_code == 0
    doc = json.loads(again.stdout)
    assert doc["replayed"]["request_id"] == "c" and doc["replayed"]["response"] is None
    assert "(its response was not kept)" in doc["note"]
    human = cli("check", "--vectors", SCORES, "--request-id", "c")
    assert human.exit_code == 0 and "was already applied" in human.stdout
    (tool,) = call(
        build_server(_isolated_home),
        ("submit_check_assessment", {"vectors": uniform(0.8), "session_id": sid,
                                     "request_id": "c"}),
    )  # fmt: skip
    assert "was already applied" in err(tool) and "its response was not kept" in err(tool)
    assert rows(_isolated_home, "assessments") == 2


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=40,
)


@given(JSON, st.integers(min_value=0, max_value=3000))
def test_a_kept_answer_reads_back_as_it_was_given(response, padding):
    """Short or long (compressed), every JSON document is read back whole."""
    from noetic.store.requests import packed, unpacked

    document = {"answer": response, "pad": "x" * padding}
    assert unpacked(packed(document)) == document
    assert unpacked(packed(response)) == response


def test_a_long_answer_is_kept_small(_isolated_home):
    """An answer repeating a long task's text costs the write little room (it is written in
    the write's transaction)."""
    cli("bootstrap")
    cli("preflight", "t" * 60_000, "--vectors", SCORES)
    first = cli("check", "--vectors", SCORES, "--request-id", "long", "--json")
    with Store(_isolated_home) as store:
        kept = store.conn.execute("SELECT response FROM requests").fetchone()[0]
    assert len(first.stdout) > 60_000 and len(kept) < 6_000
    again = cli("check", "--vectors", SCORES, "--request-id", "long", "--json")
    assert again.stdout == first.stdout
