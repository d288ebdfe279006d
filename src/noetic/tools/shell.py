"""The shell tool: a command judged by the gate, then run in the sandbox with limits.

A refusal of :func:`noetic.tools.shellgate.check_command` (judged as sandboxed when the OS sandbox
will contain it) names the rule and the part of the command, and nothing runs. A plain command
runs as an argument vector, globs expanded here; a line that needs a shell runs through the
policy's ``shell``, handed the line as the gate parsed and approved it
(:func:`noetic.tools.shellgate.rebuilt_line.render`), so the shell runs the words the gate
judged. Timeouts, the output cap and the environment: docs/agent.md, "The shell tool and the
sandbox".
"""

from __future__ import annotations

import asyncio
import glob
import os
import re
import shutil
import time
from pathlib import Path

from noetic.errors import InvalidValueError, PolicyRefusal
from noetic.frozen import Frozen
from noetic.tools.base import Tool, tool
from noetic.tools.file_tools import SandboxRoot
from noetic.tools.sandbox import Sandbox, choose, wait_or_kill, wrap
from noetic.tools.shellgate import Policy, Verdict, check_command, load_policy
from noetic.tools.shellgate.rebuilt_line import render
from noetic.tools.shellgate.syntax import Unparseable, parse

MAX_OUTPUT_BYTES = 16_000
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT", re.IGNORECASE
)
_FIXED_ENV = {
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}


class ShellResult(Frozen):
    """What one command did. ``exit_code`` is None when it was killed at its timeout."""

    command: str
    argv: list[str]
    exit_code: int | None
    output: str
    output_bytes: int
    truncated: bool
    timed_out: bool
    sandbox: str
    ms: float

    def for_model(self) -> str:
        head = (
            f"timed out after {self.ms / 1000:.1f}s (killed)"
            if self.timed_out
            else f"exit {self.exit_code}"
        )
        body = self.output
        if self.truncated:
            body += f"\n… output cut at {len(self.output)} of {self.output_bytes} bytes"
        return f"{head}\n{body}" if body else head


class ShellRunner:
    """Runs command lines for one workspace under one policy and one sandbox."""

    def __init__(
        self,
        workspace: Path | str,
        *,
        policy: Policy | None = None,
        sandbox: str = "auto",
        timeout_s: float = 60.0,
        max_output: int = MAX_OUTPUT_BYTES,
        home: str | None = None,
    ) -> None:
        self.policy = policy or load_policy()
        self.root = SandboxRoot(workspace, self.policy)
        self.sandbox: Sandbox = choose(sandbox)
        self.timeout_s = timeout_s
        self.max_output = max_output
        self.home = os.path.realpath(home or os.path.expanduser("~"))

    @property
    def notice(self) -> str:
        """What protects commands here, for the agent to say at start."""
        return self.sandbox.note

    def judge(self, command: str, cwd: str = ".") -> Verdict:
        folder, _ = self.root.locate(cwd)
        return check_command(
            command, self.root.root, self.policy, home=self.home, cwd=folder, sandboxed=self.boxed
        )

    @property
    def boxed(self) -> bool:
        """Whether commands run inside the OS sandbox (the gate then leaves to it what it
        contains)."""
        return self.sandbox.binary is not None

    def environment(self) -> dict[str, str]:
        env = {
            name: os.environ[name]
            for name in self.policy.environment
            if name in os.environ and not SECRET_NAME.search(name)
        }
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        env.update(_FIXED_ENV)
        env["HOME"] = "/tmp" if self.sandbox.binary else self.home
        return env

    def argv(self, command: str, cwd: str) -> list[str]:
        """The argument vector that runs ``command``: its own words, or the policy's shell."""
        try:
            script = parse(command, home=self.home, workspace=self.root.root, cwd=cwd)
        except Unparseable:  # the gate has refused it already; kept for callers that skip it
            script = None
        words = script.argv() if script is not None else None
        if words is not None:
            argv: list[str] = []
            for word in words:
                value = word.value or ""
                matches = sorted(glob.glob(value, root_dir=cwd)) if word.glob else []
                argv += matches or [value]
            return argv
        if self.policy.shell and script is not None:
            shell = shutil.which(self.policy.shell) or self.policy.shell
            quiet = ["--noprofile", "--norc"] if os.path.basename(shell) == "bash" else []
            return [shell, *quiet, "-c", render(script)]
        raise InvalidValueError(
            "this command needs a shell (a pipe, a list, a redirection or an expansion), and "
            "the policy names none (shell: null)",
            field="command",
            value=command,
            fix="run one plain command at a time, or name a shell in the policy (shell: /bin/bash)",
        )

    async def run(
        self, command: str, cwd: str = ".", timeout_s: float | None = None
    ) -> ShellResult:
        """Judge and run ``command``; a refusal raises :class:`InvalidValueError` naming the
        rule."""
        folder, _ = self.root.locate(cwd)
        if not os.path.isdir(folder):
            raise InvalidValueError(f"no folder {cwd!r} in the workspace", field="cwd", value=cwd)
        verdict = self.judge(command, cwd)
        if not verdict.allowed:
            first = verdict.violations[0]
            raise PolicyRefusal(
                f"refused by the shell gate, rule {first.explain()}",
                rule=first.rule,
                field="command",
                value=command,
            )
        argv = self.argv(command, folder)
        full = wrap(
            argv,
            self.sandbox,
            workspace=self.root.root,
            cwd=folder,
            home=self.home,
            network=self.policy.network,
        )
        return await self._execute(command, argv, full, folder, timeout_s or self.timeout_s)

    async def _execute(
        self, command: str, argv: list[str], full: list[str], cwd: str, timeout_s: float
    ) -> ShellResult:
        start = time.perf_counter()

        def result(code: int | None, data: bytes, total: int, timed_out: bool) -> ShellResult:
            return ShellResult(
                command=command,
                argv=argv,
                exit_code=code,
                output=data.decode("utf-8", errors="replace"),
                output_bytes=total,
                truncated=total > len(data),
                timed_out=timed_out,
                sandbox=self.sandbox.name,
                ms=round((time.perf_counter() - start) * 1000, 3),
            )

        try:
            proc = await asyncio.create_subprocess_exec(
                *full,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=cwd,
                env=self.environment(),
                start_new_session=True,
            )
        except FileNotFoundError:
            text = f"command not found: {argv[0]}".encode()
            return result(127, text, len(text), False)
        except PermissionError:
            text = f"permission denied: {argv[0]}".encode()
            return result(126, text, len(text), False)
        kept = bytearray()
        total = 0

        async def drain() -> None:
            nonlocal total
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                total += len(chunk)
                room = self.max_output - len(kept)
                if room > 0:
                    kept.extend(chunk[:room])

        reader = asyncio.create_task(drain())
        timed_out = await wait_or_kill(proc, timeout_s)
        try:
            await asyncio.wait_for(reader, 2.0)
        except TimeoutError:  # a child that escaped the group still holds the pipe
            reader.cancel()
        return result(None if timed_out else proc.returncode, bytes(kept), total, timed_out)


def shell_tool(runner: ShellRunner) -> Tool:
    """The ``shell`` tool bound to ``runner``."""

    async def shell(command: str, cwd: str = ".", timeout_s: float = 0) -> str:
        """Run a shell command in the workspace (checked by the safety gate, sandboxed).

        Args:
            command: one command line; plain commands run without a shell interpreter
            cwd: the folder to run in, relative to the workspace
            timeout_s: seconds before the command is killed (0: the default)
        """
        if timeout_s < 0:
            raise InvalidValueError("timeout_s must not be negative", field="timeout_s")
        done = await runner.run(command, cwd, timeout_s or None)
        return done.for_model()

    made = tool(shell, improves_vectors=("do", "state", "change"), confidence_gain=0.1)
    return made.model_copy(update={"max_output": runner.max_output + 200})  # room for the note
