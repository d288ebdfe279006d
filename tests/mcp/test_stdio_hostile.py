"""`noetic mcp` over a real stdio pipe: a request the SDK cannot read — a lone surrogate escape,
a raw NUL, 100,000 levels of nesting, a line that is not JSON — is answered with a JSON-RPC
error carrying its id, and the server goes on answering."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.mcp.stdio import request_id

from ._client import INITIALIZE, stdio_env

NOETIC = str(Path(sys.executable).with_name("noetic"))


def _call(rid: int, arguments: str) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":'
    body = f'{{"name":"get_epistemic_state","arguments":{arguments}}}}}'
    return (head + body).encode()


HOSTILE = [
    (2, _call(2, '{"session_id":"\\ud800"}'), -32600, "lone surrogate"),
    (3, _call(3, '{"session_id":"a\x00b"}'), -32700, "raw NUL"),
    (4, _call(4, '{"x":' + "[" * 100_000 + "]" * 100_000 + "}"), -32600, "nested too deeply"),
    (5, b'{"jsonrpc":"2.0","id":5,"method":"ping"', -32700, "Parse error"),
]


@pytest.mark.slow
@pytest.mark.subprocess
def test_every_unreadable_request_gets_an_error_with_its_id(tmp_path):
    answers: list[dict] = []
    with subprocess.Popen(
        [NOETIC, "mcp", "--store", str(tmp_path / "s")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=stdio_env(),
    ) as proc:
        _converse(proc, answers)
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "noetic"
    for rid, _, code, words in HOSTILE:
        assert rid in by_id, f"request {rid} got no answer: {answers}"
        assert by_id[rid]["error"]["code"] == code
        assert words in by_id[rid]["error"]["message"]
    assert by_id[9] == {"jsonrpc": "2.0", "id": 9, "result": {}}  # and it goes on


def _converse(proc: subprocess.Popen, answers: list[dict]) -> None:

    def converse() -> None:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for _, line, _, _ in HOSTILE:
            proc.stdin.write(line + b"\n")
        proc.stdin.write(b'{"jsonrpc":"2.0","id":9,"method":"ping"}\n')
        proc.stdin.flush()
        while len(answers) < len(HOSTILE) + 2 and (line := proc.stdout.readline()):
            answers.append(json.loads(line))

    talker = threading.Thread(target=converse, daemon=True)
    talker.start()
    talker.join(timeout=60)
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    finally:
        proc.kill()


@given(
    st.one_of(st.integers(-(10**12), 10**12), st.text(max_size=20)),
    st.recursive(
        st.one_of(st.none(), st.integers(), st.text(max_size=5)),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=10,
    ),
)
def test_the_id_is_found_by_a_linear_scan_wherever_it_sits(rid, params):
    for message in (
        {"jsonrpc": "2.0", "params": {"id": "inner", "p": params}, "id": rid},
        {"id": rid, "jsonrpc": "2.0", "method": "m", "params": params},
    ):
        assert request_id(json.dumps(message)) == rid
    assert request_id(json.dumps({"jsonrpc": "2.0", "params": {"id": 7}})) is None
