"""Drift: has the agent's calibration changed?

Drift is a *change*: the agent's outcomes stopped matching its stated confidence the way they
used to. A steady miscalibration (always 15 points overconfident) is not drift; the report and
the guardian deal with that. The monitor is a sequential test with a false-alarm rate the user
sets (``alpha``, default 5%) that holds however often it is checked:

1. Each outcome gives a residual ``r = outcome − confidence``. Its *conformal p-value* is its
   rank among the residuals so far (ties broken at random, seeded): for an agent that does not
   change, the ranks are exchangeable and the p-values independent and uniform on (0, 1).
2. A *test martingale* bets on those p-values (Vovk's Simple Jumper): a fifth of the capital
   does not bet, two fifths bet that residuals are falling (the agent became overconfident:
   more failures than before, or confidence rising above its results), two fifths that they
   are rising; each step a fraction ``jump`` of the capital is redistributed, so the bettor can
   switch when a change begins. One "falling" bet stakes on p-values below the share ``b`` of
   earlier residuals that were negative (more failures), the other on small p-values in
   general (``1 + lean·(1 − 2p)``: residuals lower than before, failures or not).
3. For an unchanging agent the capital is a non-negative martingale starting at 1, so by Ville's
   inequality it ever reaches ``1/alpha`` with probability at most ``alpha``, however many
   outcomes and however many checks. Reaching it is an alarm; the monitor then starts afresh
   from the next outcome, so a later change is judged against the new behaviour.

The price of the guarantee is time: at ``alpha = 0.05`` a 30-point fall in success takes a
median of about 50 outcomes to detect and a 20-point fall about 160 (``bench/`` and
``docs/calibration.md``); a test that knew the change point and both rates would need about 40
for the 20-point fall, and no test holding 5% over a run of checks does better than that.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

ALPHA: Final = 0.05
JUMP: Final = 0.01
LEAN: Final = 0.5
SYCOPHANCY_THRESHOLD: Final = 0.10
RECENT_WINDOW: Final = 20

Direction = Literal["overconfident", "underconfident"]


class DriftAlarm(BaseModel):
    model_config = ConfigDict(frozen=True)

    at: int
    since: int
    direction: Direction
    sycophancy: bool


class DriftPath(BaseModel):
    """The monitor run over a stream: the alarms, and the capital of the current segment."""

    model_config = ConfigDict(frozen=True)

    alarms: list[DriftAlarm]
    since: int
    e_value: float


def _state_bets(b: float, lean: float) -> tuple[float, float]:
    """The probability each betting state gives a p-value below ``b``: falling, rising."""
    step = lean * min(b, 1 - b)
    return b + step, b - step


def monitor(
    confidences: Sequence[float],
    outcomes: Sequence[float],
    *,
    alpha: float = ALPHA,
    jump: float = JUMP,
    lean: float = LEAN,
    seed: int = 0,
    window: int = RECENT_WINDOW,
) -> DriftPath:
    """Run the sequential test over the stream (oldest first); see the module docstring."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if len(confidences) != len(outcomes):
        raise ValueError("confidences and outcomes must be equal-length sequences")
    rng = random.Random(seed)
    threshold = math.log(1 / alpha)
    alarms: list[DriftAlarm] = []
    seen: list[float] = []
    negative = 0
    start = 0
    capital = _fresh()
    for i, (p, y) in enumerate(zip(confidences, outcomes, strict=True)):
        if not (0 <= p <= 1 and 0 <= y <= 1):
            raise ValueError("confidences and outcomes must be finite numbers in [0, 1]")
        r = y - p
        t = len(seen) + 1
        b = (negative + 0.5) / t
        lo, hi = bisect.bisect_left(seen, r), bisect.bisect_right(seen, r)
        bisect.insort(seen, r)
        pvalue = (lo + rng.random() * (hi - lo + 1)) / t
        negative += r < 0
        total = sum(capital)
        share = jump * total / len(capital)
        capital = [(1 - jump) * c + share for c in capital]
        low = pvalue < b
        falling, rising = _state_bets(b, lean)
        capital[1] *= falling / b if low else (1 - falling) / (1 - b)
        capital[2] *= rising / b if low else (1 - rising) / (1 - b)
        capital[3] *= 1 + lean * (1 - 2 * pvalue)
        capital[4] *= 1 - lean * (1 - 2 * pvalue)
        if math.log(sum(capital)) >= threshold:
            worse, better = capital[1] + capital[3], capital[2] + capital[4]
            direction: Direction = "overconfident" if worse >= better else "underconfident"
            alarms.append(
                DriftAlarm(
                    at=i + 1,
                    since=start + 1,
                    direction=direction,
                    sycophancy=direction == "overconfident"
                    and _confidence_outran_outcomes(
                        confidences[start : i + 1], outcomes[start : i + 1], window
                    ),
                )
            )
            seen, negative, start = [], 0, i + 1
            capital = _fresh()
    return DriftPath(alarms=alarms, since=start + 1, e_value=round(sum(capital), 6))


def _fresh() -> list[float]:
    """No bet; falling and rising on the share of negative residuals; falling and rising on
    the p-value itself."""
    return [0.2] * 5


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _confidence_outran_outcomes(
    confidences: Sequence[float], outcomes: Sequence[float], window: int
) -> bool:
    """Sycophancy-style: over the last ``window`` outcomes confidence rose and outcomes did not
    rise with it (by more than 0.10), compared with the segment's earlier outcomes."""
    if len(confidences) <= window:
        return False
    rise_p = _mean(confidences[-window:]) - _mean(confidences[:-window])
    rise_y = _mean(outcomes[-window:]) - _mean(outcomes[:-window])
    return rise_p > 0 and rise_p - rise_y > SYCOPHANCY_THRESHOLD


class Detection(BaseModel):
    """How many outcomes after a shift the monitor takes to raise the alarm (simulated)."""

    model_config = ConfigDict(frozen=True)

    shift: float
    alpha: float
    runs: int
    median: float | None
    p90: float | None
    detected: float
    horizon: int


class DriftReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    alpha: float
    guarantee: str
    e_value: float
    alarms: list[DriftAlarm]
    since: int
    recent: int
    calibration_drift: bool
    sycophancy_drift: bool
    bias_recent: float | None
    bias_history: float | None
    confidence_rise: float | None
    outcome_rise: float | None
    detection: Detection | None = None
    reason: str


def detect_drift(
    confidences: Sequence[float],
    outcomes: Sequence[float],
    *,
    alpha: float = ALPHA,
    window: int = RECENT_WINDOW,
    shift: float | None = None,
) -> DriftReport:
    """The monitor over a stream (oldest first). Drift is reported when the test raised an
    alarm within the last ``window`` outcomes; with ``shift``, the report also says how many
    outcomes such a shift in success would take to detect, simulated on these confidences."""
    n = len(confidences)
    path = monitor(confidences, outcomes, alpha=alpha, window=window)
    recent = [a for a in path.alarms if a.at > n - window]
    last = path.alarms[-1] if path.alarms else None
    bias_r = bias_h = rise_p = rise_y = None
    if n > window:
        b = [y - p for p, y in zip(confidences, outcomes, strict=True)]
        bias_r, bias_h = -_mean(b[-window:]), -_mean(b[:-window])
        rise_p = _mean(confidences[-window:]) - _mean(confidences[:-window])
        rise_y = _mean(outcomes[-window:]) - _mean(outcomes[:-window])
    if recent:
        a = recent[-1]
        reason = (
            f"calibration drift: the agent became {a.direction} "
            f"(alarm at outcome {a.at} of {n}, testing since outcome {a.since})"
        )
        if a.sycophancy:
            reason += "; sycophancy-style: its confidence rose while its outcomes did not"
    elif last is not None:
        reason = (
            f"no drift since outcome {last.at} (the last alarm: {last.direction}); "
            f"e-value {path.e_value:.2f} of {1 / alpha:g} needed"
        )
    elif n < (least := math.ceil(math.log(1 / alpha) / math.log(1 + LEAN))):
        reason = (
            f"insufficient data: {n} outcomes; at alpha {alpha:g} the test cannot raise an "
            f"alarm before {least}"
        )
    else:
        reason = f"no drift: e-value {path.e_value:.2f} of {1 / alpha:g} needed"
    return DriftReport(
        n=n,
        alpha=alpha,
        guarantee=(
            f"for an agent that does not change, the chance of any alarm is at most {alpha:g}, "
            "however often this is checked"
        ),
        e_value=path.e_value,
        alarms=path.alarms,
        since=path.since,
        recent=min(n, window),
        calibration_drift=bool(recent),
        sycophancy_drift=any(a.sycophancy for a in recent),
        bias_recent=_round(bias_r),
        bias_history=_round(bias_h),
        confidence_rise=_round(rise_p),
        outcome_rise=_round(rise_y),
        detection=None
        if shift is None
        else detection_delay(shift, alpha=alpha, confidences=confidences),
        reason=reason,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def detection_delay(
    shift: float,
    *,
    alpha: float = ALPHA,
    confidences: Sequence[float] = (),
    baseline: int = 100,
    horizon: int = 300,
    runs: int = 200,
    seed: int = 0,
) -> Detection:
    """Outcomes from a shift to its alarm, over ``runs`` simulated agents: calibrated for
    ``baseline`` outcomes, then succeeding ``shift`` less often (more often if negative) for up
    to ``horizon`` more. Confidences are drawn from ``confidences`` (uniform in 0.5–0.95 when
    fewer than 20 are given)."""
    rng = random.Random(seed)
    pool = list(confidences) if len(confidences) >= 20 else None
    delays: list[int] = []
    for run in range(runs):
        p = [
            rng.choice(pool) if pool else rng.uniform(0.5, 0.95) for _ in range(baseline + horizon)
        ]
        y = [float(rng.random() < (c if i < baseline else c - shift)) for i, c in enumerate(p)]
        path = monitor(p, y, alpha=alpha, seed=run)
        after = [a.at - baseline for a in path.alarms if a.at > baseline]
        if after:
            delays.append(after[0])
    detected = len(delays) / runs
    ordered = sorted(delays) + [horizon + 1] * (runs - len(delays))

    def quantile(q: float) -> float | None:
        value = ordered[min(runs - 1, int(q * runs))]
        return None if value > horizon else float(value)

    return Detection(
        shift=shift,
        alpha=alpha,
        runs=runs,
        median=quantile(0.5),
        p90=quantile(0.9),
        detected=round(detected, 4),
        horizon=horizon,
    )
