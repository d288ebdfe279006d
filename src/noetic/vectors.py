"""The 13 epistemic vectors, their four tiers, and the overall-confidence formula.

Every vector is a float in [0, 1]. Twelve are grouped into four tiers; ``uncertainty`` is the
meta-vector and stands outside them.

=============  ======  ===============================================
tier           weight  vectors
=============  ======  ===============================================
engagement     0.15    engagement
foundation     0.35    know, do, context
comprehension  0.25    clarity, coherence, signal, density
execution      0.25    state, change, completion, impact
=============  ======  ===============================================

Two vectors point the other way: a high value is worse.

* ``density`` is cognitive load: how much tangled information must be held at once.
  0.0 = easily managed, 1.0 = overloaded. It enters the comprehension tier as ``1 - density``.
* ``uncertainty`` is how unsure the agent is overall. 0.0 = sure, 1.0 = lost. It never enters a
  tier; it discounts the result (below).

The formula (``overall_confidence``): the mean of each tier's vectors present (``1 - density``
for density), weighted by the tier's weight times the profile's multiplier and renormalised (the
multipliers change the balance between tiers, never the scale), discounted by
``UNCERTAINTY_DISCOUNT · uncertainty_weight · uncertainty``, times ``confidence_weight``, clamped
to [0, 1]. A profile may choose the seed's formula instead (``tuning.confidence_formula: seed``:
no uncertainty term, density as written). ``docs/vectors.md`` gives both step by step, with a
worked example and why Noetic's is the default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum

from noetic.errors import InvalidValueError
from noetic.plain import Plain
from noetic.vector_names import META_VECTOR as META_VECTOR
from noetic.vector_names import TIERS as TIERS
from noetic.vector_names import VECTOR_NAMES as VECTOR_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, Final


TIER_WEIGHTS: Final[dict[str, float]] = {
    "engagement": 0.15,
    "foundation": 0.35,
    "comprehension": 0.25,
    "execution": 0.25,
}
INVERTED: Final[frozenset[str]] = frozenset({"density", "uncertainty"})
UNCERTAINTY_DISCOUNT: Final = 0.25

DESCRIPTIONS: Final[dict[str, str]] = {
    "engagement": "Genuine interest in and investment in the task",
    "know": "Domain knowledge relevant to the task",
    "do": "Capability to carry the task out",
    "context": "Understanding of the situation around the task",
    "clarity": "How clear the task and its requirements are",
    "coherence": "Internal consistency of the understanding",
    "signal": "How much of the available information is actionable",
    "density": "Cognitive load: 0 = easily managed, 1 = overloaded (high is worse)",
    "state": "Understanding of the current state of things",
    "change": "Ability to manage the changes the task needs",
    "completion": "A clear path to completing the task",
    "impact": "Understanding of the consequences of the work",
    "uncertainty": "Overall uncertainty: 0 = sure, 1 = lost (high is worse)",
}

TIER_OF: Final[dict[str, str]] = {v: tier for tier, names in TIERS.items() for v in names}


class ConfidenceFormula(StrEnum):
    """Which overall-confidence formula a profile uses (module docstring)."""

    NOETIC = "noetic"
    SEED = "seed"


class Tuning(Plain):
    """A profile's multipliers on the formula. See the module docstring for where each enters."""

    confidence_formula: ConfidenceFormula = ConfidenceFormula.NOETIC

    confidence_weight: float = 1.0
    engagement_weight: float = 1.0
    foundation_weight: float = 1.0
    comprehension_weight: float = 1.0
    execution_weight: float = 1.0
    uncertainty_weight: float = 1.0
    _bounds: ClassVar = {
        **{f"{w}_weight": (0, 3, True) for w in ("confidence", *TIERS)},
        "uncertainty_weight": (0, 3, False),
    }
    _closed: ClassVar = True

    def tier_multiplier(self, tier: str) -> float:
        return float(getattr(self, f"{tier}_weight"))


def check_score(name: str, value: object) -> float:
    """Validate one vector score; return it as a float or raise naming the vector and value."""
    if name not in TIER_OF and name != META_VECTOR:
        raise InvalidValueError(
            f"unknown vector {name!r}",
            field=name,
            value=value,
            fix=f"use one of: {', '.join(VECTOR_NAMES)}",
        )
    number = None if isinstance(value, bool) else value  # a bool is no score
    if not isinstance(number, int | float) or not 0.0 <= number <= 1.0:  # NaN is in no range
        finite = isinstance(number, int | float) and math.isfinite(number)
        kind = "finite number" if isinstance(number, int | float) else "number"
        raise InvalidValueError(
            f"vector {name!r} is {value!r}, outside [0, 1]"
            if finite
            else f"vector {name!r} must be a {kind} in [0, 1], got {value!r}",
            field=name,
            value=value,
            fix="scores are fractions: write 0.85, not 85" if finite else None,
        )
    return float(number)


def oriented(name: str, value: float) -> float:
    """The score with 'higher is better' orientation (inverts density and uncertainty)."""
    return 1.0 - value if name in INVERTED else value


def tier_scores(vectors: Mapping[str, float], *, as_written: bool = False) -> dict[str, float]:
    """Mean oriented score per tier, over the vectors present. Tiers with none are omitted.
    ``as_written`` takes density as given (the seed's formula) instead of ``1 - density``."""
    scores: dict[str, float] = {}
    for tier, names in TIERS.items():
        present = [
            vectors[n] if as_written else oriented(n, vectors[n]) for n in names if n in vectors
        ]
        if present:
            scores[tier] = sum(present) / len(present)
    return scores


def overall_confidence(vectors: Mapping[str, float], tuning: Tuning | None = None) -> float:
    """Overall confidence from the vectors present, under a profile's tuning (module docstring)."""
    tuning = tuning or Tuning()
    seed = tuning.confidence_formula == ConfidenceFormula.SEED
    scores = tier_scores(vectors, as_written=seed)
    if not scores:
        raise InvalidValueError(
            "cannot compute confidence: no tiered vector present", field="vectors", value={}
        )
    weights = {t: TIER_WEIGHTS[t] * tuning.tier_multiplier(t) for t in scores}
    base = sum(weights[t] * scores[t] for t in scores) / sum(weights.values())
    if seed:
        return min(1.0, max(0.0, tuning.confidence_weight * base))
    uncertainty = vectors.get(META_VECTOR, 0.0)
    discount = min(
        1.0, max(0.0, 1.0 - UNCERTAINTY_DISCOUNT * tuning.uncertainty_weight * uncertainty)
    )
    return min(1.0, max(0.0, tuning.confidence_weight * base * discount))
