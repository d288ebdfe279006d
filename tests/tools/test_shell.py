"""The shell tool in a real bubblewrap sandbox: what the gate allows, the sandbox still contains."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest

from noetic.errors import UsageError, ValidationError
from noetic.tools import sandbox as sandbox_module
from noetic.tools.shell import ShellResult, ShellRunner, shell_tool
from noetic.tools.shellgate import load_policy


@pytest.fixture(scope="module", autouse=True)
def _bubblewrap_is_here() -> None:
    # `make test` installs bubblewrap; without it these tests fail rather than skip
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed: run `make test`, which installs it")
    found = sandbox_module.detect()
    if found.binary is None:
        pytest.fail(f"bubblewrap cannot create a sandbox on this machine: {found.note}")


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    return workspace, outside, home


def run(runner: ShellRunner, command: str, cwd: str = ".", timeout_s: float | None = None):
    return asyncio.run(runner.run(command, cwd, timeout_s))


def python(workspace: Path, name: str, body: str) -> str:
    (workspace / name).write_text(body)
    return f"{sys.executable} {name}"


@pytest.mark.subprocess
def test_a_plain_command_runs_as_an_argument_vector(places) -> None:
    ws, _, home = places
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    done = run(runner, "cat 'a.txt' b.txt")
    assert (done.exit_code, done.output, done.sandbox) == (0, "alpha\nbeta\n", "bubblewrap")
    assert done.argv == ["cat", "a.txt", "b.txt"]
    assert run(runner, "echo *.txt").output == "a.txt b.txt\n"  # globs expanded, no shell
    assert run(runner, "ls no-such-file").exit_code != 0


@pytest.mark.subprocess
def test_a_compound_line_runs_in_the_sandbox_as_the_gate_parsed_it(places, tmp_path) -> None:
    ws, _, home = places
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("print(1)\n")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    done = run(runner, "cd src && ls")
    assert (done.exit_code, done.output, done.sandbox) == (0, "a.py\n", "bubblewrap")
    assert done.argv[:4] == [shutil.which("bash"), "--noprofile", "--norc", "-c"]
    done = run(runner, "echo a | tr a b && echo done > out.txt")
    assert done.output == "b\n" and (ws / "out.txt").read_text() == "done\n"
    assert "python" in run(runner, "ps aux | grep python").output
    # the shell is handed the words the gate judged: braces and ~ expanded, quoting rebuilt
    done = run(runner, "echo {x,y}z ~ && r\\m -f out.txt")
    assert done.argv[-1] == f"echo xz yz {home} && rm -f out.txt"
    assert done.output == f"xz yz {home}\n" and not (ws / "out.txt").exists()
    # a policy can still refuse every line that needs a shell
    policy_file = tmp_path / "p.yaml"
    policy_file.write_text("shell: null\n")
    strict = ShellRunner(ws, sandbox="required", home=str(home), policy=load_policy(policy_file))
    with pytest.raises(ValidationError, match="needs a shell"):
        run(strict, "cd src && ls")


@pytest.mark.subprocess
def test_interpreter_code_runs_inside_the_sandbox_and_is_refused_without_it(places) -> None:
    ws, _, home = places
    code = "python3 -c 'import os; print(sorted(os.listdir(\".\")))'"
    boxed = ShellRunner(ws, sandbox="required", home=str(home))
    assert boxed.judge(code).allowed
    assert run(boxed, code).exit_code == 0
    bare = ShellRunner(ws, sandbox="off", home=str(home))
    verdict = bare.judge(code)
    assert verdict.rule is None  # os.listdir only reads a folder's names
    escaping = "python3 -c 'import shutil; shutil.rmtree(\"/x\")'"
    assert boxed.judge(escaping).allowed  # the sandbox contains it
    with pytest.raises(ValidationError, match=r"interpreter-code.*imports shutil"):
        run(bare, escaping)


def test_a_refused_command_never_runs(places) -> None:
    ws, outside, home = places
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    with pytest.raises(ValidationError, match="rule write-outside-workspace") as caught:
        run(runner, f"touch {outside}/x")
    assert str(outside / "x") in str(caught.value)
    assert not (outside / "x").exists()


@pytest.mark.subprocess
def test_writing_outside_through_a_path_the_parser_cannot_see_is_stopped(places) -> None:
    ws, outside, home = places
    target = outside / "escaped.txt"
    # the path is assembled at run time: the gate sees only `python3 writer.py`
    hidden = base64.b64encode(str(target).encode())
    body = (
        "import base64, pathlib\n"
        f"p = pathlib.Path(base64.b64decode({hidden!r}).decode())\n"
        "try:\n    p.write_text('x')\n    print('wrote')\n"
        "except OSError as e:\n    print('blocked', e.errno)\n"
    )
    command = python(ws, "writer.py", body)
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert runner.judge(command).allowed  # the gate cannot know
    done = run(runner, command)
    assert done.output.startswith("blocked"), done.output
    assert not target.exists()
    # the control: without the sandbox the same command does escape
    unsandboxed = ShellRunner(ws, sandbox="off", home=str(home))
    assert run(unsandboxed, command).output.startswith("wrote")
    assert target.exists()


@pytest.mark.subprocess
def test_a_socket_cannot_reach_even_loopback(places) -> None:
    ws, _, home = places
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        server.settimeout(5)
        try:
            conn, _ = server.accept()
            accepted.append(True)
            conn.close()
        except OSError:
            pass

    body = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
        "    print('connected')\n"
        "except OSError as e:\n"
        "    print('blocked', e.errno)\n"
    )
    command = python(ws, "probe.py", body)
    try:
        runner = ShellRunner(ws, sandbox="required", home=str(home))
        assert run(runner, command).output.startswith("blocked")
        thread = threading.Thread(target=accept)
        thread.start()
        control = run(ShellRunner(ws, sandbox="off", home=str(home)), command)
        thread.join()
        assert control.output.startswith("connected") and accepted == [True]
    finally:
        server.close()


@pytest.mark.subprocess
def test_the_home_folder_tmp_and_protected_files_are_hidden_or_read_only(places) -> None:
    ws, _, home = places
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    body = (
        "import pathlib, sys\n"
        f"home = pathlib.Path({str(home)!r})\n"
        "print('key', (home / '.ssh' / 'id_rsa').exists())\n"
        "pathlib.Path('/tmp/sandbox-marker').write_text('x')\n"
        "for p in ['.git/hooks/pre-commit', '.git/config']:\n"
        "    try:\n        pathlib.Path(p).write_text('evil')\n        print(p, 'written')\n"
        "    except OSError:\n        print(p, 'read-only')\n"
    )
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    out = run(runner, python(ws, "look.py", body)).output
    assert "key False" in out
    assert ".git/hooks/pre-commit read-only" in out and ".git/config read-only" in out
    assert not Path("/tmp/sandbox-marker").exists()  # a private /tmp
    assert (ws / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.subprocess
def test_secrets_stay_out_of_the_environment(places, monkeypatch) -> None:
    ws, _, home = places
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    out = run(runner, "env").output
    assert "very-secret" not in out and "ghp_secret" not in out
    assert "LANG=C.UTF-8" in out
    # a secret-looking name is dropped even when a policy lists it
    assert "API_KEY" not in ShellRunner(ws, sandbox="off").environment()


@pytest.mark.subprocess
def test_timeout_kills_the_command_and_what_it_started(places) -> None:
    ws, _, home = places
    body = (
        "import subprocess, time\n"
        "subprocess.Popen(['sleep', '30'])\n"
        "print('started', flush=True)\n"
        "time.sleep(30)\n"
    )
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    done = run(runner, python(ws, "slow.py", body), timeout_s=1.5)
    assert done.timed_out and done.exit_code is None
    assert done.output == "started\n"
    assert "timed out" in done.for_model()


@pytest.mark.subprocess
def test_output_is_capped_with_the_total_named(places) -> None:
    ws, _, home = places
    runner = ShellRunner(ws, sandbox="required", home=str(home), max_output=1000)
    done = run(runner, python(ws, "loud.py", "print('x' * 50000)\n"))
    assert done.truncated and len(done.output) == 1000 and done.output_bytes == 50001
    assert "cut at 1000 of 50001 bytes" in done.for_model()


@pytest.mark.subprocess
def test_cwd_must_be_a_folder_of_the_workspace(places) -> None:
    ws, _, home = places
    (ws / "sub").mkdir()
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert run(runner, "pwd", cwd="sub").output.strip() == str((ws / "sub").resolve())
    with pytest.raises(ValidationError, match="outside the workspace"):
        run(runner, "pwd", cwd="../outside")
    with pytest.raises(ValidationError, match="no folder"):
        run(runner, "pwd", cwd="missing")
    # relative paths are judged from cwd: from sub, `..` is still the workspace
    assert runner.judge("rm -rf ../sub", cwd="sub").allowed
    assert not runner.judge("rm -rf ../..", cwd="sub").allowed


@pytest.mark.subprocess
def test_unknown_commands_and_the_tool_interface(places) -> None:
    ws, _, home = places
    runner = ShellRunner(ws, sandbox="off", home=str(home))
    # a program the gate does not model is refused without the sandbox, run inside it
    with pytest.raises(ValidationError, match=r"unknown-program.*no-such-command-xyz"):
        run(runner, "no-such-command-xyz")
    boxed = ShellRunner(ws, sandbox="required", home=str(home))
    missing = run(boxed, "no-such-command-xyz")
    assert missing.exit_code != 0 and "No such file" in missing.output
    shell = shell_tool(runner)
    ok = asyncio.run(shell.call({"command": "echo hi"}))
    assert ok.ok and ok.output == "exit 0\nhi\n"
    refused = asyncio.run(shell.call({"command": "sudo ls"}))
    assert not refused.ok and "privilege-escalation" in (refused.error or "")
    assert refused.retry  # the model may try a different command


def test_sandbox_modes(monkeypatch) -> None:
    assert sandbox_module.choose("off").binary is None
    assert sandbox_module.choose("auto").binary is not None
    with pytest.raises(UsageError, match="unknown sandbox mode"):
        sandbox_module.choose("sometimes")
    monkeypatch.setattr(
        sandbox_module, "detect", lambda: sandbox_module.Sandbox(None, "bwrap is not installed")
    )
    with pytest.raises(UsageError, match="no OS sandbox is available"):
        sandbox_module.choose("required")
    auto = sandbox_module.choose("auto")
    assert auto.binary is None and "the shell gate alone decides" in auto.note


def test_result_shape() -> None:
    done = ShellResult(
        command="x", argv=["x"], exit_code=0, output="", output_bytes=0, truncated=False,
        timed_out=False, sandbox="none", ms=1.0,
    )  # fmt: skip
    assert done.for_model() == "exit 0"


@pytest.mark.subprocess
def test_the_running_python_stays_reachable_when_it_lives_in_a_hidden_folder(tmp_path, monkeypatch):
    venv = tmp_path / "venv"  # under /tmp, which the sandbox replaces with an empty folder
    venv.mkdir()
    monkeypatch.setattr(sys, "prefix", str(venv))
    box = sandbox_module.Sandbox(binary="/usr/bin/bwrap", note="")
    args = sandbox_module.wrap(
        ["true"], box, workspace=str(tmp_path / "ws"), cwd=str(tmp_path / "ws"),
        home=str(tmp_path / "home"), network=False,
    )  # fmt: skip
    real = os.path.realpath(venv)
    i = args.index(real)
    assert args[i - 1] == "--ro-bind" and args[i + 1] == real
    assert args.index("--tmpfs") < i < args.index("--bind")
    # an interpreter outside every hidden folder needs no extra mount
    monkeypatch.setattr(sys, "prefix", "/usr")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    plain = sandbox_module.wrap(
        ["true"], box, workspace=str(tmp_path / "ws"), cwd=str(tmp_path / "ws"),
        home=str(tmp_path / "home"), network=False,
    )  # fmt: skip
    assert "/usr" not in plain
