"""docs/architecture.md's layer picture is the import-linter contract in pyproject.toml: the same
layers in the same order, each naming the same packages, and every package it names exists
unless the picture marks it optional."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contract() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [set(re.split(r"\s*[:|]\s*", layer.strip())) for layer in layers["layers"]]


def _picture() -> list[set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"^```\n(interfaces.*?)^```", text, re.M | re.S)
    assert block, "the layer picture is the first plain code block starting with 'interfaces'"
    layers: list[set[str]] = []
    for line in block.group(1).splitlines():
        label, names = line[:13].strip(), line[13:57]
        found = {
            f"({n.strip('()/')})" if n.startswith("(") else n.strip("/")
            for n in names.replace("|", " ").split()
        }
        if label:
            layers.append(found)
        else:
            layers[-1] |= found
    return layers


def _bare(layers: list[set[str]]) -> list[set[str]]:
    return [{n.strip("()") for n in layer} for layer in layers]


def test_the_picture_has_the_contracts_layers_in_order():
    assert _bare(_picture()) == _bare(_contract())


def test_every_package_the_picture_names_exists_unless_marked_optional():
    src = ROOT / "src" / "noetic"
    for layer in _picture():
        for name in layer:
            exists = (src / name.strip("()")).is_dir() or (src / f"{name.strip('()')}.py").exists()
            assert exists or name.startswith("("), f"{name} is in the picture but not in noetic"
