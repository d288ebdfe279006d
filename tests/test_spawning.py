"""A child run without :mod:`subprocess` answers as ``subprocess.run`` does: its output, its
exit code, its input, its timeout, and what it inherits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic import spawning

pytestmark = pytest.mark.subprocess


def _both(argv: list[str], stdin: str | None) -> tuple[tuple[int, str], tuple[int, str]]:
    done = subprocess.run(argv, capture_output=True, text=True, input=stdin, timeout=20)
    return spawning.run_text(argv, stdin=stdin, timeout=20), (done.returncode, done.stdout)


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\0")),
       st.integers(0, 3))  # fmt: skip
def test_the_output_and_exit_code_are_subprocesses(text: str, code: int) -> None:
    # the input echoed back (newlines translated as text=True does), on stderr too, and the
    # exit code
    script = f"import sys; d = sys.stdin.read(); print(d, end=''); print(d, file=sys.stderr); sys.exit({code})"  # noqa: E501
    ours, theirs = _both([sys.executable, "-c", script], text)
    assert ours == theirs


def test_a_large_input_and_output_do_not_block() -> None:
    # more than a pipe holds, both ways at once
    big = "x" * 300_000 + "\n"
    script = "import sys; sys.stdout.write(sys.stdin.read() * 2)"
    assert spawning.run_text([sys.executable, "-c", script], stdin=big, timeout=20) == (0, big * 2)


def test_no_input_is_an_input_at_its_end() -> None:
    script = "import sys; print(repr(sys.stdin.read()))"
    assert spawning.run_text([sys.executable, "-c", script], stdin=None, timeout=20) == (0, "''\n")


def test_a_missing_program_cannot_start() -> None:
    with pytest.raises(FileNotFoundError):
        spawning.run_text(["noetic-no-such-program"], stdin=None, timeout=5)


def test_a_child_past_its_timeout_is_killed_and_reaped(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    )
    started = time.monotonic()
    with pytest.raises(spawning.Expired):
        spawning.run_text([sys.executable, "-c", script], stdin=None, timeout=1.0)
    assert time.monotonic() - started < 10
    pid = int(pid_file.read_text())
    with pytest.raises(ChildProcessError):  # reaped: no zombie left
        os.waitpid(pid, os.WNOHANG)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_child_inherits_no_descriptor_but_its_three_and_ignores_no_signal_we_do() -> None:
    # subprocess closes inheritable descriptors above 2 and restores SIGPIPE's and SIGXFSZ's
    # defaults (Python ignores them): the signals a child ignores are the same as there
    keep_r, keep_w = os.pipe()
    os.set_inheritable(keep_w, True)
    try:
        argv = ["/bin/sh", "-c", "ls /proc/self/fd; grep SigIgn /proc/self/status"]
        ours, theirs = _both(argv, None)
        code, out = ours
    finally:
        os.close(keep_r)
        os.close(keep_w)
    assert code == 0
    *fds, ignored = out.splitlines()
    assert str(keep_w) not in fds
    # glibc's posix_spawn leaves its own two signals (32 and 33, never a program's) ignored;
    # subprocess uses posix_spawn too where it can, with the same result
    internal = (1 << 31) | (1 << 32)
    mask = int(ignored.split()[1], 16) & ~internal
    assert mask == int(theirs[1].splitlines()[-1].split()[1], 16) & ~internal
    assert mask & (1 << (13 - 1)) == 0  # SIGPIPE is not ignored


def test_a_detached_child_has_its_own_session_and_no_output(tmp_path: Path) -> None:
    out = tmp_path / "seen"
    script = (
        "import os, sys; "
        f"open({str(out)!r}, 'w').write(f'{{os.getsid(0) == os.getpid()}} {{sys.stdin.read()!r}}')"
    )
    spawning.detached([sys.executable, "-c", script], timeout=20)
    assert out.read_text() == "True ''"


def test_a_started_child_runs_on_in_its_own_session_while_the_caller_goes_on(
    tmp_path: Path,
) -> None:
    # for a command that ends as it answers: the call does not wait for the child
    gate, out = tmp_path / "go", tmp_path / "seen"
    script = (
        "import os, sys, time\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
        f"open({str(out)!r}, 'w').write(f'{{os.getsid(0) == os.getpid()}} {{sys.stdin.read()!r}}')"
    )
    pid = spawning.started([sys.executable, "-c", script])
    assert pid is not None
    assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still running: the call did not wait
    gate.touch()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert out.read_text() == "True ''"


def test_a_detached_child_past_its_timeout_is_killed() -> None:
    started = time.monotonic()
    with pytest.raises(spawning.Expired):
        spawning.detached([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1.0)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("stdin", [None, "a\r\nb\n", "é" * 70_000])
def test_where_pidfds_are_missing_subprocess_answers_the_same(
    stdin: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = "import sys; d = sys.stdin.read(); print(len(d), d[:5], end=''); sys.exit(3)"
    ours = spawning.run_text([sys.executable, "-c", script], stdin=stdin, timeout=20)
    monkeypatch.setattr(spawning, "_FALLBACK", True)
    assert spawning.run_text([sys.executable, "-c", script], stdin=stdin, timeout=20) == ours
    with pytest.raises(spawning.Expired):
        spawning.detached([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)


def test_a_child_whose_wait_is_interrupted_is_killed_and_reaped(tmp_path: Path) -> None:
    # as subprocess.run does when Ctrl-C (or any error) ends the wait
    import signal

    class Interrupted(Exception):
        pass

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    pid_file = tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    )
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(Interrupted):
            spawning.run_text([sys.executable, "-c", script], stdin=None, timeout=20)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_running_child_answers_when_asked_as_run_text_does_after_the_caller_went_on() -> None:
    # the input beyond what the pipe takes at once is written while the result is awaited
    big = "y" * 200_000 + "\n"
    script = "import sys; d = sys.stdin.read(); sys.stdout.write(d[::-1]); sys.exit(2)"
    child = spawning.Running([sys.executable, "-c", script], stdin=big, timeout=20)
    time.sleep(0.2)  # the caller's own work
    assert child.result() == spawning.run_text([sys.executable, "-c", script], stdin=big,
                                               timeout=20)  # fmt: skip
    assert child.result() == (2, big[::-1].replace("\r", "\n"))  # asked again: the same answer


def test_an_abandoned_child_is_killed_and_reaped(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    )
    child = spawning.Running([sys.executable, "-c", script], stdin="x", timeout=20)
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.05)
    child.abandon()
    pid = int(pid_file.read_text())
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    child.abandon()  # twice: nothing left to do
