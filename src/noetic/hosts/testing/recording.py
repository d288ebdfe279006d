"""Outcomes nobody has to type: a command's exit status, a test command the agent ran.

The project says which commands are its tests, in ``<store>/config.toml``::

    [outcomes]
    test_commands = ["pytest", "npm test", "make test"]

``noetic setup claude-code`` writes the ones it finds in the project (:mod:`.testdetect`).
Which command lines run one of them, and which exit statuses are outcomes, is
:mod:`noetic.hosts.testing.commands`; this module records the outcome.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


MAX_EVIDENCE = 500


def record_exit(
    store: Any, session_id: str, command: str, exit_code: int, score: float, *, via: str
) -> Any | None:
    """Record ``score`` (what :mod:`.testruns` read in ``exit_code``) as the outcome of the
    session's open task, the command line as evidence; None when the session has no open
    task (never an older one)."""
    cascade = store.open_cascade_of(session_id)
    if cascade is None:
        return None
    from noetic.calibration import record_outcome  # the calibration, for an outcome to record

    shown = command if len(command) <= MAX_EVIDENCE else command[: MAX_EVIDENCE - 1] + "…"
    evidence = f"`{shown}` exited {exit_code} ({via})"
    return record_outcome(store, cascade.id, score=score, source="test", evidence=evidence)


class CommandNotRunnable(Exception):
    """The command could not be started: not found (127) or not executable (126)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def run_command(argv: list[str], *, stdout: Any = None, env: dict[str, str] | None = None) -> int:
    """Run ``argv`` with this process's streams (``stdout`` to send its output elsewhere) and
    environment (or ``env``) and return its exit status, a signal's death as 128 + the
    signal's number like a shell. Ctrl-C reaches the command, which decides when it ends."""
    import subprocess

    try:
        proc = subprocess.Popen(argv, stdout=stdout, env=env)
    except FileNotFoundError:
        raise CommandNotRunnable(f"command not found: {argv[0]}", 127) from None
    except PermissionError:
        raise CommandNotRunnable(f"cannot run {argv[0]}: permission denied", 126) from None
    except OSError as exc:
        raise CommandNotRunnable(f"cannot run {argv[0]}: {exc.strerror or exc}", 126) from None
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:
            continue
    return 128 - code if code < 0 else code
