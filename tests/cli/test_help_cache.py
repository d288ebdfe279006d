"""``noetic --help`` is typer's text: built by typer once, then replayed from the cache without
loading typer, click or rich; anything the text depends on changing builds it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .._modules import modules_loaded

UI = ("typer", "click", "rich", "pydantic", "yaml")


def helped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    for name in ("NOETIC_CLI_FAST", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    report = modules_loaded(["--help"], UI, tmp_path)
    assert report["code"] == 0, report["output"]
    return {"text": report["output"][0], "loaded": report["loaded"]}


@pytest.mark.subprocess
def test_help_is_typers_text_replayed_without_typer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path / "cache"))
    typer_text = helped(tmp_path, monkeypatch, COLUMNS="100", NOETIC_CLI_FAST="0")["text"]
    assert "Usage: noetic [OPTIONS]" in typer_text and "preflight" in typer_text
    built = helped(tmp_path, monkeypatch, COLUMNS="100")
    assert built["text"] == typer_text and "typer" in built["loaded"]
    replayed = helped(tmp_path, monkeypatch, COLUMNS="100")
    assert replayed == {"text": typer_text, "loaded": []}
    # another terminal width: typer's own text for it, not the one kept for 100 columns
    narrow = helped(tmp_path, monkeypatch, COLUMNS="60")
    typer_narrow = helped(tmp_path, monkeypatch, COLUMNS="60", NOETIC_CLI_FAST="0")
    assert narrow["text"] == typer_narrow["text"]
    assert narrow["text"] != typer_text and "typer" in narrow["loaded"]
