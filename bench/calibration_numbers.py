"""Numbers that do not mislead: simulated agents with a known truth.

* Drift: false alarms over 2,000 agents that never change (checks every 10 outcomes up to 200,
  and up to 1,000 for the calibrated agent), and detection of a 10- and 20-point fall in
  success at outcome 100 and at outcome 500, and of confidence rising while success does not,
  for the e-detector beside the previous sequential test (the Simple Jumper on the same
  p-values) and the monitor before it (the last 20 against all earlier, each check a fresh
  test); beside them, tests told when the change came: the e-detector's bets started there,
  a test also told the size of the fall but learning the agent's usual rate, and one told
  both success rates (the Neyman–Pearson oracle).
* ECE: how often the interval contains 0 for a calibrated agent (binned ECE, the baseline,
  against the debiased ECE), and how often the calibration test says "consistent with
  calibration" — and, for agents 10 and 20 points overconfident, how often each flags them.
* The guardian: its proposal against the true correction as outcomes accumulate, beside the
  previous rule (the raw observed/stated ratio, clamped to [0.5, 1.5]).

Run: .venv/bin/python bench/calibration_numbers.py [--runs N] [--only drift|ece|guardian]
"""

import argparse
import bisect
import math
import random
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noetic.calibration import calibration_metrics, guardian_proposal, monitor, update_belief
from noetic.calibration.drift import PRIOR, conformal_pvalue, payoffs
from noetic.calibration.guardian import WEIGHT_BOUNDS


def agent(rng, n, shift=0.0, low=0.5, high=0.95):
    p = rng.uniform(low, high, n)
    return p, (rng.uniform(0, 1, n) < p - shift).astype(float)


def ece_section(runs: int) -> None:
    print(f"ECE and the calibration test ({runs} agents per cell, 95% intervals)")
    print("    n   contains 0: binned  debiased   'consistent': test | flagged at +10 / +20 points")
    rng = np.random.default_rng(2026)
    for n in (20, 40, 80, 160):
        binned = debiased = consistent = 0
        flagged = {0.1: 0, 0.2: 0}
        for i in range(runs):
            m = calibration_metrics(*agent(rng, n), rounds=200, seed=i)
            binned += m.ece.low <= 0 <= m.ece.high
            debiased += m.ece_debiased.low <= 0 <= m.ece_debiased.high
            consistent += m.test.verdict == "consistent with calibration"
            for shift in flagged:
                t = calibration_metrics(*agent(rng, n, shift), rounds=50, seed=i).test
                flagged[shift] += t.verdict == "miscalibrated"
        print(
            f"  {n:>3}   {binned / runs:>17.0%}  {debiased / runs:>8.0%}  "
            f"{consistent / runs:>19.0%}"
            f" | {flagged[0.1] / runs:>14.0%} / {flagged[0.2] / runs:.0%}"
        )


def guardian_section(runs: int) -> None:
    print(f"\nThe guardian ({runs} agents per cell; medians, and how often the 95% interval")
    print("contains the true correction)")
    rng = np.random.default_rng(7)
    lo, hi = WEIGHT_BOUNDS
    for stated, observed in ((0.85, 0.5), (0.8, 0.7)):
        truth = observed / stated
        print(f"  stated ~{stated}, right {observed:.0%} of the time: true weight {truth:.3f}")
        print("      n   proposed (new)  interval covers  clamped | previous rule  clamped")
        for n in (10, 20, 40, 80, 160):
            new, old, covered, clamped, old_clamped, proposals = [], [], 0, 0, 0, 0
            for _ in range(runs):
                p = rng.uniform(stated - 0.05, stated + 0.05, n)
                y = (rng.uniform(0, 1, n) < p * observed / stated).astype(float)
                belief = update_belief("overall", list(p - y))
                proposal = guardian_proposal("b", 1.0, belief, float(p.mean()), float(y.mean()))
                raw = float(y.mean() / p.mean())
                if belief.credible:
                    old.append(min(hi, max(lo, raw)))
                    old_clamped += not lo < raw < hi
                if proposal is None:
                    new.append(1.0)
                    continue
                proposals += 1
                new.append(proposal.new)
                covered += proposal.low <= truth <= proposal.high
                clamped += proposal.clamped
            cover = f"{covered / proposals:.0%}" if proposals else "—"
            print(
                f"    {n:>3}   {statistics.median(new):>14.3f}  {cover:>15}  {clamped / runs:>7.0%}"
                f" | {statistics.median(old) if old else 1.0:>13.3f}  {old_clamped / runs:>7.0%}"
            )


def previous_monitor(p, y, window=20, min_history=20, threshold=0.15):
    """The monitor before the sequential tests: the last 20 against all earlier, each check a
    fresh test at 1.96 standard errors (kept here as the baseline)."""
    n = len(p)
    if n < window + min_history:
        return False
    b = np.asarray(p) - np.asarray(y)
    recent, history = b[-window:], b[:-window]
    noise = 1.959964 * math.sqrt(
        recent.var(ddof=1) / len(recent) + history.var(ddof=1) / len(history)
    )
    return abs(recent.mean() - history.mean()) > max(threshold, noise)


def jumper_alarms(p, y, seed, alpha=0.05, jump=0.01, lean=0.5):
    """The previous sequential test, kept as the baseline: the same conformal p-values, bet on
    by Vovk's Simple Jumper (no bet; falling and rising past the share of negative residuals;
    lower and higher in general), a fraction ``jump`` of the capital redistributed each step.
    Returns the outcomes (1-based) at which it alarmed."""
    rng = random.Random(seed)
    alarms, seen, negative, capital = [], [], 0, [0.2] * 5
    for i, (c, o) in enumerate(zip(p, y, strict=True)):
        r, t = o - c, len(seen) + 1
        b = (negative + 0.5) / t
        u = conformal_pvalue(seen, r, rng.random())
        bisect.insort(seen, r)
        negative += r < 0
        total = sum(capital)
        capital = [(1 - jump) * k + jump * total / 5 for k in capital]
        low, step = u < b, lean * min(b, 1 - b)
        for k, q in ((1, b + step), (2, b - step)):
            capital[k] *= q / b if low else (1 - q) / (1 - b)
        capital[3] *= 1 + lean * (1 - 2 * u)
        capital[4] *= 1 - lean * (1 - 2 * u)
        if sum(capital) >= 1 / alpha:
            alarms.append(i + 1)
            seen, negative, capital = [], 0, [0.2] * 5
    return alarms


def oracle_power(shift, after, runs, rng, alpha=0.05, base_low=0.5, base_high=0.95):
    """A test that knows the change point and both success rates, looking once, ``after``
    outcomes past the change: the most any test can do (Neyman–Pearson)."""

    def llr(shifted):
        p = rng.uniform(base_low, base_high, (runs, after))
        q = p - shift
        y = rng.uniform(0, 1, (runs, after)) < (q if shifted else p)
        return np.where(y, np.log(q / p), np.log((1 - q) / (1 - p))).sum(axis=1)

    return float(np.mean(llr(True) > np.quantile(llr(False), 1 - alpha)))


def informed_power(shift, after, runs, rng, before=100, alpha=0.05, perms=500):
    """A test that knows the change point and the size of the fall but must learn the agent's
    usual success rate from the ``before`` outcomes: it looks once, ``after`` outcomes past
    the change, and compares the fall's log-likelihood ratio summed over those outcomes with
    its permutation distribution (exact for an agent that does not change)."""
    n, hits = before + after, 0
    for _ in range(runs):
        p = rng.uniform(0.5, 0.95, n)
        q = np.where(np.arange(n) < before, p, p - shift)
        y = rng.uniform(0, 1, n) < q
        llr = np.where(y, np.log((p - shift) / p), np.log((1 - p + shift) / (1 - p)))
        drawn = np.argsort(rng.uniform(size=(perms, n)), axis=1)[:, :after]
        exceed = (llr[drawn].sum(axis=1) >= llr[before:].sum()).sum()
        hits += (1 + exceed) / (perms + 1) <= alpha
    return hits / runs


def told_alarm(p, y, at, seed, alpha=0.05):
    """The e-detector's bets told when the change came: all their weight on outcome ``at``
    (0-based), none spread over other starts. Returns the outcome (1-based) of its alarm."""
    rng = random.Random(seed)
    seen, negative, capital = [], 0, [0.0] * len(PRIOR)
    for i, (c, o) in enumerate(zip(p, y, strict=True)):
        r, t = o - c, len(seen) + 1
        b = (negative + 0.5) / t
        u = conformal_pvalue(seen, r, rng.random())
        bisect.insort(seen, r)
        negative += r < 0
        if i == at:
            capital = list(PRIOR)
        capital = [k * f for k, f in zip(capital, payoffs(u, b), strict=True)]
        if i >= at and sum(capital) >= 1 / alpha:
            return i + 1
    return None


def first_check(alarms, every=10, end=None):
    """The first check (every ``every`` outcomes) at which an alarm has been raised."""
    return next((math.ceil(a / every) * every for a in alarms if end is None or a <= end), None)


def drift_section(runs: int) -> None:
    print(f"\nDrift ({runs} simulated agents per row; checks every 10 outcomes)")
    rng = random.Random(11)
    print("  agents that never change: runs with at least one alarm (target <= 5%)")
    print("    agent                     outcomes   e-detector   previous test   window monitor")
    agents = {
        "calibrated": lambda c: c,
        "15 points overconfident": lambda c: c - 0.15,
        "confidence says nothing": lambda c: 0.6,
    }
    for name, success in agents.items():
        for n in (200, 1000) if name == "calibrated" else (200,):
            new = old = window = 0
            for r in range(runs):
                p = [rng.uniform(0.5, 0.95) for _ in range(n)]
                y = [float(rng.random() < success(c)) for c in p]
                new += bool(monitor(p, y, seed=r).alarms)
                old += bool(jumper_alarms(p, y, seed=r))
                if n == 200:
                    window += any(previous_monitor(p[:c], y[:c]) for c in range(10, n + 1, 10))
            shown = f"{window / runs:>14.1%}" if n == 200 else f"{'—':>14}"
            print(f"    {name:<24} {n:>9}   {new / runs:>10.1%}   {old / runs:>13.1%}   {shown}")
    print("  a change at outcome 100 (500): detected within 40 / 100 outcomes after it (a false")
    print("  alarm before it counts as a miss)")
    print(f"    {'change':<44} {'e-detector':>12}   {'previous test':>13}   {'window monitor':>14}")
    np_rng = np.random.default_rng(3)
    cases = [
        ("success falls 10 points", 100, 0.1),
        ("success falls 20 points", 100, 0.2),
        ("success falls 10 points", 500, 0.1),
        ("success falls 20 points", 500, 0.2),
        ("confidence 0.6 -> 0.95, success 60%", 100, None),
    ]
    for name, at, shift in cases:
        hits = {"new": [0, 0], "old": [0, 0], "window": [0, 0]}
        for r in range(runs):
            if shift is None:  # sycophancy-style: confidence rises, success does not
                p = [0.6 if i < at else 0.95 for i in range(at + 100)]
                y = [float(rng.random() < 0.6) for _ in p]
            else:
                p = [rng.uniform(0.5, 0.95) for _ in range(at + 100)]
                y = [float(rng.random() < (c if i < at else c - shift)) for i, c in enumerate(p)]
            firsts = {
                "new": first_check([a.at for a in monitor(p, y, seed=r).alarms]),
                "old": first_check(jumper_alarms(p, y, seed=r)),
            }
            if at == 100:
                firsts["window"] = next(
                    (c for c in range(40, at + 101, 10) if previous_monitor(p[:c], y[:c])), None
                )
            for key, first in firsts.items():
                if first is not None and first > at:
                    hits[key][0] += first - at <= 40
                    hits[key][1] += first - at <= 100
        cells = [f"{hits[k][0] / runs:.0%} / {hits[k][1] / runs:.0%}" for k in hits]
        if at != 100:
            cells[2] = "—"
        print(f"    {name:<36} at {at:<4}  {cells[0]:>12}   {cells[1]:>13}   {cells[2]:>14}")
    print(
        "  tests told when the change came (outcome 100): detected within 40 / 100 outcomes by the"
    )
    print(
        "  e-detector's bets started there; at 40 by a test told the size of the fall, looking once"
    )
    print("  and learning the usual rate (permutation); at 40 by the Neyman-Pearson oracle")
    for shift in (0.1, 0.2):
        told = [0, 0]
        for r in range(runs):
            p = [rng.uniform(0.5, 0.95) for _ in range(200)]
            y = [float(rng.random() < (c if i < 100 else c - shift)) for i, c in enumerate(p)]
            first = first_check([a] if (a := told_alarm(p, y, 100, seed=r)) else [])
            if first is not None:
                told[0] += first - 100 <= 40
                told[1] += first - 100 <= 100
        oracle = oracle_power(shift, 40, 20_000, np_rng)
        informed = informed_power(shift, 40, min(runs, 1000), np_rng)
        print(
            f"    success falls {shift:.0%}: bets told the start {told[0] / runs:.0%} / "
            f"{told[1] / runs:.0%}; told the size {informed:.0%}; oracle {oracle:.0%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--drift-runs", type=int, default=2000)
    parser.add_argument("--only", choices=["drift", "ece", "guardian"])
    args = parser.parse_args()
    if args.only in (None, "drift"):
        drift_section(args.drift_runs)
    if args.only in (None, "ece"):
        ece_section(args.runs)
    if args.only in (None, "guardian"):
        guardian_section(args.runs)


if __name__ == "__main__":
    main()
