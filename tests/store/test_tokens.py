"""Access tokens in the store (migration m018), on both backends: made, listed, revoked, kept
only as hashes; and the ``written_by`` column a write made under a token records."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import InvalidValueError, NotFoundError
from noetic.events import Event, EventKind
from noetic.operations.access_tokens import (
    NAME,
    Access,
    check_name,
    create_token,
    list_tokens,
    revoke_token,
)
from noetic.store.writer import writing_as

from .test_store import record


def test_a_token_is_shown_once_and_only_its_hash_is_stored(store):
    made = create_token(store, "alice")
    token = made["token"]
    assert len(token) >= 43  # 32 random bytes, URL-safe base64
    stored = store.conn.execute("SELECT name, hash, read_only FROM tokens").fetchall()
    assert [tuple(r) for r in stored] == [("alice", hashlib.sha256(token.encode()).hexdigest(), 0)]
    everything = str([tuple(r) for r in store.conn.execute("SELECT * FROM tokens")])
    assert token not in everything
    listed = list_tokens(store)
    assert listed == [{k: v for k, v in made.items() if k != "token"}]
    assert "hash" not in listed[0] and "token" not in listed[0]


def test_two_tokens_differ_and_read_only_is_kept(store):
    a = create_token(store, "alice")
    b = create_token(store, "bob", read_only=True)
    assert a["token"] != b["token"]
    assert [(t["name"], t["read_only"]) for t in list_tokens(store)] == [
        ("alice", False),
        ("bob", True),
    ]


def test_revoking_marks_the_token_and_keeps_its_name(store):
    create_token(store, "alice")
    revoked = revoke_token(store, "alice")
    assert revoked["name"] == "alice" and revoked["revoked_at"] is not None
    with pytest.raises(InvalidValueError, match="revoked already"):
        revoke_token(store, "alice")
    with pytest.raises(InvalidValueError, match="was revoked; a revoked name is kept"):
        create_token(store, "alice")
    with pytest.raises(NotFoundError, match="no token called 'carol'"):
        revoke_token(store, "carol")


def test_a_name_in_use_is_refused(store):
    create_token(store, "alice")
    with pytest.raises(InvalidValueError, match="'alice' exists"):
        create_token(store, "alice")
    assert len(list_tokens(store)) == 1


@given(st.text(max_size=80))
def test_a_token_name_is_accepted_exactly_when_it_matches_the_rule(name):
    if NAME.fullmatch(name):
        assert check_name(name) == name
    else:
        with pytest.raises(InvalidValueError, match="is not a token name"):
            check_name(name)


def test_writes_under_a_token_record_its_name_and_others_none(store):
    session = store.create_session(ai_id="a", profile="default")
    record(store, session.id)
    store.append_event(Event(kind=EventKind.DECISION, session_id=session.id, data={}))
    with writing_as("alice"):
        record(store, session.id, phase="check")
        store.append_event(Event(kind=EventKind.DECISION, session_id=session.id, data={}))
    by = store.conn.execute("SELECT written_by FROM assessments ORDER BY seq").fetchall()
    assert [r[0] for r in by] == [None, "alice"]
    events = store.conn.execute("SELECT written_by FROM events ORDER BY id").fetchall()
    assert [r[0] for r in events] == [None, "alice"]


def test_access_knows_live_tokens_and_refuses_revoked_and_wrong_ones(tmp_path):
    from noetic.store import Store

    with Store(tmp_path / "s") as s:
        alice = create_token(s, "alice")["token"]
        reader = create_token(s, "reader", read_only=True)["token"]
    access = Access(tmp_path / "s", None)
    try:
        assert access.required
        who = access.bearer(f"Bearer {alice}")
        assert who is not None and (who.name, who.read_only) == ("alice", False)
        ro = access.token(reader)
        assert ro is not None and ro.read_only
        assert access.bearer(alice) is None  # no "Bearer " prefix
        assert access.bearer("Bearer " + alice[:-1]) is None
        cookie = access.login(who)
        assert alice not in cookie and access.cookie(cookie) == who
        assert access.cookie("alice:" + "0" * 64) is None
        with Store(tmp_path / "s") as s:
            revoke_token(s, "alice")
        assert access.bearer(f"Bearer {alice}") is None
        assert access.cookie(cookie) is None
    finally:
        access.close()


def test_a_login_session_is_a_new_random_id_held_by_the_server_alone(tmp_path):
    """Each login gets its own id; nothing in the database (the token's hash, the old cookie's
    HMAC of it) opens a session; logging out ends one session and not the others."""
    import hmac

    from noetic.store import Store

    with Store(tmp_path / "s") as s:
        create_token(s, "alice")
        stored = s.conn.execute("SELECT hash FROM tokens WHERE name = 'alice'").fetchone()[0]
    access = Access(tmp_path / "s", "admin-secret")
    try:
        who = access.token("admin-secret")
        assert who is not None
        first, second = access.login(who), access.login(who)
        assert first != second and len(first) >= 43
        assert access.cookie(first) == who and access.cookie(second) == who
        forged = hmac.new(stored.encode(), b"noetic dashboard session", hashlib.sha256)
        for value in (stored, "alice:" + forged.hexdigest(), forged.hexdigest()):
            assert access.cookie(value) is None
        access.logout(first)
        assert access.cookie(first) is None and access.cookie(second) == who
    finally:
        access.close()
    again = Access(tmp_path / "s", "admin-secret")  # a restarted server: every session ends
    try:
        assert again.cookie(second) is None
    finally:
        again.close()


def test_without_tokens_or_an_admin_token_access_is_not_required(tmp_path):
    access = Access(tmp_path / "nothing-here", None)
    assert not access.required
    admin = Access(tmp_path / "nothing-here", "s3cret")
    assert admin.required and admin.token("s3cret") is not None and admin.token("s3cre") is None
    access.close()
    admin.close()


def test_any_header_or_cookie_value_is_refused_without_an_error(tmp_path):
    access = Access(tmp_path / "s", "admin-secret")

    @given(st.text(max_size=200))
    def refused(value):
        assert access.bearer(value) is None or value == "Bearer admin-secret"
        assert access.cookie(value) is None
        assert access.cookie("alice:" + value) is None

    try:
        refused()
    finally:
        access.close()


def test_whether_a_token_is_required_is_asked_on_each_request(tmp_path):
    from noetic.operations.access_tokens import ANYONE
    from noetic.store import Store

    home = tmp_path / "s"
    Store(home).close()
    access = Access(home, None)
    beyond = Access(home, None, loopback=False)
    try:
        assert not access.required and access.admit(None) is ANYONE
        assert access.admit("Bearer anything") is ANYONE  # as if there were no check at all
        assert beyond.required and beyond.admit(None) is None  # off loopback: always
        with Store(home) as s:
            alice = create_token(s, "alice")["token"]
        assert access.required and access.admit(None) is None
        assert access.admit("Bearer anything") is None
        who = access.admit(f"Bearer {alice}")
        assert who is not None and who.name == "alice" and not who.open
        with Store(home) as s:
            revoke_token(s, "alice")
        assert access.admit(None) is ANYONE and access.admit(f"Bearer {alice}") is ANYONE
        assert beyond.admit(None) is None and beyond.admit(f"Bearer {alice}") is None
    finally:
        access.close()
        beyond.close()


@pytest.mark.sqlite_only  # counts the statements on SQLite's connection
def test_a_request_costs_at_most_one_query_beyond_its_tokens_own_lookup(tmp_path):
    from noetic.store import Store

    home = tmp_path / "s"
    Store(home).close()
    access = Access(home, None)
    try:
        statements: list[str] = []
        access._reader().conn.set_trace_callback(statements.append)

        def queries(header: str | None) -> int:
            statements.clear()
            access.admit(header)
            return len(statements)

        assert queries(None) == 1  # no token yet: is there one?
        with Store(home) as s:
            alice = create_token(s, "alice")["token"]
        assert queries(f"Bearer {alice}") == 1  # its lookup, as before
        assert queries(None) == 1
        assert queries("Bearer wrong") == 2
        assert all("tokens" in sql for sql in statements)
    finally:
        access.close()


def test_a_server_keeps_a_bounded_number_of_logins_ending_the_oldest(tmp_path, monkeypatch):
    from noetic.operations import access_tokens as tokens

    monkeypatch.setattr(tokens, "MAX_LOGINS", 3)
    access = Access(tmp_path / "s", "admin-secret")
    try:
        who = access.token("admin-secret")
        assert who is not None
        sessions = [access.login(who) for _ in range(5)]
        assert [access.cookie(s) is not None for s in sessions] == [False, False, True, True, True]
    finally:
        access.close()
