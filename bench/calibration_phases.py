"""Per-phase calibration on simulated agents with a known truth (the figures in
docs/calibration.md, "Calibration per phase").

* **Gap interval coverage**: how often the overconfidence gap's 95% interval (mean stated minus
  the Wilson interval of the success rate) contains the true gap, at n = 5, 10, 20, 50, 100,
  for three agents: *overconfident* (p_success 0.8 on tasks that succeed 35% of the time, the
  paper's post-execution figures), *adversarial* (its review 15 points less overconfident:
  0.65 on the same tasks) and *calibrated* (p_success uniform in 0.3–0.95, each task succeeding
  with that probability). Beside it, in the same run, the textbook Wald interval
  (rate ± 1.96·√(rate(1 − rate)/n)) the report does not use.
* **When the gap is significant**: the smallest n at which the overconfident agent's gap is
  reported significant (interval excludes 0) in half and in 90% of runs; the same for the
  difference between its standard and adversarial reviews (n tasks of each).
* **Held-out Brier, with and without the guardian's correction**: agents whose confidence is
  uniform in 0.5–0.95 and who succeed with probability confidence − bias. After n outcomes the
  guardian either proposes a correction (fitted on the earlier two thirds, proved on the rest)
  or not; the Brier score is then measured on 200 later outcomes of the same agent, with and
  without what was proposed, beside the previous rule (the posterior-sized correction proposed
  from all n outcomes, no held-out proof).
* **The guardian on agents that state P(success)**: vectors' confidence calibrated (uniform in
  0.5–0.95, success with that probability), P(success) stated 20 points above it. The guardian
  judges the stated P(success), as the per-phase report does; confidence_weight scales only the
  vectors' confidence, so its held-out proof leaves a stated P(success) as stated. Beside it: a
  proof that pretended the weight scaled P(success), and the later Brier score of the vectors'
  confidence (what the weight does change) under each one's correction.

Run: .venv/bin/python bench/calibration_phases.py [--runs N]
     [--only coverage|significance|held_out|p_success]
(seconds)
"""

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noetic.calibration.beliefs import update_belief
from noetic.calibration.guardian import guardian_proposal, held_out_check
from noetic.calibration.rates import Interval, gap, gap_difference, significant, wilson

SIZES = (5, 10, 20, 50, 100)
Z = 1.959964


def wald(successes: float, n: int) -> Interval:
    r = successes / n
    half = Z * (r * (1 - r) / n) ** 0.5
    return Interval(value=r, low=r - half, high=r + half)


def fixed(rng: random.Random, n: int, stated: float, rate: float) -> tuple[list, list]:
    return [stated] * n, [1.0 if rng.random() < rate else 0.0 for _ in range(n)]


def calibrated(rng: random.Random, n: int) -> tuple[list, list]:
    p = [rng.uniform(0.3, 0.95) for _ in range(n)]
    return p, [1.0 if rng.random() < q else 0.0 for q in p]


def coverage(runs: int, seed: int) -> None:
    rng = random.Random(seed)
    agents = {
        "overconfident (0.80 on 35%)": (lambda n: fixed(rng, n, 0.80, 0.35), lambda p: 0.45),
        "adversarial review (0.65 on 35%)": (lambda n: fixed(rng, n, 0.65, 0.35), lambda p: 0.30),
        "calibrated (0.30-0.95)": (lambda n: calibrated(rng, n), lambda p: 0.0),
    }
    print(f"Gap interval coverage ({runs} simulated agents per cell; target >= 90%)")
    print("| agent | " + " | ".join(f"n = {n}" for n in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for name, (draw, truth) in agents.items():
        ours, textbook = [], []
        for n in SIZES:
            hit_w = hit_t = 0
            for _ in range(runs):
                p, y = draw(n)
                mean, true_gap = sum(p) / n, truth(p)
                for interval, counter in ((wilson(sum(y), n), "w"), (wald(sum(y), n), "t")):
                    g = gap(mean, interval)
                    inside = g.low - 1e-12 <= true_gap <= g.high + 1e-12
                    if counter == "w":
                        hit_w += inside
                    else:
                        hit_t += inside
            ours.append(hit_w / runs)
            textbook.append(hit_t / runs)
        print(
            f"| {name} | "
            + " | ".join(f"{a:.1%} (Wald {b:.1%})" for a, b in zip(ours, textbook, strict=True))
            + " |"
        )


def first_n(fraction_by_n: dict[int, float], level: float) -> str:
    for n in sorted(fraction_by_n):
        if fraction_by_n[n] >= level:
            return str(n)
    return f"> {max(fraction_by_n)}"


def significance(runs: int, seed: int) -> None:
    rng = random.Random(seed)
    sizes = list(range(1, 21)) + list(range(25, 101, 5))
    single, paired = {}, {}
    for n in sizes:
        alone = both = 0
        for _ in range(runs):
            _, y = fixed(rng, n, 0.80, 0.35)
            standard = wilson(sum(y), n)
            alone += significant(gap(0.80, standard))
            _, y2 = fixed(rng, n, 0.65, 0.35)
            both += significant(gap_difference(0.80, standard, 0.65, wilson(sum(y2), n)))
        single[n], paired[n] = alone / runs, both / runs
    print(f"\nWhen the gap is reported significant ({runs} runs per n)")
    print("| what | half the runs | 90% of runs |")
    print("|---|---|---|")
    print(
        f"| overconfident agent's gap (0.80 stated, 35% true) | n = {first_n(single, 0.5)} | "
        f"n = {first_n(single, 0.9)} |"
    )
    print(
        f"| standard vs adversarial review (0.80 vs 0.65 on 35%), n of each | "
        f"n = {first_n(paired, 0.5)} | n = {first_n(paired, 0.9)} |"
    )
    print("  significant at n = 5, 10, 20: " + ", ".join(f"{single[n]:.0%}" for n in (5, 10, 20)))


def brier(p: list[float], y: list[float]) -> float:
    return sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / len(p)


def agent(rng: random.Random, n: int, bias: float) -> tuple[list, list]:
    p = [rng.uniform(0.5, 0.95) for _ in range(n)]
    return p, [1.0 if rng.random() < max(0.0, q - bias) else 0.0 for q in p]


def held_out(runs: int, seed: int) -> None:
    rng = random.Random(seed)
    print(f"\nHeld-out Brier on 200 later outcomes ({runs} simulated agents per row)")
    print(
        "| agent | outcomes seen | proposed: held-out proof (previous rule) | later Brier: "
        "no correction | with held-out proof | previous rule |"
    )
    print("|---|---|---|---|---|---|")
    for label, bias in (("20 points overconfident", 0.2), ("calibrated", 0.0)):
        for n in (15, 30, 60, 120):
            proposed = proposed_before = 0
            none, ours, previous = [], [], []
            for _ in range(runs):
                p, y = agent(rng, n + 200, bias)
                seen_p, seen_y, later_p, later_y = p[:n], y[:n], p[n:], y[n:]
                proposal, _, _ = held_out_check("balanced", 1.0, seen_p, seen_y)
                belief = update_belief(
                    "overall", [a - b for a, b in zip(seen_p, seen_y, strict=True)]
                )
                before = guardian_proposal(
                    "balanced", 1.0, belief, sum(seen_p) / n, sum(seen_y) / n
                )
                none.append(brier(later_p, later_y))
                for chosen, bucket in ((proposal, ours), (before, previous)):
                    weight = chosen.new if chosen is not None else 1.0
                    bucket.append(brier([min(1.0, q * weight) for q in later_p], later_y))
                proposed += proposal is not None
                proposed_before += before is not None
            print(
                f"| {label} | {n} | {proposed / runs:.0%} ({proposed_before / runs:.0%}) | "
                f"{statistics.fmean(none):.4f} | {statistics.fmean(ours):.4f} | "
                f"{statistics.fmean(previous):.4f} |"
            )


def stated_p_success(runs: int, seed: int) -> None:
    rng = random.Random(seed)
    print(f"\nAgents stating P(success) 20 points above calibrated vectors ({runs} per row)")
    print(
        "| outcomes seen | credible bias in P(success) | proposed: proof as scored | proof "
        "pretending the weight scales P(success) | later Brier of the vectors' confidence: none "
        "| as scored | pretending |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in (30, 60, 120):
        credible = proposed = pretended = 0
        none, ours, wrong = [], [], []
        for _ in range(runs):
            c, y = agent(rng, n + 200, 0.0)
            p = [min(1.0, q + 0.2) for q in c]
            seen_p, seen_y = p[:n], y[:n]
            belief = update_belief("overall", [a - b for a, b in zip(seen_p, seen_y, strict=True)])
            proposal, _, _ = held_out_check("balanced", 1.0, seen_p, seen_y, [False] * n)
            naive, _, _ = held_out_check("balanced", 1.0, seen_p, seen_y)
            later_c, later_y = c[n:], y[n:]
            none.append(brier(later_c, later_y))
            for chosen, bucket in ((proposal, ours), (naive, wrong)):
                weight = chosen.new if chosen is not None else 1.0
                bucket.append(brier([min(1.0, q * weight) for q in later_c], later_y))
            credible += belief.credible
            proposed += proposal is not None
            pretended += naive is not None
        print(
            f"| {n} | {credible / runs:.0%} | {proposed / runs:.0%} | {pretended / runs:.0%} | "
            f"{statistics.fmean(none):.4f} | {statistics.fmean(ours):.4f} | "
            f"{statistics.fmean(wrong):.4f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument(
        "--only",
        choices=("coverage", "significance", "held_out", "p_success"),
        help="Run one part only.",
    )
    args = parser.parse_args()
    if args.only in (None, "coverage"):
        coverage(args.runs, args.seed)
    if args.only in (None, "significance"):
        significance(args.runs, args.seed + 1)
    if args.only in (None, "held_out"):
        held_out(max(200, args.runs // 5), args.seed + 2)
    if args.only in (None, "p_success"):
        stated_p_success(max(200, args.runs // 5), args.seed + 3)


if __name__ == "__main__":
    main()
