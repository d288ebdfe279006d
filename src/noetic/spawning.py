"""Run a short child process as :func:`subprocess.run` does, without importing :mod:`subprocess`.

A workflow command appends its checkpoint with one ``git`` process, and a finished task starts
the recall indexer through ``/bin/sh``; both run on every such command, a fresh process each
time, where ``subprocess`` and what it loads (``threading``, ``signal``, ``selectors``,
``locale``) cost about 3 ms before the child starts. Here the child is started with
:func:`os.posix_spawnp` and waited for through a pidfd, the same way ``subprocess.run`` would
have it: fds 0–2 as asked and every other inheritable descriptor closed, ``SIGPIPE`` and
``SIGXFSZ`` back to their defaults, the input written and the output read until both ends
close, the whole bounded by ``timeout`` (the child killed and reaped when it runs out). Where
pidfds or ``posix_spawnp`` are missing (not Linux) :mod:`subprocess` does it. As with
``subprocess`` where it uses ``posix_spawn`` itself, glibc leaves its two internal signals
(32 and 33, which no program sends) ignored in the child.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_FALLBACK = not (hasattr(os, "pidfd_open") and hasattr(os, "posix_spawnp"))


class Expired(Exception):
    """The child outlived its timeout: it was killed and reaped."""


def _encoding() -> str:
    """The encoding ``subprocess.run(..., text=True)`` uses (``locale.getpreferredencoding``)."""
    if sys.flags.utf8_mode:
        return "utf-8"
    import _locale

    return _locale.getencoding()


def _inherited() -> list[int]:
    """Descriptors above 2 a child would inherit (``subprocess``'s ``close_fds`` closes them)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        names = [str(fd) for fd in range(3, 256)]
    found = []
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the listing's own descriptor, closed since
                continue
    return found


def _spawn(argv: list[str], stdio: Sequence[tuple[object, ...]], *, setsid: bool = False) -> int:
    import _signal

    actions = [*stdio, *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited())]
    return os.posix_spawnp(
        argv[0], argv, os.environ, file_actions=actions, setsid=setsid,
        setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ),
    )  # fmt: skip


def _null() -> list[tuple[object, ...]]:
    """A child's fds 0-2 on ``/dev/null``: no input, its output dropped."""
    return [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY, 0)
            for fd in (0, 1, 2)]  # fmt: skip


def _reap(pid: int, pidfd: int, deadline: float) -> int:
    """The child's exit code, waiting until ``deadline`` (:class:`Expired` after it)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    left = deadline - time.monotonic()
    if left <= 0 or not poller.poll(left * 1000):
        raise Expired
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _kill(pid: int) -> None:
    import _signal

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, _signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def run_text(argv: list[str], *, stdin: str | None, timeout: float) -> tuple[int, str]:
    """``(exit code, stdout)`` of ``argv`` with ``stdin`` as its input (text in the locale's
    encoding, newlines translated, stderr read and dropped), as ``subprocess.run(argv,
    capture_output=True, text=True, input=stdin, timeout=timeout)`` gives them; with ``stdin``
    None the child's input is at its end at once (rather than this process's own input, which
    a hook's host is writing to). Raises :class:`OSError` when it cannot start and
    :class:`Expired` when it outlives ``timeout``."""
    return Running(argv, stdin=stdin, timeout=timeout).result()


class Running:
    """A child started as :func:`run_text` starts it, whose result is collected later, so the
    caller's own work runs while the child does (a checkpoint's ``git`` beside the rest of a
    command's writes). The input is written as far as the pipe takes it at once, the rest
    while :meth:`result` waits; the timeout counts from the start. A child whose result is
    never asked for is killed and reaped by :meth:`abandon`."""

    def __init__(self, argv: list[str], *, stdin: str | None, timeout: float) -> None:
        self._done: tuple[int, str] | None = None
        if _FALLBACK:
            import subprocess

            try:
                given: dict[str, Any] = {"input": stdin} if stdin is not None else {
                    "stdin": subprocess.DEVNULL}  # fmt: skip
                ran = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                     **given)  # fmt: skip
            except subprocess.TimeoutExpired:
                raise Expired from None
            self._done = ran.returncode, ran.stdout
            return
        self._deadline = time.monotonic() + timeout
        self._encoding = _encoding()
        data = b"" if stdin is None else stdin.encode(self._encoding)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        ours = [in_w, out_r, err_r]
        try:
            stdio = [(os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
                     (os.POSIX_SPAWN_DUP2, err_w, 2)]  # fmt: skip
            pid = _spawn(argv, stdio)
        except BaseException:
            for fd in (*ours, in_r, out_w, err_w):
                os.close(fd)
            raise
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            _kill(pid)
            for fd in ours:
                os.close(fd)
            raise
        self._pid, self._pidfd, self._ours = pid, pidfd, ours
        self._out, self._err, self._in = out_r, err_r, in_w
        os.set_blocking(in_w, False)
        try:
            self._data = data[os.write(in_w, data[:65536]) :] if data else b""
        except BrokenPipeError:
            self._data = b""
        if not self._data:
            self._close_input()

    def _close_input(self) -> None:
        if self._in in self._ours:
            os.close(self._in)
            self._ours.remove(self._in)

    def result(self) -> tuple[int, str]:
        """``(exit code, stdout)``, once the child has ended; :class:`Expired` past the time
        (the child killed and reaped)."""
        if self._done is not None:
            return self._done
        out_r, err_r, in_w = self._out, self._err, self._in
        chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
        reaped = False
        try:
            poller = select.poll()
            open_fds = {out_r, err_r}
            if in_w in self._ours:
                poller.register(in_w, select.POLLOUT)
                open_fds.add(in_w)
            for fd in (out_r, err_r):
                poller.register(fd, select.POLLIN)
            while open_fds:
                left = self._deadline - time.monotonic()
                ready = poller.poll(left * 1000) if left > 0 else []
                if not ready:
                    raise Expired
                for fd, event in ready:
                    if fd == in_w:
                        try:
                            self._data = self._data[os.write(in_w, self._data[:65536]) :]
                        except BrokenPipeError:
                            self._data = b""
                        if not self._data:
                            poller.unregister(in_w)
                            open_fds.discard(in_w)
                            self._close_input()
                        continue
                    chunk = os.read(fd, 65536) if event & (select.POLLIN | select.POLLHUP) else b""
                    if chunk:
                        chunks[fd].append(chunk)
                    else:
                        poller.unregister(fd)
                        open_fds.discard(fd)
            code = _reap(self._pid, self._pidfd, self._deadline)
            reaped = True
        finally:
            self._end(reaped)
        out = b"".join(chunks[out_r]).decode(self._encoding)
        b"".join(chunks[err_r]).decode(self._encoding)  # as text=True does: undecodable raises
        self._done = code, out.replace("\r\n", "\n").replace("\r", "\n")
        return self._done

    def abandon(self) -> None:
        """Kill and reap the child if its result was never collected."""
        if self._done is None and not _FALLBACK and self._pidfd >= 0:
            self._end(False)

    def _end(self, reaped: bool) -> None:
        if not reaped:  # run out of time, interrupted or abandoned: as subprocess.run, kill it
            _kill(self._pid)
        os.close(self._pidfd)
        self._pidfd = -1
        for fd in self._ours:
            os.close(fd)
        self._ours = []


def detached(argv: list[str], *, timeout: float) -> None:
    """Run ``argv`` in a session of its own with no input or output (``/dev/null``), waiting
    at most ``timeout`` seconds for it, as ``subprocess.run(argv, stdin=DEVNULL,
    stdout=DEVNULL, stderr=DEVNULL, start_new_session=True, timeout=timeout)``; for a shell
    that starts something in the background and exits. Raises :class:`OSError` when it
    cannot start and :class:`Expired` when it outlives ``timeout`` (killed and reaped)."""
    if _FALLBACK:
        import subprocess

        try:
            subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True, check=False,
                           timeout=timeout)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise Expired from None
        return
    deadline = time.monotonic() + timeout
    pid = _spawn(argv, _null(), setsid=True)
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        _kill(pid)
        raise
    reaped = False
    try:
        _reap(pid, pidfd, deadline)
        reaped = True
    finally:
        if not reaped:
            _kill(pid)
        os.close(pidfd)


def started(argv: list[str]) -> int | None:
    """Start ``argv`` in a session of its own with no input or output (``/dev/null``) and
    return its pid at once, not waiting for it: for a command that ends as soon as it answers,
    whose child the system then adopts (and reaps). A process that lives on would keep each
    such child as a zombie until it waits for it, so it uses :func:`detached` with a shell
    instead. ``None`` where ``posix_spawnp`` is missing (the caller falls back to
    :func:`detached`); :class:`OSError` when it cannot start."""
    if not hasattr(os, "posix_spawnp"):
        return None
    return _spawn(argv, _null(), setsid=True)
