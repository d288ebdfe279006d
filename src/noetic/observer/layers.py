"""The 15 cognitive layers (C01–C15), loaded from ``layers.yaml`` beside this file."""

from __future__ import annotations

import functools
from importlib import resources

import yaml

from noetic.frozen import Frozen


class Layer(Frozen):
    id: str
    name: str
    description: str


@functools.cache
def layers() -> dict[str, Layer]:
    text = (resources.files("noetic.observer") / "layers.yaml").read_text(encoding="utf-8")
    return {key: Layer(id=key, **value) for key, value in yaml.safe_load(text).items()}


def layer_list() -> str:
    """One line per layer, for prompts."""
    return "\n".join(f"- {x.id}: {x.name} - {x.description}" for x in layers().values())
