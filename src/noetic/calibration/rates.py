"""What a handful of outcomes can already say, each defined from the first outcome on, over the
probabilities an agent stated (``p``) and the verified outcomes (``y``), both in [0, 1] (1 =
success). Why each, and what it shows, is in ``docs/calibration.md``.

* **Success rate** ``r = Σy / n`` with the **Wilson score interval** (95%),
  ``(r + z²/2n ± z·√(r(1 − r)/n + z²/4n²)) / (1 + z²/n)``: it never leaves [0, 1] and does not
  collapse to a point at 0 or n successes (one success in one task gives [0.21, 1]).
* **Overconfidence gap** ``g = mean(p) − r`` (positive: overconfident); what was stated is known
  exactly, so its interval is ``mean(p)`` minus the rate's, *significant* when it leaves out 0.
  The **difference of two gaps** takes Newcombe's hybrid score interval for the difference of
  the two rates (method 10, built from the two Wilson intervals).
* **AUROC's interval**: a score-type interval on the Hanley & McNeil (1982) standard error
  (:func:`auroc_interval`).
* **Brier decomposition** (Murphy 1973, with the two within-bin terms of Stephenson, Coelho &
  Jolliffe 2008), forecasts grouped by distinct value when there are at most :data:`MAX_GROUPS`
  of them, else into :data:`MAX_GROUPS` equal-width bins. With ``n_k`` tasks in group ``k``,
  mean forecast ``f̄_k``, outcome rate ``ō_k`` and overall rate ``ō``:

      reliability = Σ n_k/n · (f̄_k − ō_k)²       (lower is better)
      resolution  = Σ n_k/n · (ō_k − ō)²        (higher is better)
      uncertainty = mean((y − ō)²)               (ō(1 − ō) for pass/fail outcomes)
      within_bin  = mean((f − f̄_k)²) − 2·mean((f − f̄_k)(y − ō_k))

  and ``reliability − resolution + uncertainty + within_bin = Brier`` exactly (``within_bin`` is
  0 when grouped by value). ``uncertainty`` is also the Brier score of always saying ``ō``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from noetic.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


Z95: Final = 1.959964
MAX_GROUPS: Final = 10


class Interval(Plain):
    """A value with its 95% interval (``None`` throughout when there is nothing to measure)."""

    value: float | None
    low: float | None = None
    high: float | None = None


class BrierParts(Plain):
    """The Brier score split as in the module docstring."""

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin: float
    base_rate_brier: float
    skill: float | None
    groups: int
    grouped_by: str


def wilson(successes: float, n: int, z: float = Z95) -> Interval:
    """The Wilson score interval for a rate of ``successes`` in ``n`` (graded outcomes count by
    their sum)."""
    if n <= 0:
        return Interval(value=None)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    rate = successes / n
    z2 = z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(max(0.0, rate * (1 - rate) / n + z2 / (4 * n * n))) / (1 + z2 / n)
    # at 0 or n successes the exact bound is the rate itself; rounding must not cross it
    low = min(rate, max(0.0, centre - half))
    high = max(rate, min(1.0, centre + half))
    return Interval(value=rate, low=low, high=high)


def gap(mean_stated: float, rate: Interval) -> Interval:
    """``mean_stated − rate`` with the rate's interval carried over (module docstring)."""
    if rate.value is None or rate.low is None or rate.high is None:
        return Interval(value=None)
    return Interval(
        value=mean_stated - rate.value, low=mean_stated - rate.high, high=mean_stated - rate.low
    )


def significant(interval: Interval) -> bool:
    """The interval leaves out 0."""
    if interval.low is None or interval.high is None:
        return False
    return interval.low > 0 or interval.high < 0


def gap_difference(mean_1: float, rate_1: Interval, mean_2: float, rate_2: Interval) -> Interval:
    """``gap₁ − gap₂`` with Newcombe's hybrid score interval on ``rate₂ − rate₁``."""
    p1, l1, u1 = rate_1.value, rate_1.low, rate_1.high
    p2, l2, u2 = rate_2.value, rate_2.low, rate_2.high
    if p1 is None or l1 is None or u1 is None or p2 is None or l2 is None or u2 is None:
        return Interval(value=None)
    diff = p2 - p1  # the rate part of gap₁ − gap₂ = (mean₁ − mean₂) + (rate₂ − rate₁)
    low = diff - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = diff + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    shift = mean_1 - mean_2
    return Interval(value=shift + diff, low=shift + low, high=shift + high)


def auroc_interval(area: float, positives: int, negatives: int, z: float = Z95) -> Interval:
    """AUROC with a score-type interval on the Hanley & McNeil (1982) standard error,
    ``se(A) = √((A(1 − A) + (n₊ − 1)(Q₁ − A²) + (n₋ − 1)(Q₂ − A²)) / (n₊ n₋))``,
    ``Q₁ = A/(2 − A)``, ``Q₂ = 2A²/(1 + A)``: every ``A₀`` with ``|Â − A₀| ≤ z · se(A₀)``.

    Taking the error at ``A₀`` rather than at ``Â`` (as a score interval does for a proportion)
    keeps the interval honest at the edges: ten tasks perfectly ranked give ``Â = 1`` and a
    Wald interval of zero width, ``[1, 1]``, where this one reaches well below 1. Closed-form
    errors and a bisection, so a per-phase report over many outcomes pays for no bootstrap."""

    def error(a0: float) -> float:
        q1, q2 = a0 / (2 - a0), 2 * a0 * a0 / (1 + a0)
        variance = (
            a0 * (1 - a0) + (positives - 1) * (q1 - a0 * a0) + (negatives - 1) * (q2 - a0 * a0)
        ) / (positives * negatives)
        return z * math.sqrt(max(0.0, variance))

    def solve(inside: float, outside: float) -> float:
        """The edge between ``inside`` (in the interval) and ``outside`` (not)."""
        for _ in range(60):
            middle = (inside + outside) / 2
            if abs(area - middle) <= error(middle):
                inside = middle
            else:
                outside = middle
        return inside

    low = 0.0 if area <= error(0.0) else solve(area, 0.0)
    high = 1.0 if 1.0 - area <= error(1.0) else solve(area, 1.0)
    return Interval(value=area, low=min(low, area), high=max(high, area))


def brier_parts(p: Sequence[float], y: Sequence[float]) -> BrierParts | None:
    """The decomposition in the module docstring; ``None`` for no outcomes."""
    n = len(p)
    if n == 0:
        return None
    if len(y) != n:
        raise ValueError("confidences and outcomes must be equal-length sequences")
    distinct = sorted(set(p))
    if len(distinct) <= MAX_GROUPS:
        index = {v: i for i, v in enumerate(distinct)}
        keys = [index[v] for v in p]
        grouped_by = "value"
    else:
        keys = [min(MAX_GROUPS - 1, int(v * MAX_GROUPS)) for v in p]
        grouped_by = f"{MAX_GROUPS} bins"
    members: dict[int, list[int]] = {}
    for i, k in enumerate(keys):
        members.setdefault(k, []).append(i)
    rate = sum(y) / n
    reliability = resolution = within = 0.0
    for idx in members.values():
        nk = len(idx)
        # grouped by value, the group's forecast is that value exactly (no rounding residue)
        f_bar = p[idx[0]] if grouped_by == "value" else sum(p[i] for i in idx) / nk
        o_bar = sum(y[i] for i in idx) / nk
        reliability += nk * (f_bar - o_bar) ** 2
        resolution += nk * (o_bar - rate) ** 2
        within += sum((p[i] - f_bar) ** 2 - 2 * (p[i] - f_bar) * (y[i] - o_bar) for i in idx)
    uncertainty = sum((v - rate) ** 2 for v in y) / n
    brier = sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / n
    return BrierParts(
        brier=brier,
        reliability=reliability / n,
        resolution=resolution / n,
        uncertainty=uncertainty,
        within_bin=within / n,
        base_rate_brier=uncertainty,
        skill=1 - brier / uncertainty if uncertainty > 0 else None,
        groups=len(members),
        grouped_by=grouped_by,
    )
