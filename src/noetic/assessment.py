"""Assessments on the 13 vectors, and the rule that turns one into an action.

An :class:`Assessment` is what an agent says about itself at one phase: a score per vector with
its rationale and evidence, and, optionally, the action it recommends. :func:`decide` derives
the action Noetic records, from the assessment, the profile's thresholds and the universal
constraints. The rule, in order (the first that fires wins):

1. **Engagement gate** (universal): ``engagement < 0.60`` → CLARIFY.
2. **Coherence minimum** (universal): ``coherence < 0.50`` → RESET.
3. The agent itself recommended CLARIFY, DELEGATE or RESET → that action. An agent that says it
   cannot go on is never overruled into going on.
4. ``clarity < profile.actions.clarify_below`` → CLARIFY.
5. ``do < profile.actions.delegate_below`` → DELEGATE.
6. Dynamic threshold (the profile trusts the agent) and the agent recommended PROCEED or
   INVESTIGATE → that action. Without a recommendation, ``dynamic_fallback_threshold`` applies.
7. ``overall confidence >= threshold`` → PROCEED, otherwise INVESTIGATE. When a recalibration map
   is in force (``noetic.calibration.recalibration``), the calibrated value of what the agent
   stated is compared instead, and at CHECK a configured release gate sets the threshold.

Rules 1, 2, 4 and 5 look only at vectors present; a partial CHECK is normally completed from the
previous assessment first (:meth:`Assessment.carry_forward`), and the record says which vectors
were carried.

Beside the vectors an assessment may state ``p_success``: the agent's probability that the task
will succeed as its outcome will judge it. The vectors' weighted confidence is a readiness score,
not a probability; calibration against outcomes uses ``p_success`` where it was given. A
POSTFLIGHT also records how it was asked for (``review``): a ``standard`` reassessment, or an
``adversarial`` one that first looked for what is wrong with the work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from noetic.errors import InvalidValueError
from noetic.plain import Plain, field, text
from noetic.untrusted import check_text_field
from noetic.vectors import VECTOR_NAMES, check_score, oriented, overall_confidence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Final


ENGAGEMENT_GATE: Final = 0.60
COHERENCE_MINIMUM: Final = 0.50


class Phase(StrEnum):
    PREFLIGHT = "preflight"
    CHECK = "check"
    POSTFLIGHT = "postflight"


class Review(StrEnum):
    """How a POSTFLIGHT reassessment was asked for."""

    STANDARD = "standard"
    ADVERSARIAL = "adversarial"


class Action(StrEnum):
    INVESTIGATE = "INVESTIGATE"
    PROCEED = "PROCEED"
    CLARIFY = "CLARIFY"
    DELEGATE = "DELEGATE"
    RESET = "RESET"


STOPPING_ACTIONS: Final = frozenset({Action.CLARIFY, Action.DELEGATE, Action.RESET})
PARTIAL_ALLOWED: Final = frozenset({Phase.CHECK})


def _check_vectors(value: Any, name: str) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise InvalidValueError(
            f"vectors must be an object of name → score, got {type(value).__name__}",
            field="vectors",
            value=value,
        )
    return {str(k): check_score(str(k), v) for k, v in value.items()}


def _member(
    kind: type[StrEnum], what: str, case: Callable[[str], str]
) -> Callable[[Any, str], Any]:
    """The check of an optional ``kind``: a member, or its value in any case and spacing."""

    def check(value: Any, name: str) -> Any:
        if value is None or isinstance(value, kind):
            return value
        if not isinstance(value, str) or case(value.strip()) not in kind._value2member_map_:
            raise InvalidValueError(
                f"unknown {what} {value!r}",
                field=name,
                value=value,
                fix=f"use one of: {', '.join(kind)}",
            )
        return kind(case(value.strip()))

    return check


class Assessment(Plain):
    """One self-assessment. PREFLIGHT and POSTFLIGHT need all 13 vectors; CHECK may be partial."""

    phase: Phase
    vectors: dict[str, float]
    rationales: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    recommended_action: Action | None = None
    note: str = ""
    carried: tuple[str, ...] = ()
    p_success: float | None = None
    review: Review | None = None
    _custom: ClassVar = {
        "vectors": _check_vectors,
        "p_success": lambda value, name: check_probability(value),
        "review": _member(Review, "review kind", str.lower),
        "note": lambda value, name: check_text_field(text(value, name), name),
        "rationales": lambda value, name: _text_map(value, name),
        "evidence": lambda value, name: _text_map(value, name),
        "recommended_action": _member(Action, "action", str.upper),
    }
    _closed: ClassVar = True

    def _check(self) -> None:
        if not self.vectors:
            raise InvalidValueError(
                f"a {self.phase.value} assessment needs at least one vector",
                field="vectors",
                value={},
            )
        if self.review is not None and self.phase != Phase.POSTFLIGHT:
            raise InvalidValueError(
                f"only a POSTFLIGHT records a review kind, not a {self.phase.value}",
                field="review",
                value=self.review.value,
            )
        if self.phase not in PARTIAL_ALLOWED and self.missing:
            raise InvalidValueError(
                f"a {self.phase.value} assessment needs all 13 vectors; missing: "
                + ", ".join(self.missing),
                field="vectors",
                value=sorted(self.vectors),
                fix="score every vector; only CHECK may be partial",
            )
        for mapping, label in ((self.rationales, "rationales"), (self.evidence, "evidence")):
            unknown = sorted(set(mapping) - set(VECTOR_NAMES))
            if unknown:
                raise InvalidValueError(
                    f"{label} names unknown vectors: {', '.join(unknown)}",
                    field=label,
                    value=unknown,
                )

    @property
    def missing(self) -> tuple[str, ...]:
        """Vectors not scored, in canonical order."""
        return tuple(v for v in VECTOR_NAMES if v not in self.vectors)

    @property
    def complete(self) -> bool:
        return not self.missing

    def carry_forward(self, previous: Assessment) -> Assessment:
        """Fill missing vectors from ``previous``; the result records which were carried."""
        carried = tuple(v for v in self.missing if v in previous.vectors)
        if not carried:
            return self
        vectors = {**{v: previous.vectors[v] for v in carried}, **self.vectors}
        return self.model_copy(update={"vectors": vectors, "carried": carried})

    @classmethod
    def from_input(cls, phase: Phase | str, data: Any) -> Assessment:
        """Build from what agents send: flat ``{"know": 0.8}``, per-vector
        ``{"know": {"score": 0.8, "rationale": "...", "evidence": "..."}}``, or an envelope
        ``{"vectors": {...}, "p_success": 0.8, "recommended_action": "PROCEED", "note": "..."}``.
        A flat mapping may carry the envelope's other fields beside the vectors (``{"know": 0.8,
        "p_success": 0.7}``): no vector shares a name with them."""
        if not isinstance(data, Mapping):
            raise InvalidValueError(
                f"an assessment must be a JSON object, got {type(data).__name__}",
                field="assessment",
                value=data,
            )
        if "vectors" in data:
            envelope = dict(data)
        else:
            envelope = {k: v for k, v in data.items() if k in _ENVELOPE_FIELDS}
            envelope["vectors"] = {k: v for k, v in data.items() if k not in _ENVELOPE_FIELDS}
        raw_vectors = envelope.pop("vectors")
        if not isinstance(raw_vectors, Mapping):
            raise InvalidValueError(
                "vectors must be an object of name → score", field="vectors", value=raw_vectors
            )
        vectors: dict[str, Any] = {}
        rationales = _text_map(envelope.pop("rationales", None), "rationales")
        evidence = _text_map(envelope.pop("evidence", None), "evidence")
        for name, value in raw_vectors.items():
            if isinstance(value, Mapping):
                if "score" not in value:
                    raise InvalidValueError(
                        f"vector {name!r} has no 'score'", field=str(name), value=dict(value)
                    )
                vectors[name] = value["score"]
                if value.get("rationale"):
                    rationales[name] = str(value["rationale"])
                if value.get("evidence"):
                    evidence[name] = str(value["evidence"])
            else:
                vectors[name] = value
        action = envelope.pop("recommended_action", envelope.pop("action", None))
        note = envelope.pop("note", "")
        p_success = envelope.pop("p_success", None)
        review = envelope.pop("review", None)
        if envelope:
            raise InvalidValueError(
                f"unknown assessment fields: {', '.join(sorted(map(str, envelope)))}",
                field="assessment",
                value=sorted(map(str, envelope)),
                fix="allowed: vectors, p_success, rationales, evidence, recommended_action, "
                "note, review",
            )
        return cls(
            phase=Phase(phase),
            vectors=vectors,
            rationales=rationales,
            evidence=evidence,
            recommended_action=action,
            note=str(note or ""),
            p_success=p_success,
            review=review,
        )


_ENVELOPE_FIELDS = frozenset(
    {"p_success", "rationales", "evidence", "recommended_action", "action", "note", "review"}
)


def check_probability(value: Any, field: str = "p_success") -> float | None:
    """A stated probability of success: ``None``, or a finite number in [0, 1] (not a bool)."""
    if value is None:
        return None
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not number or not 0.0 <= value <= 1.0:  # NaN is in no range
        raise InvalidValueError(
            f"{field} is {value!r}, outside [0, 1]"
            if number
            else f"{field} must be a probability in [0, 1], got {value!r}",
            field=field,
            value=value,
            fix=f'write it as a fraction: "{field}": 0.8',
        )
    return float(value)


def _text_map(raw: Any, label: str) -> dict[str, str]:
    """Rationales or evidence: an object of vector name → text, each text within its limit."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidValueError(
            f"{label} must be an object of vector name → text, got {type(raw).__name__}",
            field=label,
            value=raw,
            fix=f'write {label} as {{"know": "why", ...}}',
        )
    out: dict[str, str] = {}
    for name, said in raw.items():
        if not isinstance(said, str):
            raise InvalidValueError(
                f"{label} for {name!r} must be text, got {type(said).__name__}",
                field=f"{label}.{name}",
                value=said,
            )
        out[str(name)] = check_text_field(said, f"{label}.{name}")
    return out


class Thresholds(Plain):
    """What :func:`decide` needs from a profile (a :class:`noetic.profiles.Profile` provides it)."""

    confidence_threshold: float | None  # None = dynamic: the agent decides
    dynamic_fallback_threshold: float = 0.70
    gap_threshold: float = 0.60
    clarify_below: float = 0.50
    delegate_below: float = 0.35


class Calibrated(Plain):
    """What the agent's statement has meant: ``stated`` (``p_success`` where given, the vectors'
    confidence otherwise: ``stated_from``) mapped to ``value``, a calibrated probability of
    success, by the map fitted on ``outcomes`` earlier outcomes (``method``; ``scope``: the
    agent's own, its model's, or the whole store's). See ``noetic.calibration.recalibration``."""

    value: float
    stated: float
    stated_from: str
    outcomes: int
    method: str
    scope: str | None = None


class Release(Plain):
    """The release gate's threshold at CHECK: ``stated`` on the statement, ``calibrated`` the same
    threshold on the calibrated value; at most ``max_failure_rate`` of released tasks fail, with
    ``confidence`` (``released`` past tasks above it, ``failures`` of them failed)."""

    stated: float
    calibrated: float
    max_failure_rate: float
    confidence: float
    released: int
    failures: int


class Decision(Plain):
    """The action Noetic derived, with the confidence, the gaps and the rule that fired; and,
    when a recalibration map was in force, the calibrated value it compared (``calibrated``,
    left out of the JSON when there is none)."""

    _omit_none: ClassVar = ("calibrated",)

    action: Action
    confidence: float
    threshold: float | None
    rule: str
    reason: str
    gaps: tuple[str, ...]
    calibrated: Calibrated | None = None


def gaps(vectors: Mapping[str, float], gap_threshold: float) -> tuple[str, ...]:
    """Vectors whose oriented score is below the gap threshold (weakest first)."""
    weak = [(oriented(n, s), n) for n, s in vectors.items() if oriented(n, s) < gap_threshold]
    return tuple(n for _, n in sorted(weak))


def decide(
    assessment: Assessment,
    thresholds: Thresholds,
    tuning: Any = None,
    *,
    calibrated: Calibrated | None = None,
    release: Release | None = None,
    gate_note: str | None = None,
    stated: float | None = None,
) -> Decision:
    """Apply the rule in the module docstring. ``tuning`` is a :class:`noetic.vectors.Tuning`.

    With ``calibrated`` (a recalibration map in force), rule 7 compares the calibrated value,
    not the statement, and the reason quotes both. With ``release`` (the release gate at
    CHECK), rule 7 releases only a statement (``stated``: ``p_success`` where given, the
    vectors' confidence otherwise) at or above the gate's threshold; ``gate_note`` says why a
    configured gate has no threshold (the profile's applies)."""
    v = assessment.vectors
    confidence = overall_confidence(v, tuning)
    found = gaps(v, thresholds.gap_threshold)
    agent = assessment.recommended_action
    threshold = thresholds.confidence_threshold

    def made(action: Action, rule: str, reason: str, used: float | None = threshold) -> Decision:
        return Decision(
            action=action,
            confidence=round(confidence, 6),
            threshold=used,
            rule=rule,
            reason=reason,
            gaps=found,
            calibrated=calibrated,
        )

    if "engagement" in v and v["engagement"] < ENGAGEMENT_GATE:
        return made(
            Action.CLARIFY,
            "engagement_gate",
            f"engagement {v['engagement']:.2f} is below the universal gate {ENGAGEMENT_GATE:.2f}",
        )
    if "coherence" in v and v["coherence"] < COHERENCE_MINIMUM:
        return made(
            Action.RESET,
            "coherence_minimum",
            f"coherence {v['coherence']:.2f} is below the universal minimum "
            f"{COHERENCE_MINIMUM:.2f}",
        )
    if agent in STOPPING_ACTIONS:
        return made(agent, "agent_stop", f"the agent recommended {agent.value}")
    if "clarity" in v and v["clarity"] < thresholds.clarify_below:
        return made(
            Action.CLARIFY,
            "clarity",
            f"clarity {v['clarity']:.2f} is below the profile's {thresholds.clarify_below:.2f}",
        )
    if "do" in v and v["do"] < thresholds.delegate_below:
        return made(
            Action.DELEGATE,
            "capability",
            f"do {v['do']:.2f} is below the profile's {thresholds.delegate_below:.2f}",
        )
    if threshold is None:
        if agent is not None:
            return made(agent, "dynamic", f"dynamic threshold: the agent chose {agent.value}")
        threshold = thresholds.dynamic_fallback_threshold
    value = calibrated.value if calibrated is not None else confidence
    if calibrated is not None:
        said = (
            f"stated {calibrated.stated:.2f}, calibrated {value:.2f} from {calibrated.outcomes} "
            f"outcomes (method {calibrated.method})"
        )
    elif release is not None and stated is not None:
        said = f"stated {stated:.2f}"
    else:
        said = f"confidence {confidence:.2f}"
    if release is not None:
        if calibrated is not None:
            stated = calibrated.stated
        passes = (stated if stated is not None else confidence) >= release.stated
        threshold = release.calibrated if calibrated is not None else release.stated
        named = (
            f"the release gate's threshold {threshold:.2f} (at most "
            f"{release.max_failure_rate:.0%} of released tasks fail, with "
            f"{release.confidence:.0%} confidence; {release.failures} of {release.released} "
            "past released tasks failed)"
        )
    else:
        passes = value >= threshold
        named = f"the threshold {threshold:.2f}"
    note = f"; {gate_note}" if gate_note else ""
    verb = "meets" if passes else "below" if calibrated is not None else "is below"
    tail = f"{';' if calibrated is not None else ''} {verb} {named}"
    if passes:
        return made(Action.PROCEED, "threshold", said + tail + note, threshold)
    return made(
        Action.INVESTIGATE,
        "threshold",
        said + tail + note + "; " + _weakest(v, found, thresholds.gap_threshold),
        threshold,
    )


def _weakest(vectors: Mapping[str, float], found: tuple[str, ...], gap_threshold: float) -> str:
    """The gaps to work on; when no vector is a gap, the lowest three, said as such."""
    if found:
        return "weakest: " + ", ".join(found[:3])
    lowest = [n for _, n in sorted((oriented(n, s), n) for n, s in vectors.items())[:3]]
    return f"no vector below the gap threshold {gap_threshold:.2f}; lowest: " + ", ".join(lowest)
