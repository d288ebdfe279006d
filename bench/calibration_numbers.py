"""Numbers that do not mislead: simulated agents with a known truth.

* Drift: false alarms over 2,000 agents that never change (checks every 10 outcomes up to
  200), and detection of a 10- and 20-point fall in success at outcome 100, for the sequential
  test beside the previous monitor (the last 20 against all earlier, each check a fresh test)
  and beside an oracle that knows the change point and both rates.
* ECE: how often the interval contains 0 for a calibrated agent (binned ECE, the baseline,
  against the debiased ECE), and how often the calibration test says "consistent with
  calibration" — and, for agents 10 and 20 points overconfident, how often each flags them.
* The guardian: its proposal against the true correction as outcomes accumulate, beside the
  previous rule (the raw observed/stated ratio, clamped to [0.5, 1.5]).

Run: .venv/bin/python bench/calibration_numbers.py [--runs N]
"""

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noetic.calibration import calibration_metrics, guardian_proposal, monitor, update_belief
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
    """The monitor before the sequential test: the last 20 against all earlier, each check a
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


def oracle_power(shift, after, runs, rng, alpha=0.05, base_low=0.5, base_high=0.95):
    """A test that knows the change point and both success rates, looking once, ``after``
    outcomes past the change: the most any test can do (Neyman–Pearson)."""

    def llr(shifted):
        p = rng.uniform(base_low, base_high, (runs, after))
        q = p - shift
        y = rng.uniform(0, 1, (runs, after)) < (q if shifted else p)
        return np.where(y, np.log(q / p), np.log((1 - q) / (1 - p))).sum(axis=1)

    return float(np.mean(llr(True) > np.quantile(llr(False), 1 - alpha)))


def drift_section(runs: int) -> None:
    print(f"\nDrift ({runs} simulated agents per row; checks every 10 outcomes up to 200)")
    rng = random.Random(11)
    checks = range(10, 201, 10)
    print("  agents that never change: runs with at least one alarm (target <= 5%)")
    print("    agent                    sequential test   previous monitor")
    agents = {
        "calibrated": lambda c: c,
        "15 points overconfident": lambda c: c - 0.15,
        "confidence says nothing": lambda c: 0.6,
    }
    for name, success in agents.items():
        new = old = 0
        for r in range(runs):
            p = [rng.uniform(0.5, 0.95) for _ in range(200)]
            y = [float(rng.random() < success(c)) for c in p]
            new += bool(monitor(p, y, seed=r).alarms)
            old += any(previous_monitor(p[:c], y[:c]) for c in checks)
        print(f"    {name:<24} {new / runs:>15.1%}   {old / runs:>16.1%}")
    print("  success falls at outcome 100: detected within 40 / 100 outcomes after the change")
    print("  (false alarms before it excluded), and the best any test can do at 40")
    print("    shift    sequential test     previous monitor    oracle at 40")
    np_rng = np.random.default_rng(3)
    for shift in (0.1, 0.2):
        hits = {"new": [0, 0], "old": [0, 0]}
        for r in range(runs):
            p = [rng.uniform(0.5, 0.95) for _ in range(300)]
            y = [float(rng.random() < (c if i < 100 else c - shift)) for i, c in enumerate(p)]
            alarms = [a.at for a in monitor(p, y, seed=r).alarms]
            first_new = next((c for c in range(10, 301, 10) if any(a <= c for a in alarms)), None)
            first_old = next(
                (c for c in range(40, 301, 10) if previous_monitor(p[:c], y[:c])), None
            )
            for key, first in (("new", first_new), ("old", first_old)):
                if first is not None and first > 100:
                    hits[key][0] += first - 100 <= 40
                    hits[key][1] += first - 100 <= 100
        oracle = oracle_power(shift, 40, 20_000, np_rng)
        print(
            f"    {shift:.0%}   {hits['new'][0] / runs:>7.0%} / {hits['new'][1] / runs:<7.0%}"
            f"  {hits['old'][0] / runs:>9.0%} / {hits['old'][1] / runs:<7.0%}  {oracle:>12.0%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--drift-runs", type=int, default=2000)
    args = parser.parse_args()
    drift_section(args.drift_runs)
    ece_section(args.runs)
    guardian_section(args.runs)


if __name__ == "__main__":
    main()
