"""Each agent's current session: its own file, never another agent's."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.errors import StoreError
from noetic.store.current import (
    DEFAULT_AI_ID,
    agents_with_current_sessions,
    current_session_path,
    read_current_session,
    write_current_session,
)


def test_agents_keep_their_own_current_session(tmp_path):
    write_current_session(tmp_path, "s_a", "a")
    write_current_session(tmp_path, "s_b", "b")
    write_current_session(tmp_path, "s_a2", "a")
    assert read_current_session(tmp_path, "a") == "s_a2"
    assert read_current_session(tmp_path, "b") == "s_b"
    assert read_current_session(tmp_path) is None  # the default agent has none
    assert agents_with_current_sessions(tmp_path) == {"a": "s_a2", "b": "s_b"}


def test_ids_that_look_alike_as_file_names_stay_apart(tmp_path):
    for ai_id in ("a b", "a_b", "a/b", "../a_b", "A_B"):
        write_current_session(tmp_path, f"s_{ai_id}", ai_id)
    for ai_id in ("a b", "a_b", "a/b", "../a_b", "A_B"):
        assert read_current_session(tmp_path, ai_id) == f"s_{ai_id}"
        assert current_session_path(tmp_path, ai_id).parent == tmp_path / "current"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=6, unique=True))
def test_any_ids_round_trip_without_colliding(tmp_path_factory, ids):
    home = tmp_path_factory.mktemp("home")
    for i, ai_id in enumerate(ids):
        write_current_session(home, f"s_{i}", ai_id)
    assert [read_current_session(home, ai_id) for ai_id in ids] == [
        f"s_{i}" for i in range(len(ids))
    ]
    assert len(list((home / "current").iterdir())) == len(ids)


@pytest.mark.parametrize("content", ["{not json", "[]", '{"ai_id": "someone else"}', "\udcff"])
def test_a_damaged_file_is_an_error_naming_it(tmp_path, content):
    path = current_session_path(tmp_path, "a")
    path.parent.mkdir(parents=True)
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(StoreError) as caught:
        read_current_session(tmp_path, "a")
    assert str(path) in caught.value.message
    assert "noetic bootstrap --ai-id a" in caught.value.fix


def test_the_default_agent_reads_an_older_stores_single_current_session(tmp_path):
    (tmp_path / "current_session").write_text("s_old\n")
    assert read_current_session(tmp_path) == "s_old"
    assert read_current_session(tmp_path, "claude") is None
    assert agents_with_current_sessions(tmp_path) == {DEFAULT_AI_ID: "s_old"}
    write_current_session(tmp_path, "s_new")
    assert read_current_session(tmp_path) == "s_new"
