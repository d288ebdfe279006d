"""Assessments a model writes itself: the canonical prompt in, an :class:`Assessment` out.

The parser is tolerant where the intent is unambiguous and strict where it is not:

* accepted: the JSON in a code fence or amid prose; vector names in any case, with spaces or
  hyphens; scores as numbers, numeric strings (``"0.85"``) or percentages (``"85%"`` → 0.85);
  per-vector objects (``{"score": …, "rationale": …}``) or a list of
  ``{"vector"|"name": …, "score": …}``; extra top-level commentary fields, which are dropped;
* ``p_success`` read like a score (``"80%"`` → 0.8); a reply without it is kept with the
  probability unstated, and calibration falls back to the vectors' confidence;
* refused: numbers above 1 that are not written as percentages (is 85 meant as 0.85 or is it
  a slip?), NaN and infinities, unknown vector names, missing vectors where the phase needs all
  13, scores that are not numbers at all.

Every refusal is a :class:`ParseError` carrying the raw reply, so the caller's one repair round
can quote it back to the model.

The request carries :func:`reply_schema` as its JSON schema, so a provider with native structured
output (OpenAI's ``response_format``, Anthropic's forced tool) holds the model to the shape the
prompt describes; the parser above reads the reply either way.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

from noetic.assessment import Action, Assessment, Phase, Review
from noetic.assessment_prompt import build_assessment_prompt
from noetic.errors import InvalidValueError, ParseError
from noetic.llm.base import Provider, Request
from noetic.llm.structured import complete_parsed, extract_json
from noetic.profiles import Profile, check_postflight_mode
from noetic.vectors import VECTOR_NAMES

SYSTEM = (
    "You are assessing your own epistemic state honestly. Scores are fractions in [0, 1]. "
    "Reply with a single JSON object."
)
_KEEP = ("recommended_action", "action", "note", "rationales", "evidence", "p_success")
_PERCENT = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*%\s*$")


def _name(key: Any) -> str:
    return _spelled(str(key))


@functools.lru_cache(maxsize=1024)
def _spelled(key: str) -> str:
    """A name in the tolerant spelling (the same few names come in every reply)."""
    return re.sub(r"[\s\-]+", "_", key.strip().lower())


def _score(name: str, value: Any) -> Any:
    """A score as a float where intent is clear; otherwise the value, for validation to refuse."""
    what = name if name == "p_success" else f"vector {name!r}"
    if isinstance(value, str):
        text = value.strip()
        percent = _PERCENT.match(text)
        if percent:
            number = float(percent.group(1))
            if not 0 <= number <= 100:
                raise InvalidValueError(f"{what} is {value!r}, outside 0–100%", field=name)
            return number / 100
        try:
            return float(text)
        except ValueError:
            raise InvalidValueError(
                f"{what} has a score that is not a number: {value!r}", field=name
            ) from None
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        raise InvalidValueError(f"{what} is {value!r}; give a number in [0, 1]", field=name)
    return value


def _vectors(raw: Any) -> dict[str, Any]:
    if isinstance(raw, list):
        items = {}
        for entry in raw:
            if not isinstance(entry, Mapping):
                raise InvalidValueError("a vector list entry is not an object", field="vectors")
            key = entry.get("vector", entry.get("name"))
            if key is None:
                raise InvalidValueError("a vector list entry has no 'vector' name", field="vectors")
            items[key] = {k: v for k, v in entry.items() if k not in ("vector", "name")}
        raw = items
    if not isinstance(raw, Mapping):
        raise InvalidValueError("'vectors' must be an object", field="vectors")
    out: dict[str, Any] = {}
    spelled: dict[str, Any] = {}
    for key, value in raw.items():
        name = _name(key)
        if name in spelled:
            raise InvalidValueError(
                f"vectors {spelled[name]!r} and {key!r} both name {name!r}; give it once",
                field=name,
                value=[spelled[name], key],
            )
        spelled[name] = key
        if isinstance(value, Mapping):
            entry = {_name(k): v for k, v in value.items()}
            if "score" not in entry and "value" in entry:
                entry["score"] = entry.pop("value")
            if "score" in entry:
                entry["score"] = _score(name, entry["score"])
            out[name] = {k: v for k, v in entry.items() if k in ("score", "rationale", "evidence")}
        else:
            out[name] = _score(name, value)
    return out


def _texts(raw: Any, field: str) -> Any:
    """Rationales or evidence keyed by vector names in the tolerant spelling."""
    if not isinstance(raw, Mapping):
        return raw  # refused with a clear message by Assessment.from_input
    return {_name(k): v for k, v in raw.items()}


def parse_assessment_reply(
    text: str, phase: Phase | str, *, review: Review | None = None
) -> Assessment:
    """Parse a model's reply into an :class:`Assessment` (rules in the module docstring);
    ``review``: the POSTFLIGHT review it answers, recorded with it (never the reply's own)."""
    phase = Phase(phase)
    try:
        data = extract_json(text)
        if "vectors" not in data and isinstance(data.get("assessment"), Mapping):
            data = dict(data["assessment"])
        # the vectors under "vectors", or (a flat reply) every field but the envelope's own
        flat = {k: v for k, v in data.items() if k not in _KEEP}
        envelope = {k: data[k] for k in _KEEP if k in data}
        envelope["vectors"] = _vectors(data.get("vectors", flat))
        for field in ("rationales", "evidence"):
            if field in envelope:
                envelope[field] = _texts(envelope[field], field)
        if "p_success" in envelope:
            envelope["p_success"] = _score("p_success", envelope["p_success"])
        if review is not None:
            envelope["review"] = review
        return Assessment.from_input(phase, envelope)
    except ParseError:
        raise
    except InvalidValueError as exc:
        raise ParseError(exc.message, raw=text) from None
    except (TypeError, ValueError) as exc:
        raise ParseError(f"malformed assessment: {exc}", raw=text) from None


def reply_schema(phase: Phase) -> dict[str, Any]:
    """The JSON schema of an assessment reply: every vector at PREFLIGHT and POSTFLIGHT, those
    that changed at CHECK, each a score in [0, 1] with its rationale and evidence, and the
    probability of success."""
    vector = {
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string"},
            "evidence": {"type": "string"},
        },
        "required": ["score"],
    }
    vectors = {
        "type": "object",
        "properties": {name: vector for name in VECTOR_NAMES},
        "additionalProperties": False,
        "required": [] if phase == Phase.CHECK else list(VECTOR_NAMES),
    }
    return {
        "title": "assessment",
        "type": "object",
        "properties": {
            "vectors": vectors,
            "p_success": {"type": "number", "minimum": 0, "maximum": 1},
            "recommended_action": {"type": "string", "enum": [a.value for a in Action]},
            "note": {"type": "string"},
        },
        "required": ["vectors", "p_success"],
    }


async def assess_with_model(
    provider: Provider,
    task: str,
    phase: Phase | str,
    profile: Profile | None = None,
    previous: Assessment | None = None,
    *,
    findings: str = "",
    review: Review | str | None = None,
    max_tokens: int = 3000,
    record: str | None = None,
) -> Assessment:
    """Ask the model for its own assessment; one repair round; :class:`ParseError` after.

    ``findings`` (what investigation turned up, or what the work produced) is put before the
    prompt so a reassessment rests on evidence. ``review`` (POSTFLIGHT only) asks for a standard
    or an adversarial review, and the assessment records which. ``record``: the agent's own
    record against its outcomes, said in the prompt."""
    phase = Phase(phase)
    prompt = build_assessment_prompt(task, phase, profile, previous, review, record)
    if findings.strip():
        prompt = f"What you have found or done so far:\n{findings.strip()}\n\n{prompt}"
    request = Request.of(
        prompt, system=SYSTEM, max_tokens=max_tokens, json_schema=reply_schema(phase)
    )

    kind = None
    if phase == Phase.POSTFLIGHT:
        kind = Review(review) if review is not None else Review.STANDARD

    def parse(text: str) -> Assessment:
        parsed = parse_assessment_reply(text, phase, review=kind)
        if phase == Phase.POSTFLIGHT and profile is not None:
            check_postflight_mode(parsed, profile)  # evidence the profile wants: ask again
        return parsed

    return await complete_parsed(provider, request, parse)
