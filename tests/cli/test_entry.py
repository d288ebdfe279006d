"""``noetic`` as a program ends without tearing the interpreter down when nothing else is left,
and as the interpreter always ended otherwise: what the command wrote is written, its exit
code kept, the ``atexit`` handlers run, a thread still running waited for, a file still open
flushed by the interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

# a command stood in for by `body` (run as noetic.cli.main), then noetic.cli.entry as the
# console script calls it; `marker` is written by an object's __del__ at the interpreter's
# teardown, and only then
SCRIPT = """
import atexit, sys, threading, time
import noetic.cli
marker, out = sys.argv[1], sys.argv[2]

class TornDown:
    def __del__(self, open=open, marker=marker):  # the module's names are gone by then
        with open(marker, "w") as f:
            f.write("torn down")

kept = TornDown()
atexit.register(lambda: open(out + ".atexit", "w").write("ran"))

def body():
{body}

noetic.cli.main = body
sys.exit(noetic.cli.entry())
"""


def run(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    marker, out = tmp_path / "marker", tmp_path / "out"
    script = SCRIPT.format(body="\n".join("    " + line for line in body.splitlines()))
    done = subprocess.run([sys.executable, "-c", script, str(marker), str(out)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return done, marker, out


def test_a_finished_command_ends_without_the_teardown(tmp_path: Path) -> None:
    done, marker, out = run(tmp_path, "print('answer', end='')\nsys.stderr.write('note')")
    assert (done.returncode, done.stdout, done.stderr) == (0, "answer", "note")
    assert Path(f"{out}.atexit").read_text() == "ran"  # the atexit handlers ran
    assert not marker.exists()  # and the objects were left to the system


@pytest.mark.parametrize("code", [0, 1, 2, 120])
def test_its_exit_code_is_kept(tmp_path: Path, code: int) -> None:
    done, marker, _ = run(tmp_path, f"print('x')\nraise SystemExit({code})")
    assert (done.returncode, done.stdout) == (code, "x\n")
    assert not marker.exists()


def test_an_exit_with_a_message_is_the_interpreters(tmp_path: Path) -> None:
    done, marker, _ = run(tmp_path, "raise SystemExit('refused')")
    assert (done.returncode, done.stderr) == (1, "refused\n")
    assert marker.read_text() == "torn down"


def test_a_file_left_open_is_flushed_by_the_interpreter(tmp_path: Path) -> None:
    body = f"global left\nleft = open({str(tmp_path / 'left')!r}, 'w')\nleft.write('kept')"
    done, marker, _ = run(tmp_path, body)
    assert done.returncode == 0
    assert (tmp_path / "left").read_text() == "kept"
    assert marker.read_text() == "torn down"


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    late = tmp_path / "late"
    body = (
        f"threading.Thread(target=lambda: (time.sleep(0.3), open({str(late)!r}, 'w')"
        ".write('done'))).start()"
    )
    done, marker, _ = run(tmp_path, body)
    assert done.returncode == 0 and late.read_text() == "done"
    assert marker.read_text() == "torn down"


def test_the_program_answers_as_main_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the real program, through `python -m noetic`: a refused input, then a session
    monkeypatch.setenv("NOETIC_HOME", str(tmp_path / "store"))
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("NOETIC_SESSION", "NOETIC_AI_ID"):
        monkeypatch.delenv(name, raising=False)
    opened = subprocess.run([sys.executable, "-m", "noetic", "bootstrap", "--json"],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert opened.returncode == 0, opened.stderr
    sid = json.loads(opened.stdout)["session"]["id"]
    bad = [sys.executable, "-m", "noetic", "preflight", "t", "--vectors", "{bad", "--json"]
    refused = subprocess.run(bad, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["type"] == "ValidationError"
    # what the store's close wrote (the session's document) is there once the program ended
    assert (tmp_path / "store" / "sessions" / f"{sid}.json").is_file()


def test_a_fast_path_command_runs_without_the_cyclic_collector_and_typers_with_it(
    tmp_path: Path,
) -> None:
    done, _, _ = run(tmp_path, "import gc\nprint(gc.isenabled())")
    assert done.stdout == "False\n"
    # typer's commands (servers, long runs among them) have it back
    body = (
        "import gc, noetic.cli.application as a\n"
        "a.build = lambda command=None: (lambda: print(gc.isenabled()))\n"
        "noetic.cli._typer('serve')"
    )
    done, _, _ = run(tmp_path, body)
    assert done.stdout == "True\n"
