"""An observation, the 15 cognitive layers (C01–C15, from ``layers.yaml`` beside this file) it
names, and its parser for the ``CONFIDENCE: / LAYERS: / CONTENT:`` format.

Tolerated, because the meaning is clear: any case, extra spaces, Markdown emphasis around the
markers (``**CONFIDENCE:**``), ``=`` or ``-`` instead of ``:``, a percentage confidence
(``85%``), layers written ``C01 (Emotion)``, ``c1``, ``C7`` or by name (``Emotion``), separated by
commas, spaces or semicolons, and a missing ``CONTENT:`` marker (the rest of the reply is the
content). Refused with :class:`noetic.errors.ParseError`, because the meaning is not clear: a
missing confidence, one outside [0, 1], an unknown layer, no ``LAYERS`` line, empty content.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from importlib import resources

import yaml
from pydantic import Field

from noetic.errors import ParseError
from noetic.frozen import Frozen

_MARK = r"^[\s>*_#-]*{name}[\s*_]*[:=\-][\s*_]*"
_CONF = re.compile(_MARK.format(name="confidence") + r"(.*)$", re.I | re.M)
_LAYERS = re.compile(_MARK.format(name="layers") + r"(.*)$", re.I | re.M)
_PRED = re.compile(_MARK.format(name="predicted[_ ]confidence") + r"(.*)$", re.I | re.M)
_CONTENT = re.compile(_MARK.format(name="content") + r"(.*)", re.I | re.M | re.S)
_NUMBER = re.compile(r"^\s*([-+]?\d*\.?\d+)\s*(%?)")
_LAYER_ID = re.compile(r"^c0?(\d{1,2})$", re.I)


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


class Observation(Frozen):
    stage: int = Field(ge=1)
    layers: tuple[str, ...]
    content: str
    confidence: float = Field(ge=0, le=1)
    predicted_confidence: float | None = None
    timestamp: datetime = Field(default_factory=lambda: datetime.now(UTC))


def _fraction(raw: str, what: str, text: str) -> float:
    match = _NUMBER.match(raw)
    if not match:
        raise ParseError(f"{what} is not a number: {raw.strip()[:40]!r}", raw=text)
    value = float(match.group(1)) / (100 if match.group(2) else 1)
    if not 0.0 <= value <= 1.0:
        raise ParseError(f"{what} {raw.strip()[:20]} is outside [0, 1]", raw=text)
    return value


def _layer_ids(raw: str, text: str) -> tuple[str, ...]:
    names = {x.name.lower(): x.id for x in layers().values()}
    cleaned = re.sub(r"\([^)]*\)", " ", raw)
    found: list[str] = []
    for token in re.split(r"[\s,;/|]+", cleaned.strip().strip("[].")):
        token = token.strip("*_`'\"[]")
        if not token or token.lower() in ("none", "n/a", "-"):
            continue
        match = _LAYER_ID.match(token)
        layer = f"C{int(match.group(1)):02d}" if match else names.get(token.lower())
        if layer is None or layer not in layers():
            raise ParseError(f"unknown cognitive layer {token!r} (C01–C15)", raw=text)
        if layer not in found:
            found.append(layer)
    return tuple(found)


def parse_observation(text: str, stage: int) -> Observation:
    """Parse one stage's reply (rules in the module docstring)."""
    conf = _CONF.search(text)
    if conf is None:
        raise ParseError("the reply has no CONFIDENCE line", raw=text)
    confidence = _fraction(conf.group(1), "CONFIDENCE", text)
    layer_line = _LAYERS.search(text)
    if layer_line is None:
        raise ParseError("the reply has no LAYERS line", raw=text)
    found = _layer_ids(layer_line.group(1), text)
    predicted = _PRED.search(text)
    content_match = _CONTENT.search(text)
    if content_match:
        content = content_match.group(1).strip()
    else:
        drop = {conf.group(0), layer_line.group(0), predicted.group(0) if predicted else None}
        content = "\n".join(x for x in text.splitlines() if x not in drop).strip()
    if not content:
        raise ParseError("the reply has no content", raw=text)
    return Observation(
        stage=stage,
        layers=found,
        content=content,
        confidence=confidence,
        predicted_confidence=(
            _fraction(predicted.group(1), "PREDICTED_CONFIDENCE", text) if predicted else None
        ),
    )
