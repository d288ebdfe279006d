"""How a command ends: Noetic's errors become a message (or ``{"error": …}``) and an exit code.

1 for the caller's mistakes (:class:`noetic.errors.UsageError`), 3 for runtime failures (store,
provider): a write command that exits 3 stored nothing, so running it again is safe. 6 when the
write was stored and a step after it failed (:class:`noetic.errors.StoredIncomplete`: the message
names what is stored and what is missing; running it again would store it twice). typer itself
exits 2 on malformed command lines. An engine run that ends without doing
what was asked exits non-zero after printing its result (:func:`run_exit_code`): 3 when it
failed, 5 when it stopped to wait for a person (a question to answer, a task to hand on, a
decision to make).
"""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from noetic.cli.output import esc, stderr

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.errors import NoeticError

EXIT_USER_ERROR = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3
EXIT_STORED_INCOMPLETE = 6
EXIT_AWAITING_INPUT = 5
EXIT_INTERRUPTED = 130  # Ctrl-C: what finished is kept (a run says how to resume it)

# An engine run's end status → its exit code; statuses not named here (completed) exit 0.
_RUN_EXITS = {
    # stopped for a person: CASCADE's clarify and delegate, Nova's escalated
    **dict.fromkeys(("clarify", "delegate", "escalated"), EXIT_AWAITING_INPUT),
    # failed: CASCADE (reset_refused … provider_failure), Nova (failed, and running: a walk never
    # ends running, if one does it did not finish), the agent (error, budget; done and
    # max_iterations answer)
    **dict.fromkeys(("reset_refused", "timeout", "tool_limit", "parse_failure"), EXIT_RUNTIME),
    **dict.fromkeys(("provider_failure", "failed", "running", "error", "budget"), EXIT_RUNTIME),
    "refused": EXIT_USER_ERROR,  # the agent: a request judged unsafe is the caller's
    # noetic eval (a provider that kept failing ends it "failed", above)
    "interrupted": EXIT_INTERRUPTED,
}


def run_exit_code(status: str) -> int:
    """The exit code for an engine run that ended with ``status`` (module docstring)."""
    return _RUN_EXITS.get(str(status), 0)


def exit_for_run(status: str) -> None:
    """End the command with :func:`run_exit_code` when the run did not complete."""
    code = run_exit_code(status)
    if code:
        raise CommandExit(code)


class CommandExit(SystemExit):
    """A command ends with this exit code, its message already printed. A ``SystemExit``, so
    it leaves through typer and through the fast path (:mod:`noetic.cli.fast`) alike, and the
    stores are still closed on the way out."""


@contextmanager
def handled(as_json: bool) -> Iterator[None]:
    """Turn Noetic's errors into a message (or ``{"error": …}``) and an exit code.

    An operating-system or database error the command met (a full disk, a file it could not
    write) is reported the same way, as a runtime failure naming what failed, rather than as a
    traceback with nothing on stdout."""
    from noetic.errors import (
        NoeticError,
        StoredIncomplete,
        StoreError,
        UsageError,
        counting_commits,
    )

    try:
        with counting_commits():  # a write failing after one of this command's says so
            yield
    except NoeticError as exc:
        code = EXIT_USER_ERROR if isinstance(exc, UsageError) else EXIT_RUNTIME
        if isinstance(exc, StoredIncomplete):
            code = EXIT_STORED_INCOMPLETE
        _report(exc, as_json)
        raise CommandExit(code) from None
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # stdout closed: nothing can be reported there
            raise
        where = f" on {exc.filename}" if exc.filename else ""
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        fix = "free some space on the disk, then run the command again" if full else None
        _report(StoreError(f"the command failed{where}: {exc.strerror or exc}", fix=fix), as_json)
        raise CommandExit(EXIT_RUNTIME) from None
    except Exception as exc:
        if type(exc).__module__ != "sqlite3":
            raise
        _report(StoreError(f"the store's database failed: {exc}"), as_json)
        raise CommandExit(EXIT_RUNTIME) from None


def _report(exc: NoeticError, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps({"error": exc.to_dict()}, indent=2) + "\n")
    else:
        err = stderr()
        err.print(f"[bold red]error:[/] {esc(exc.message)}")
        if exc.fix:
            err.print(f"[dim]fix:[/] {esc(exc.fix)}")


def refuse_undecodable_argv(args: list[str]) -> None:
    """Exit 1 with a clear error when a command-line argument was not valid UTF-8."""
    from noetic.untrusted import check_text

    with handled("--json" in args):
        for i, arg in enumerate(args, start=1):
            check_text(arg, f"command-line argument {i}")
