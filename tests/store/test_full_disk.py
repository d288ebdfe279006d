"""A full disk, for real: a small tmpfs in a private mount namespace, filled to the byte count
each case needs. Once SQLite has committed, the command succeeds (the session files are copies,
and catch up on the next write); what did not happen is reported as one JSON error document."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import uniform

NOETIC = [sys.executable, "-c", "from noetic.cli import main; main()"]
SCORES = json.dumps(uniform(0.8))

# Inside a private mount namespace: a 4 MiB tmpfs over the store's folder, the prepared store
# copied in, then a filler file leaving $FREE KiB; each later argument is one noetic command
# line, run with its stdout and stderr saved beside the mount (outside it) as N.out / N.err and
# its exit code as N.rc. `free` as a command line removes the filler.
SCRIPT = r"""
set -e
store="$1"; prep="$2"; logs="$3"; free_kib="$4"; shift 4
mount -t tmpfs -o size=4m tmpfs "$store"
cp -a "$prep/." "$store/"
avail=$(df -k --output=avail "$store" | tail -1)
count=$((avail - free_kib))
if [ "$count" -gt 0 ]; then
  dd if=/dev/zero of="$store/filler" bs=1k count="$count" 2>/dev/null || true
fi
n=0
for line in "$@"; do
  n=$((n + 1))
  if [ "$line" = free ]; then rm -f "$store/filler"; continue; fi
  set +e
  eval "$line" > "$logs/$n.out" 2> "$logs/$n.err"
  echo $? > "$logs/$n.rc"
  set -e
done
"""


def _noetic_line(*args: str) -> str:
    return shlex.join([*NOETIC, *args])


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one open task whose session document is ~65 KB (a long task text)."""
    if shutil.which("unshare") is None:
        pytest.fail("needs unshare (util-linux) for a private tmpfs mount")
    home = tmp_path_factory.mktemp("prep") / "store"
    env = {**os.environ, "NOETIC_HOME": str(home), "NOETIC_INDEX": "inline"}
    for args in (
        ["bootstrap"],
        ["preflight", "t" * 60_000, "--vectors", SCORES],
        ["check", "--vectors", SCORES],
    ):
        subprocess.run([*NOETIC, *args], env=env, check=True, capture_output=True)
    return home


def on_full_disk(tmp_path: Path, prepared: Path, free_kib: int, *lines: str) -> list[dict]:
    store = tmp_path / "store"
    store.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    env = {**os.environ, "NOETIC_HOME": str(store), "NOETIC_INDEX": "inline"}
    ran = subprocess.run(
        ["unshare", *user, "--mount", "sh", "-c", SCRIPT, "sh", str(store), str(prepared),
         str(logs), str(free_kib), *lines],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if ran.returncode != 0 and "unshare" in ran.stderr:
        pytest.fail(f"mount namespaces unavailable here: {ran.stderr.strip()}")
    assert ran.returncode == 0, ran.stderr
    results = []
    for n in range(1, len(lines) + 1):
        if lines[n - 1] == "free":
            results.append({})
            continue
        out = (logs / f"{n}.out").read_text()
        results.append(
            {
                "rc": int((logs / f"{n}.rc").read_text()),
                "out": out,
                "err": (logs / f"{n}.err").read_text(),
                "json": json.loads(out) if out.strip() else None,
            }
        )
    return results


COUNTS = (
    "import glob, json, sys\n"
    "from noetic.store import Store\n"
    "home = sys.argv[1]\n"
    "with Store(home, write_files=False) as store:\n"
    "    rows = store.conn.execute('SELECT COUNT(*) FROM assessments').fetchone()[0]\n"
    "[doc] = glob.glob(home + '/sessions/*.json')\n"
    "print(json.dumps({'rows': rows, 'in_file': len(json.load(open(doc))['assessments'])}))\n"
)


def counts_line(store: Path) -> str:
    """A command line printing the assessments in SQLite and in the session's JSON file."""
    return shlex.join([sys.executable, "-c", COUNTS, str(store)])


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_write_committed_before_the_files_filled_the_disk_succeeds(tmp_path, prepared):
    check = _noetic_line("check", "--vectors", SCORES, "--json")
    counts = counts_line(tmp_path / "store")
    # room for SQLite's few pages, not for the 65 KB session document
    first, lagging, _, second, caught_up = on_full_disk(
        tmp_path, prepared, 120, check, counts, "free", check, counts
    )
    assert first["rc"] == 0, first["out"] + first["err"]
    assert first["json"]["assessment"]["assessment"]["phase"] == "check"
    assert "Traceback" not in first["err"]
    assert "could not be written" in first["err"] and "No space left" in first["err"]
    assert "catch up on the next write" in first["err"]
    # stored once, not yet in the file; with room again, the next write brings the file up
    assert lagging["json"] == {"rows": 3, "in_file": 2}
    assert second["rc"] == 0 and second["err"] == ""
    assert caught_up["json"] == {"rows": 4, "in_file": 4}


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("free_kib", [0, 40])
def test_no_room_for_the_write_is_one_json_error_and_nothing_stored(tmp_path, prepared, free_kib):
    check = _noetic_line("check", "--vectors", SCORES, "--json")
    state = _noetic_line("state", "--json")
    refused, after = on_full_disk(tmp_path, prepared, free_kib, check, state)
    assert refused["rc"] == 3, refused["out"] + refused["err"]
    assert "Traceback" not in refused["err"]
    error = refused["json"]["error"]
    assert error["type"] == "StoreError"
    assert "is full" in error["message"] and "nothing was stored" in error["message"]
    assert after["rc"] == 0, after["out"] + after["err"]  # reading still works on a full disk
    assert after["json"]["latest"]["seq"] == 2  # the prepared store's last: nothing added


@pytest.mark.slow
@pytest.mark.subprocess
def test_retries_of_one_request_on_a_full_disk_store_it_once(tmp_path, prepared):
    check = _noetic_line("check", "--vectors", SCORES, "--request-id", "r-1", "--json")
    counts = counts_line(tmp_path / "store")
    *tries, stored = on_full_disk(tmp_path, prepared, 120, check, check, check, counts)
    assert [t["rc"] for t in tries] == [0, 0, 0], [t["out"] + t["err"] for t in tries]
    assert "was already applied" in tries[1]["err"] + tries[1]["out"]
    assert stored["json"]["rows"] == 3  # the prepared two and one check, not three


SWEEP = Path(__file__).with_name("_full_disk_sweep.py")
LEVELS = list(range(0, 513, 16))  # KiB left free on a 3 MiB tmpfs


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every write command and MCP write tool at every fill level (``_full_disk_sweep.py``),
    on a store holding one session with an open task."""
    if shutil.which("unshare") is None:
        pytest.fail("needs unshare (util-linux) for a private tmpfs mount")
    root = tmp_path_factory.mktemp("sweep")
    prepared = root / "prepared"
    env = {**os.environ, "NOETIC_HOME": str(prepared), "NOETIC_INDEX": "off"}
    from ._full_disk_sweep import ALL  # gaps enough for goals

    for args in (["bootstrap"], ["preflight", "a task", "--vectors", ALL]):
        subprocess.run([*NOETIC, *args], env=env, check=True, capture_output=True)
    (root / "store").mkdir()
    out = root / "tries.jsonl"
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    ran = subprocess.run(
        ["unshare", *user, "--mount", sys.executable, "-X", "faulthandler", str(SWEEP),
         str(root / "store"),
         str(prepared), str(out), *map(str, LEVELS)],
        env=env, capture_output=True, text=True, check=False, timeout=1200,
    )  # fmt: skip
    if ran.returncode != 0 and "unshare" in ran.stderr:
        pytest.fail(f"mount namespaces unavailable here: {ran.stderr.strip()}")
    assert ran.returncode == 0, ran.stderr[-3000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.subprocess
def test_every_write_at_every_fill_level_is_reported_as_what_happened(sweep):
    """A write that failed stored nothing (so it says so truly, and running it again is safe);
    one that exited 0 stored its row; exit 6 says what was stored; and the retry, with room
    again and the same request id, never stores a second copy."""
    writes = {t["write"] for t in sweep}
    assert len(sweep) == len(LEVELS) * len(writes) and len(writes) == 13
    once = {t["write"]: t for t in sweep if t["level"] == LEVELS[-1]}
    for t in sweep:
        table, what = t["table"], f"{t['write']} at {t['level']} KiB free: {t['said'][:300]}"
        grew = t["after"][table] - t["before"][table]
        if t["rc"] == 0:
            assert grew > 0, what
        elif t["rc"] == 6:
            assert grew > 0 and "was stored" in t["said"], what
        else:
            assert t["after"] == t["before"], what  # nothing of it stored, in any table
            assert "Traceback" not in t["said"], what
        if "nothing was stored" in t["said"]:
            assert t["after"] == t["before"], what
        assert t["retry_rc"] == 0, f"{what}; then {t['retry_said'][:300]}"
        total = t["after_retry"][table] - t["before"][table]
        assert total == once[t["write"]]["after"][table] - once[t["write"]]["before"][table], what
    for write in writes:  # the sweep crosses the boundary for every write
        codes = {t["rc"] for t in sweep if t["write"] == write}
        assert 0 in codes and codes - {0}, (write, codes)
    assert once == {w: t for w, t in once.items() if t["rc"] == 0}  # room: all succeed


def test_a_write_failing_after_the_commands_earlier_writes_says_they_stay(tmp_path):
    """A command of several writes (a cascade run is one) whose later write finds the database
    full (SQLite's own limit: ``max_page_count``) says that write was not stored and that the
    earlier ones stay (exit 6), never that nothing was stored; the first write of a command
    that fails says nothing was stored."""
    from noetic.errors import StoredIncomplete, StoreError, counting_commits
    from noetic.store import Store

    with Store(tmp_path / "s", write_files=False) as store:
        with counting_commits():
            session = store.create_session(ai_id="a", profile="balanced")
            pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
            store.conn.execute(f"PRAGMA max_page_count = {pages}")
            with pytest.raises(StoredIncomplete) as partly:
                store.open_cascade(session.id, "t" * 60_000, profile="balanced")
        with counting_commits(), pytest.raises(StoreError) as failed:
            store.open_cascade(session.id, "u" * 60_000, profile="balanced")
        kept = store.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        tasks = store.conn.execute("SELECT count(*) FROM cascades").fetchone()[0]
    assert "this write was not stored, but the 1 write this command made before it" in str(
        partly.value
    )
    assert not isinstance(failed.value, StoredIncomplete)
    assert "nothing was stored" in failed.value.message
    assert (kept, tasks) == (1, 0)
