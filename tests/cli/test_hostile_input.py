"""Hostile and careless input to the CLI: each case exits 1 with an error naming the problem,
never a traceback, and nothing half-written is left in the store."""

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.store import Store

from ..conftest import uniform

NOETIC = [sys.executable, "-c", "from noetic.cli import main; main()"]


def noetic(*args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NOETIC, *args], input=stdin, capture_output=True, check=False, env=os.environ
    )


def refused(result, *words: str) -> str:
    out = result.stdout.decode() + result.stderr.decode()
    assert result.returncode == 1, out
    assert "Traceback" not in out
    for word in words:
        assert word in out, out
    return out


@pytest.fixture
def session():
    assert noetic("bootstrap").returncode == 0


@pytest.mark.subprocess
def test_a_5001_digit_number_names_the_number_limit(session):
    vectors = json.dumps(uniform(0.7)).replace("0.7", "7" * 5001, 1)
    refused(noetic("preflight", "t", "--vectors", vectors), "number_chars")


@pytest.mark.subprocess
def test_deeply_nested_json_on_stdin_names_the_depth_limit(session):
    deep = b'{"vectors": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    refused(noetic("check", stdin=deep), "json_depth")


@pytest.mark.subprocess
def test_invalid_utf8_in_a_note_on_stdin_is_refused_with_its_offset(session, _isolated_home):
    doc = json.dumps({"vectors": {"know": 0.9}, "note": "ok NOTE"}).encode()
    doc = doc.replace(b"NOTE", b"\xff\xfe")
    offset = doc.index(b"\xff")
    refused(noetic("check", stdin=doc), "not valid UTF-8", f"offset {offset}")
    with Store(_isolated_home) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0] == 0


@pytest.mark.subprocess
def test_a_vectors_file_with_an_invalid_byte_is_refused_with_its_offset(session, tmp_path):
    path = tmp_path / "v.json"
    path.write_bytes(b'{"know": 0.9, "x\xff": 1}')
    refused(noetic("check", "--vectors-file", str(path)), "byte 0xff at offset 16")


@pytest.mark.subprocess
def test_an_argument_that_is_not_utf8_is_refused(session):
    result = noetic("investigate", "--note", b"found \xff", "--json")
    refused(result, "not valid UTF-8", "argument 3")
    assert json.loads(result.stdout)["error"]["type"] == "ValidationError"


@pytest.mark.subprocess
def test_stdin_over_its_limit_is_refused_before_parsing(session):
    big = b'{"know": 0.9, "pad": "' + b"x" * (16 * 1024 * 1024) + b'"}'
    refused(noetic("check", stdin=big), "stdin_bytes", "16,777,216")


@pytest.mark.subprocess
def test_duplicate_vectors_differing_in_case_are_named(session):
    refused(noetic("check", "--vectors", '{"know": 0.1, "KNOW": 0.9}'), "'know' and 'KNOW'")


@pytest.mark.parametrize("ai_id", ["a\x00b", "tab\there", "esc\x1b[31m", " ", "x" * 201])
def test_identifiers_with_control_characters_or_blank_are_refused(ai_id):
    result = CliRunner().invoke(app, ["bootstrap", "--ai-id", ai_id, "--json"])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert "ai_id" in error["message"]


@pytest.mark.subprocess
def test_a_text_field_over_its_limit_is_refused(session):
    vectors = json.dumps(uniform(0.7))
    refused(noetic("preflight", "t" * 70_000, "--vectors", vectors), "text_chars", "task")
    assert noetic("preflight", "a task", "--vectors", vectors).returncode == 0
    refused(noetic("investigate", "--note", "n" * 70_000), "text_chars", "note")


@pytest.mark.parametrize(("token", "word"), [(" ", "blank"), ("a b", "a space"), ("\t", "blank")])
def test_serve_refuses_a_token_that_is_blank_or_has_spaces(token, word):
    result = CliRunner().invoke(app, ["serve", "--token", token, "--port", "0"])
    assert result.exit_code == 1
    assert word in result.stderr
