"""A store that cannot be written, a database lost beside its session files, and the debris of
killed writers: each says what happened and what fixes it, and nothing is lost."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.errors import StoreError
from noetic.store import Store
from noetic.store.derived_files import sweep_temporary_files

from ..conftest import uniform

NOETIC = [sys.executable, "-c", "from noetic.cli import main; main()"]


def noetic(*args, home, check=True):
    """``noetic ARGS --store HOME`` in-process: exit code, stdout and stderr."""
    ran = CliRunner().invoke(app, [*args, "--store", str(home)])
    assert ran.exception is None or isinstance(ran.exception, SystemExit), ran.exception
    result = subprocess.CompletedProcess(args, ran.exit_code, ran.stdout, ran.stderr)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def history(home, tasks=2):
    """A session with ``tasks`` finished tasks, an investigation and a goal, written by the CLI."""
    noetic("bootstrap", home=home)
    for i in range(tasks):
        noetic("preflight", f"task {i}", "--vectors", json.dumps(uniform(0.5)), home=home)
        noetic("investigate", "--note", f"looked {i}", home=home)
        noetic("postflight", "--vectors", json.dumps(uniform(0.8)), home=home)
    noetic("goals", "generate", home=home, check=False)
    return counts(home)


def counts(home):
    """Rows per table that belong to a session (events outside any session are in no file)."""
    with Store(home) as store:
        out = {
            t: store.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("sessions", "cascades", "assessments", "investigations", "goals")
        }
        out["events"] = store.conn.execute(
            "SELECT COUNT(*) FROM events WHERE session_id IS NOT NULL"
        ).fetchone()[0]
    assert out["assessments"] and out["investigations"] and out["events"]
    return out


# -- read-only -----------------------------------------------------------------------------


def read_only(home, *args):
    """Run ``noetic ARGS`` with ``home`` bind-mounted read-only (a real read-only file system,
    which even root cannot write), in a private mount namespace."""
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    inner = (
        f'mount --bind "{home}" "{home}" && mount -o remount,ro,bind "{home}" "{home}" && exec "$@"'
    )
    return subprocess.run(
        [
            "unshare",
            *user,
            "--mount",
            "sh",
            "-c",
            inner,
            "sh",
            *NOETIC,
            *args,
            "--store",
            str(home),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("wal", ["left open", "checkpointed"])
def test_a_read_only_store_serves_reading_commands_and_refuses_writes_plainly(tmp_path, wal):
    home = tmp_path / "ro"
    history(home, tasks=1)
    if wal == "checkpointed":  # no -shm file, which SQLite cannot create on a read-only mount
        with sqlite3.connect(home / "noetic.db") as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for suffix in ("-wal", "-shm"):
            (home / f"noetic.db{suffix}").unlink(missing_ok=True)
    assert shutil.which("unshare"), "a read-only mount needs unshare (util-linux)"
    probe = read_only(home, "state", "--json")
    assert "unshare" not in probe.stderr, f"no mount namespace here: {probe.stderr.strip()}"
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout)["session"]["ai_id"] == "agent"
    listed = read_only(home, "sessions", "list", "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1
    report = read_only(home, "calibration", "report", "--json")
    assert report.returncode == 0, report.stderr
    write = read_only(home, "bootstrap")
    assert write.returncode == 3
    assert "read-only" in write.stderr and "damaged" not in write.stderr
    assert "Traceback" not in write.stderr


# -- the database lost beside its session files ------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.parametrize("loss", ["truncated", "deleted"])
def test_a_lost_database_is_reported_and_rebuilt_from_the_session_files(tmp_path, loss):
    home = tmp_path / "s"
    before = history(home)
    db = home / "noetic.db"
    for suffix in ("-wal", "-shm"):
        (home / f"noetic.db{suffix}").unlink(missing_ok=True)
    if loss == "truncated":
        db.write_bytes(b"")
    else:
        db.unlink()

    refused = noetic("sessions", "list", home=home, check=False)
    assert refused.returncode == 3
    assert "rebuild --from-files" in refused.stderr and "session files" in refused.stderr
    assert not db.exists() or db.stat().st_size == 0  # nothing was created in the meantime

    # Events recorded after a session's file was last written are not in it; the rest are.
    in_files = sum(
        len(json.loads(p.read_text())["events"]) for p in (home / "sessions").glob("*.json")
    )
    out = json.loads(noetic("rebuild", "--from-files", "--json", home=home).stdout)
    restored = out["restored"]
    assert restored["sessions"] == before["sessions"]
    for table in ("cascades", "assessments", "investigations", "goals"):
        assert restored["rows"][table] == before[table], table
    assert restored["rows"]["events"] == in_files
    after = counts(home)
    assert after == {**before, "events": in_files}
    assert noetic("state", "--json", home=home).returncode == 0


@pytest.mark.subprocess
def test_a_damaged_database_is_moved_aside_and_rebuilt(tmp_path):
    home = tmp_path / "s"
    before = history(home, tasks=1)
    for suffix in ("-wal", "-shm"):
        (home / f"noetic.db{suffix}").unlink(missing_ok=True)
    (home / "noetic.db").write_bytes(b"not a database" * 500)
    out = json.loads(noetic("rebuild", "--from-files", "--json", home=home).stdout)
    assert out["restored"]["moved_aside"].startswith(str(home / "noetic.db.damaged-"))
    assert out["restored"]["rows"]["assessments"] == before["assessments"]


@pytest.mark.subprocess
def test_rebuild_from_files_leaves_sessions_already_present_alone(tmp_path):
    home = tmp_path / "s"
    history(home, tasks=1)
    out = json.loads(noetic("rebuild", "--from-files", "--json", home=home).stdout)
    assert out["restored"]["sessions"] == 0 and out["restored"]["already_present"] == 1


@pytest.mark.subprocess
def test_an_unreadable_session_file_is_named_and_the_others_restored(tmp_path):
    home = tmp_path / "s"
    history(home, tasks=1)
    (home / "noetic.db").unlink()
    for suffix in ("-wal", "-shm"):
        (home / f"noetic.db{suffix}").unlink(missing_ok=True)
    (home / "sessions" / "s_broken.json").write_bytes(b'{"format": "noetic.session", \xff')
    result = noetic("rebuild", "--from-files", home=home, check=False)
    assert result.returncode == 3
    assert "s_broken.json" in result.stderr and "not valid UTF-8" in result.stderr
    with Store(home) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1


def test_an_empty_new_store_is_not_mistaken_for_a_lost_one(tmp_path):
    with Store(tmp_path / "fresh") as store:
        assert store.list_sessions() == []
    (tmp_path / "other" / "sessions").mkdir(parents=True)
    (tmp_path / "other" / "sessions" / ".s_a.json.x.tmp").write_text("{")
    with Store(tmp_path / "other") as store:  # a temporary file is not a session file
        assert store.list_sessions() == []


@pytest.mark.subprocess
def test_opening_a_lost_store_from_python_raises_a_store_error(tmp_path):
    history(tmp_path / "s", tasks=1)
    (tmp_path / "s" / "noetic.db").write_bytes(b"")
    with pytest.raises(StoreError, match="rebuild --from-files"):
        Store(tmp_path / "s")


# -- temporary files left by killed writers ---------------------------------------------------


@pytest.mark.subprocess
def test_rebuild_sweeps_stale_temporary_files_and_keeps_fresh_ones(tmp_path):
    home = tmp_path / "s"
    history(home, tasks=1)
    stale = [
        home / "sessions" / ".s_x.json.abc123.tmp",
        home / "reflex_logs" / "agent" / ".s_x-0001-preflight.json.def456.tmp",
        home / ".current_session.4242.tmp",
    ]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{half")
        old = time.time() - 3600
        os.utime(path, (old, old))
    fresh = home / "sessions" / ".s_y.json.zzz.tmp"
    fresh.write_text("{being written")
    out = json.loads(noetic("rebuild", "--json", home=home).stdout)
    assert out["temporary_files_removed"] == 3
    assert not any(p.exists() for p in stale) and fresh.exists()
    assert sweep_temporary_files(home, older_than_s=0) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_on_a_read_only_store_rebuild_says_so_and_doctor_reads_what_state_reads(tmp_path):
    home = tmp_path / "ro"
    history(home, tasks=1)  # WAL left open: SQLite cannot make its shared-memory file here
    state = read_only(home, "state", "--json")
    assert state.returncode == 0, state.stderr
    rebuilt = read_only(home, "rebuild", "--json")
    assert rebuilt.returncode == 3 and "Traceback" not in rebuilt.stderr
    error = json.loads(rebuilt.stdout)["error"]
    assert "read-only" in error["message"] and "rebuild" in error["message"]
    doctor = read_only(home, "doctor", "--json")
    assert "Traceback" not in doctor.stderr
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "store"]
    assert check["status"] != "fail", check
    assert "cannot be read" not in check["detail"]
    assert "read-only" in check["detail"]
