"""A real PostgreSQL server for the tests: Debian's binaries, a cluster in a temporary directory,
listening on a free loopback port, stopped at the end.

The server runs as the ``postgres`` system user when the tests run as root (PostgreSQL refuses
root), with fsync off (a test's data need not survive a power cut). Each test gets its own schema
in one database, which is much faster than a database per test; the URL names the schema in
``options=-csearch_path=…``, so a store opened on it sees only that test's tables.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

BIN_DIRS = [Path(f"/usr/lib/postgresql/{v}/bin") for v in (17, 16, 15, 14)]
DATABASE = "noetic_test"


def unavailable(reason: str) -> NoReturn:
    """A server the tests need cannot be had: a failure that says why and how to go on, never a
    skip (a skipped test would pass a broken install quietly). ``make test`` installs the
    servers; by hand, install them or leave these tests out with ``-m "not postgres"``."""
    import pytest

    pytest.fail(f'{reason}; `make postgres` installs it, or run without these: -m "not postgres"')


def binaries() -> Path | None:
    """The directory holding ``initdb`` and ``postgres``, if a server is installed."""
    found = os.environ.get("NOETIC_PG_BIN")
    if found and (Path(found) / "postgres").is_file():
        return Path(found)
    for folder in BIN_DIRS:
        if (folder / "postgres").is_file() and (folder / "initdb").is_file():
            return folder
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One cluster: :meth:`start`, :meth:`stop`, :meth:`restart`, and URLs into it."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="noetic-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._as: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        self._run(
            self.bin / "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip

    def _run(self, *args: object) -> None:
        done = subprocess.run(
            [*self._as, *map(str, args)], capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        with open(self.root / "server.log", "ab") as log:  # the server keeps its own copy
            self.process = self._spawn(log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {(self.root / 'server.log').read_text()}")
            if self._ready():
                return
            time.sleep(0.05)
        raise RuntimeError("postgres did not accept connections within 60 s")

    def _spawn(self, log: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*self._as, str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-k", str(self.root), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=200", "-c", "shared_buffers=64MB"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def _ready(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2, autocommit=True):
                return True
        except psycopg.OperationalError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # smart shutdown: sessions end, then the server
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, down_for: float = 0.0) -> None:
        """Stop at once (``SIGINT``: fast shutdown, open transactions rolled back), wait, start."""
        assert self.process is not None
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, 2)  # to the server itself: runuser does not pass SIGINT on
        self.process.wait(timeout=30)
        time.sleep(down_for)
        self.start()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = DATABASE, schema: str | None = None) -> str:
        base = f"postgresql://postgres@127.0.0.1:{self.port}/{database}"
        if schema:
            base += "?options=" + quote(f"-csearch_path={schema}")
        return base

    def create_database(self, name: str = DATABASE) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def new_schema(self) -> str:
        """A fresh schema in the test database; returns a URL whose tables live in it."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return self.url(schema=name)


PGVECTOR = "0.8.0"  # the first with the iterative index scan recall's filtered search needs

# The functions pgvector compiles for AVX, AVX-512 or FMA and calls only when the CPU reports
# them (pgvector's own dispatch: CPUID at load, or GCC's target clones ``name.fma``).
_DISPATCHED = ("Avx512Popcount", "F16c", ".fma", ".avx", ".popcnt", ".arch_")


def pgvector_control(bin_dir: Path) -> Path:
    """Where Debian's PostgreSQL in ``bin_dir`` looks for pgvector's control file."""
    return Path("/usr/share/postgresql") / bin_dir.parent.name / "extension" / "vector.control"


def wide_registers(library: Path) -> dict[str, int]:
    """The functions of ``library`` whose code uses AVX or AVX-512 registers (ymm, zmm) and
    that are not picked at run time by asking the CPU, with how many such instructions each
    has: empty for a build that runs on any x86-64 (``make OPTFLAGS=""``). ``objdump -d``."""
    done = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(library)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    found: dict[str, int] = {}
    function = ""
    for line in done.stdout.splitlines():
        if line.endswith(">:") and "<" in line:
            function = line[line.index("<") + 1 : -2]
        elif ("%ymm" in line or "%zmm" in line) and not any(d in function for d in _DISPATCHED):
            found[function] = found.get(function, 0) + 1
    return found


@contextlib.contextmanager
def running(bin_dir: Path | None = None) -> Iterator[Server]:
    bin_dir = bin_dir or binaries()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries (make postgres installs them)")
    server = Server(bin_dir)
    try:
        server.start()
        server.create_database()
        yield server
    finally:
        server.cleanup()
