"""The file tools: read, write, edit and list inside a sandbox root, and every way out refused."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.errors import ValidationError
from noetic.tools.base import ToolResult
from noetic.tools.file_tools import SandboxRoot, file_tools


@pytest.fixture
def box(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("one\ntwo\nthree\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    return workspace, outside


def call(workspace: Path, name: str, **arguments: object) -> ToolResult:
    tools = {t.name: t for t in file_tools(workspace)}
    return asyncio.run(tools[name].call(arguments))


@pytest.mark.subprocess
def test_read_write_edit_list_round_trip(box: tuple[Path, Path]) -> None:
    ws, _ = box
    assert call(ws, "file_write", path="pkg/new.txt", content="alpha\nbeta\n").ok
    assert (ws / "pkg" / "new.txt").read_text() == "alpha\nbeta\n"
    read = call(ws, "file_read", path="pkg/new.txt")
    assert read.output.splitlines() == ["     1 alpha", "     2 beta"]
    assert call(ws, "file_edit", path="pkg/new.txt", old="beta", new="gamma").ok
    assert (ws / "pkg" / "new.txt").read_text() == "alpha\ngamma\n"
    listing = call(ws, "file_list").output.splitlines()
    assert listing == ["pkg/", "  new.txt", "src/", "  app.py"]


def test_read_pages_through_a_long_file(box: tuple[Path, Path]) -> None:
    ws, _ = box
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    page = call(ws, "file_read", path="long.txt", offset=4, limit=3).output.splitlines()
    assert page[:3] == ["     4 line 4", "     5 line 5", "     6 line 6"]
    assert page[3] == "… 4 more line(s); read on with offset=7"


@pytest.mark.subprocess
def test_edit_refuses_ambiguous_or_missing_text(box: tuple[Path, Path]) -> None:
    ws, _ = box
    (ws / "dup.txt").write_text("x = 1\nx = 1\n")
    ambiguous = call(ws, "file_edit", path="dup.txt", old="x = 1", new="x = 2")
    assert not ambiguous.ok and "occurs 2 times" in (ambiguous.error or "")
    missing = call(ws, "file_edit", path="dup.txt", old="y", new="z")
    assert not missing.ok and "does not occur" in (missing.error or "")
    assert (ws / "dup.txt").read_text() == "x = 1\nx = 1\n"  # nothing written on a refusal
    assert call(ws, "file_edit", path="dup.txt", old="x = 1", new="x = 2", replace_all=True).ok
    assert (ws / "dup.txt").read_text() == "x = 2\nx = 2\n"


@pytest.mark.subprocess
def test_a_write_keeps_the_files_mode(box: tuple[Path, Path]) -> None:
    ws, _ = box
    script = ws / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    assert call(ws, "file_write", path="run.sh", content="echo 2\n").ok
    assert script.stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "src/../../outside/secret.txt", "/etc/hostname", "..", "/"],
)
def test_dot_dot_and_absolute_paths_cannot_escape(box: tuple[Path, Path], path: str) -> None:
    ws, outside = box
    for name, args in [
        ("file_read", {"path": path}),
        ("file_write", {"path": path, "content": "pwned"}),
        ("file_list", {"path": path}),
    ]:
        result = call(ws, name, **args)
        assert not result.ok
        assert result.argument == "path"
    assert (outside / "secret.txt").read_text() == "top secret\n"


def test_an_absolute_path_inside_the_workspace_is_fine(box: tuple[Path, Path]) -> None:
    ws, _ = box
    assert call(ws, "file_read", path=str(ws / "src" / "app.py")).ok


def test_symlinks_pointing_out_are_refused_and_inside_ones_followed(box: tuple[Path, Path]) -> None:
    ws, outside = box
    (ws / "leak").symlink_to(outside)
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    (ws / "code").symlink_to(ws / "src")
    assert not call(ws, "file_read", path="leak/secret.txt").ok
    assert not call(ws, "file_read", path="leak.txt").ok
    assert not call(ws, "file_write", path="leak/new.txt", content="x").ok
    assert not call(ws, "file_write", path="leak.txt", content="x").ok
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert "one" in call(ws, "file_read", path="code/app.py").output
    assert "leak -> " in call(ws, "file_list").output


@pytest.mark.subprocess
def test_a_folder_swapped_for_a_symlink_after_the_check_is_refused(box: tuple[Path, Path]) -> None:
    ws, outside = box
    (outside / "app.py").write_text("outside\n")
    root = SandboxRoot(ws)
    checked = root.locate

    def check_then_swap(path: str) -> tuple[str, list[str]]:
        result = checked(path)  # the check passes on the real folder…
        shutil.rmtree(ws / "src")  # …then the folder becomes a symlink out
        (ws / "src").symlink_to(outside)
        return result

    root.locate = check_then_swap
    with pytest.raises(ValidationError, match="changed while it was opened"):
        root.read_bytes("src/app.py")
    (ws / "src").unlink()  # the symlink: put the real folder back for the write
    (ws / "src").mkdir()
    with pytest.raises(ValidationError, match="changed while it was opened"):
        root.write_text("src/app.py", "pwned")
    assert (outside / "app.py").read_text() == "outside\n"


@pytest.mark.subprocess
def test_a_file_swapped_for_a_symlink_after_the_check(box: tuple[Path, Path]) -> None:
    ws, outside = box
    root = SandboxRoot(ws)
    checked = root.locate

    def check_then_swap(path: str) -> tuple[str, list[str]]:
        result = checked(path)
        (ws / "src" / "app.py").unlink()
        (ws / "src" / "app.py").symlink_to(outside / "secret.txt")
        return result

    root.locate = check_then_swap
    with pytest.raises(ValidationError, match="changed while it was opened"):
        root.read_bytes("src/app.py")
    (ws / "src" / "app.py").unlink()
    (ws / "src" / "app.py").write_text("one\n")
    root.write_text("src/app.py", "replaced\n")  # a rename replaces the link, never writes through
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (ws / "src" / "app.py").is_symlink()


def test_protected_paths_are_refused_by_the_policy_rule(box: tuple[Path, Path]) -> None:
    ws, _ = box
    (ws / ".git" / "hooks").mkdir(parents=True)
    result = call(ws, "file_write", path=".git/hooks/pre-commit", content="curl x | sh")
    assert not result.ok and "protected-path" in (result.error or "")
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not call(ws, "file_write", path=".noetic/noetic.db", content="x").ok


@pytest.mark.subprocess
def test_bad_input_is_named(box: tuple[Path, Path]) -> None:
    ws, _ = box
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02")
    (ws / "latin.txt").write_bytes(b"caf\xe9\n")
    assert "binary" in (call(ws, "file_read", path="blob.bin").error or "")
    assert "caf\ufffd" in call(ws, "file_read", path="latin.txt").output
    assert "NUL" in (call(ws, "file_read", path="a\0b").error or "")
    assert "no file" in (call(ws, "file_read", path="missing.txt").error or "")
    assert "folder" in (call(ws, "file_write", path="src", content="x").error or "")
    assert call(ws, "file_read", path="src/app.py", offset=0).argument == "offset"


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(
        st.sampled_from(["..", ".", "src", "leak", "x", "/", "//", "app.py"]), max_size=6
    )
)
def test_no_generated_path_reaches_outside(box: tuple[Path, Path], parts: list[str]) -> None:
    ws, outside = box
    if not (ws / "leak").exists():
        (ws / "leak").symlink_to(outside)
    path = "/".join(parts) or "."
    root = SandboxRoot(ws)
    try:
        real, _ = root.locate(path)
    except ValidationError:
        return
    assert real == str(ws.resolve()) or real.startswith(str(ws.resolve()) + "/")
