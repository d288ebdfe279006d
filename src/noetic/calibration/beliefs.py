"""Bayesian beliefs about an agent's calibration bias.

**Beliefs.** For each AI and each prediction (``overall`` confidence, and every vector read as a
'higher is better' prediction of success), the bias is ``b = predicted − observed`` per outcome.
The belief about the mean bias ``μ`` is Normal, updated by the conjugate Normal–Normal rule with
a known per-outcome noise variance ``σ² = 0.2`` (a Bernoulli outcome around a mid-range
confidence varies by about p(1−p) ≈ 0.2) from the prior ``N(0, 0.2²)``:

    precision = 1/τ₀² + n/σ²,   mean = (Σ b / σ²) / precision,   variance = 1 / precision

A bias is *credible* when the 95% interval ``mean ± 1.96·√variance`` excludes zero. Beliefs are
learned from recorded outcomes only, never from the agent's own self-reports.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from noetic.frozen import Frozen

PRIOR_MEAN: Final = 0.0
PRIOR_VARIANCE: Final = 0.2**2
NOISE_VARIANCE: Final = 0.2
Z95: Final = 1.959964


class Belief(Frozen):
    target: str
    mean: float
    variance: float
    evidence: int
    low: float
    high: float
    credible: bool
    direction: str


def update_belief(target: str, biases: Sequence[float]) -> Belief:
    """The posterior over the mean bias after ``biases`` (module docstring)."""
    n = len(biases)
    precision = 1 / PRIOR_VARIANCE + n / NOISE_VARIANCE
    mean = (PRIOR_MEAN / PRIOR_VARIANCE + sum(biases) / NOISE_VARIANCE) / precision
    variance = 1 / precision
    half = Z95 * math.sqrt(variance)
    low, high = mean - half, mean + half
    credible = low > 0 or high < 0
    direction = (
        "overconfident" if credible and mean > 0 else "underconfident" if credible else "none"
    )
    return Belief(
        target=target,
        mean=round(mean, 6),
        variance=round(variance, 8),
        evidence=n,
        low=round(low, 6),
        high=round(high, 6),
        credible=credible,
        direction=direction,
    )
