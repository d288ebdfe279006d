"""Grading: a problem's own tests run on the model's function, in the OS sandbox.

The model is asked for the whole function in a fenced ``python`` block (the convention
HumanEval harnesses use); :func:`extract_code` takes it from the reply. The program the tests
run is the problem's prompt (its imports, helpers and the stub, valid Python on its own), the
model's code (whose definition replaces the stub), the problem's ``test`` and
``check(entry_point)``. It runs under bubblewrap (:mod:`noetic.tools.sandbox`): the system
read-only, only a fresh temporary workspace writable, no network, within a time limit after
which the whole process group is killed, and within a memory limit (``RLIMIT_AS``, the address
space, set soft and hard by the sandboxed interpreter before it reads the program, and
inherited by everything the program starts), at which an allocation fails (Python's
``MemoryError``). The limit is set there rather than between fork and exec in this process
(``preexec_fn``), which can deadlock a child forked beside other threads (the MCP server's).
Exit status 0 is a pass; anything else a failure, with the reason (the last line of the error
output, the time limit, or the memory limit).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Final

from noetic.tools.sandbox import Sandbox, wait_or_kill, wrap

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
TAIL_BYTES: Final = 4000
MEMORY_MB: Final = 1024  # the tests' address space by default, in MiB
MIN_MEMORY_MB: Final = 64  # below this the interpreter itself cannot start
# runs the program as ``python program.py`` would, under the memory limit (the limit is soft
# and hard, so the program cannot raise it again)
_LAUNCH: Final = (
    "import resource\n"
    "resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    "del resource\n"
    "__file__ = 'program.py'\n"
    "exec(compile(open(__file__, encoding='utf-8').read(), __file__, 'exec'))\n"
)
# a failed allocation as Python reports it: the exception, an OS call refused (ENOMEM), or the
# interpreter giving up
_OUT_OF_MEMORY = re.compile(
    r"^(MemoryError\b|.*\[Errno 12\] Cannot allocate memory|Fatal Python error:.*memory)"
)


@dataclass(frozen=True)
class Verdict:
    """What the tests said: ``passed``, why not (``reason``), and how long they took."""

    passed: bool
    reason: str
    ms: float
    exit_code: int | None
    timed_out: bool = False
    out_of_memory: bool = False


def extract_code(text: str, entry_point: str) -> str | None:
    """The function from a reply: the fenced block that defines ``entry_point`` (a
    ``python`` block first), else the first ``python`` (or unlabelled) block, else the whole
    reply when it defines the function itself; None when there is no code."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    python = [b for lang, b in blocks if lang in ("python", "py", "python3", "")]
    for block in [*python, *(b for _, b in blocks)]:
        if _defines(block, entry_point):
            return block.strip("\n") + "\n"
    if python:
        return python[0].strip("\n") + "\n"
    if _defines(text, entry_point):
        return text.strip("\n") + "\n"
    return None


_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(", re.MULTILINE)


def _defines(code: str, entry_point: str) -> bool:
    """Whether ``code`` has a line defining ``entry_point``: each problem's name is looked for
    among the functions defined, without a pattern compiled for it (a name that is no word
    has one)."""
    if not re.fullmatch(r"\w+", entry_point):
        pattern = rf"^\s*(async\s+)?def\s+{re.escape(entry_point)}\s*\("
        return re.search(pattern, code, re.MULTILINE) is not None
    return any(m.group(1) == entry_point for m in _DEF.finditer(code))


def program(prompt: str, code: str, test: str, entry_point: str) -> str:
    """The program the tests run (module docstring); the prompt is left out when it is not
    Python on its own (a team's set may phrase it in words)."""
    parts = []
    try:
        compile(prompt, "<prompt>", "exec")
    except (SyntaxError, ValueError):
        pass
    else:
        parts.append(prompt)
    parts += [code, test, f"check({entry_point})"]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def sandboxed(argv: list[str], sandbox: Sandbox, workspace: str) -> list[str]:
    """``argv`` as run in ``sandbox`` with ``workspace`` (a fresh temporary folder holding
    only the program: no repository) as its only writable folder."""
    return wrap(
        argv,
        sandbox,
        workspace=workspace,
        cwd=workspace,
        home=os.path.expanduser("~"),
        network=False,
        repository=False,
    )


async def run_tests(
    source: str, sandbox: Sandbox, *, timeout_s: float, memory_mb: int = MEMORY_MB
) -> Verdict:
    """Run ``source`` (a whole test program) in a fresh workspace under ``sandbox`` and judge
    it by its exit status within ``timeout_s`` seconds and ``memory_mb`` MiB of address
    space. Its time (``ms``) is the whole run's: the workspace made and removed too."""
    if memory_mb < MIN_MEMORY_MB:
        raise ValueError(f"the tests' memory limit must be at least {MIN_MEMORY_MB} MiB")
    start = time.perf_counter()
    workspace = tempfile.mkdtemp(prefix="noetic-eval-")
    try:
        path = os.path.join(workspace, "program.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        launch = _LAUNCH.format(limit=memory_mb * 1024 * 1024)
        argv = sandboxed([sys.executable, "-I", "-B", "-c", launch], sandbox, workspace)
        verdict = await _judge(argv, workspace, timeout_s, memory_mb)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return replace(verdict, ms=round((time.perf_counter() - start) * 1000, 3))


async def _judge(argv: list[str], cwd: str, timeout_s: float, memory_mb: int) -> Verdict:
    """The verdict on the program ``argv`` runs (its ``ms`` left for :func:`run_tests`)."""
    ms = 0.0
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
    )
    tail = bytearray()

    async def drain() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            tail.extend(chunk)
            del tail[:-TAIL_BYTES]

    reader = asyncio.ensure_future(drain())
    try:
        timed_out = await wait_or_kill(proc, timeout_s)  # cancelled: nothing left running
    finally:
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(reader, 5)
    if timed_out:
        return Verdict(
            False,
            f"stopped after {timeout_s:g}s: the tests did not finish (an endless loop?)",
            ms,
            None,
            timed_out=True,
        )
    if proc.returncode == 0:
        return Verdict(True, "the tests passed", ms, 0)
    reason = _reason(bytes(tail), proc.returncode)
    if _out_of_memory(bytes(tail)):
        return Verdict(
            False,
            f"stopped at the memory limit ({memory_mb} MiB): the tests ran out of memory "
            f"({reason.removeprefix('the tests failed: ')})",
            ms,
            proc.returncode,
            out_of_memory=True,
        )
    return Verdict(False, reason, ms, proc.returncode)


def _out_of_memory(stderr: bytes) -> bool:
    """Whether the program ended on a failed allocation: the error its last line names (or,
    for a fatal error, the line saying so)."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    if lines and _OUT_OF_MEMORY.match(lines[-1]):
        return True
    return any(ln.startswith("Fatal Python error") and _OUT_OF_MEMORY.match(ln) for ln in lines)


def _reason(stderr: bytes, code: int | None) -> str:
    """The last line of the error output (the exception), or the exit status."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return f"the tests were killed by {name}" + (f": {lines[-1][:300]}" if lines else "")
    if not lines:
        return f"the tests failed with exit status {code} and no message"
    last = lines[-1][:300]
    if last in ("AssertionError", "assert"):
        where = next((ln for ln in reversed(lines) if ln.startswith("assert")), None)
        return f"the tests failed: AssertionError{f' at {where[:200]}' if where else ''}"
    return f"the tests failed: {last}"
