"""Numbers that do not mislead: simulated agents with a known truth.

* ECE: how often the interval contains 0 for a calibrated agent (binned ECE, the baseline,
  against the debiased ECE), and how often the calibration test says "consistent with
  calibration" — and, for agents 10 and 20 points overconfident, how often each flags them.
* The guardian: its proposal against the true correction as outcomes accumulate, beside the
  previous rule (the raw observed/stated ratio, clamped to [0.5, 1.5]).

Run: .venv/bin/python bench/calibration_numbers.py [--runs N]
"""

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noetic.calibration import calibration_metrics, guardian_proposal, update_belief
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    ece_section(args.runs)
    guardian_section(args.runs)


if __name__ == "__main__":
    main()
