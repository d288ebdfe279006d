"""Deciding on calibrated numbers: simulated agents with a known truth, and the cost where an
agent waits.

* **The map** (``noetic.calibration.recalibration.recalibrate``, as a decision uses it on the
  agent's own outcomes): for each agent kind and each number of past outcomes (10, 20, 60,
  200), ``--runs`` agents (default 400). Each agent's past outcomes are drawn in time order, the
  map is fitted on them, then judged on 2,000 *future* tasks of the same agent against their
  true success probabilities (so the figures carry no noise of the future outcomes
  themselves): the |gap| between mean stated (raw) or calibrated value and the true success
  rate, and the expected Brier score, raw beside calibrated, each as the mean over agents with
  its 95% interval; how often a map was in force; how often the calibrated value was worse
  than the raw one (a higher expected Brier score).

  Agents: *overconfident* like Kaddour et al. (2026) (states ≈ 0.75, succeeds ≈ 0.30, weak
  discrimination: AUROC ≈ 0.65, printed), *certain* (always states 0.95, succeeds 0.30),
  *calibrated* (states 0.20–0.95, succeeds as stated),
  *underconfident* (states ≈ 0.45, succeeds ≈ 0.75) and *drifting* (calibrated for the first
  half of its past, then succeeding 0.35 less than it states; the future is the drifted one).

* **The release gate** (``release_gate``: at most 10% of released tasks fail, 95% confidence):
  for a calibrated agent, a discriminating overconfident one (succeeding at twice what it states
  above 0.5) and a sharp one (what it states at 0.85 or more succeeds 97% of the time, the
  rest 40%), at 60, 200 and 1,000 past
  outcomes, the true failure rate among the future tasks it releases against the target (the
  guarantee holds when it is at most 10% in at least 95% of runs: a run with no threshold
  releases nothing by the gate and meets it), the share of future tasks held, and how often no
  threshold could be supported (the profile's threshold then applies).

* **The cost over MCP**: ``noetic mcp`` over a store holding 10,000 recorded outcomes of the
  agent; ``submit_preflight_assessment`` and ``submit_check_assessment`` round trips with the
  map in force, beside the same calls with ``[calibration] decide_on = "stated"`` (no map), in
  alternating blocks on one server (the setting is read per decision), and with the release
  gate configured.

    python bench/recalibration.py [--runs 400] [--only map|gate|cost]
"""

import argparse
import asyncio
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noetic.calibration.recalibration import recalibrate, release_gate

FUTURE = 2000
SIZES = (10, 20, 60, 200)


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def logit(p):
    return math.log(p / (1 - p))


def clip(p, lo=0.02, hi=0.99):
    return min(hi, max(lo, p))


def overconfident(rng, n, late=False):
    """States ≈ 0.75, succeeds ≈ 0.30; a shared latent gives AUROC ≈ 0.65."""
    out = []
    for _ in range(n):
        z = rng.gauss(0, 1)
        p = round(clip(0.75 + 0.06 * z + 0.03 * rng.gauss(0, 1)), 2)
        out.append((p, sigmoid(logit(0.30) + 0.75 * z)))
    return out


def calibrated(rng, n, late=False):
    return [(p, p) for p in (round(rng.uniform(0.2, 0.95), 2) for _ in range(n))]


def underconfident(rng, n, late=False):
    out = []
    for _ in range(n):
        z = rng.gauss(0, 1)
        p = round(clip(0.45 + 0.06 * z + 0.03 * rng.gauss(0, 1)), 2)
        out.append((p, sigmoid(logit(0.75) + 0.75 * z)))
    return out


def drifting(rng, n, late=False):
    """Calibrated for the first half of its past, then succeeding 0.35 less than it states."""
    out = []
    for i in range(n):
        p = round(rng.uniform(0.5, 0.95), 2)
        after = late or i >= n // 2
        out.append((p, clip(p - 0.35, 0.0, 1.0) if after else p))
    return out


def certain(rng, n, late=False):
    """Always states 0.95 (a model that gives the same number every time), succeeds 30%."""
    return [(0.95, 0.30) for _ in range(n)]


AGENTS = {
    "overconfident": overconfident,
    "certain": certain,
    "calibrated": calibrated,
    "underconfident": underconfident,
    "drifting": drifting,
}


def outcomes(rng, tasks):
    return [1.0 if rng.random() < t else 0.0 for _, t in tasks]


def interval(values):
    """Mean and its normal 95% interval over runs."""
    m = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{m:.3f} [{m - half:.3f}, {m + half:.3f}]"


def auroc(pairs):
    pos = [p for p, y in pairs if y >= 0.5]
    neg = [p for p, y in pairs if y < 0.5]
    wins = sum((a > b) + 0.5 * (a == b) for a in pos[:1500] for b in neg[:1500])
    return wins / (min(len(pos), 1500) * min(len(neg), 1500))


def map_section(runs):
    rng = random.Random(2026)
    sample = overconfident(rng, 6000)
    check = list(zip([p for p, _ in sample], outcomes(rng, sample), strict=True))
    print(
        f"The map: {runs} agents a cell, judged on {FUTURE} future tasks each (mean over agents, "
        f"95% interval); overconfident AUROC = {auroc(check):.3f}"
    )
    print(
        f"{'agent':<15}{'n':>4}  {'|gap| raw':<22}{'|gap| calibrated':<22}"
        f"{'Brier raw':<22}{'Brier calibrated':<22}{'in force':>9}{'worse':>7}"
    )
    for name, make in AGENTS.items():
        for n in SIZES:
            gap_raw, gap_cal, b_raw, b_cal = [], [], [], []
            in_force = worse = 0
            for _ in range(runs):
                past = make(rng, n)
                fitted = recalibrate([p for p, _ in past], outcomes(rng, past))
                future = make(rng, FUTURE, late=True)
                rate = statistics.fmean(t for _, t in future)
                q = [fitted(p) for p, _ in future]
                gap_raw.append(abs(statistics.fmean(p for p, _ in future) - rate))
                gap_cal.append(abs(statistics.fmean(q) - rate))
                raw = statistics.fmean(t * (1 - p) ** 2 + (1 - t) * p * p for p, t in future)
                cal = statistics.fmean(
                    t * (1 - c) ** 2 + (1 - t) * c * c for (_, t), c in zip(future, q, strict=True)
                )
                b_raw.append(raw)
                b_cal.append(cal)
                in_force += fitted.in_force
                worse += cal > raw + 1e-12
            print(
                f"{name:<15}{n:>4}  {interval(gap_raw):<22}{interval(gap_cal):<22}"
                f"{interval(b_raw):<22}{interval(b_cal):<22}{in_force / runs:>9.1%}"
                f"{worse / runs:>7.1%}"
            )


def discriminating(rng, n, late=False):
    """Overconfident but informative: states 0.5–0.99, succeeds at (stated − 0.5) · 2."""
    stated = (round(rng.uniform(0.5, 0.99), 2) for _ in range(n))
    return [(p, clip((p - 0.5) * 2, 0.0, 1.0)) for p in stated]


def sharp(rng, n, late=False):
    """States 0.5–0.99; what it states at 0.85 or more succeeds 97% of the time, the rest 40%."""
    stated = (round(rng.uniform(0.5, 0.99), 2) for _ in range(n))
    return [(p, 0.97 if p >= 0.85 else 0.40) for p in stated]


def gate_section(runs, rate=0.10, confidence=0.95):
    rng = random.Random(7)
    print(
        f"\nThe release gate: at most {rate:.0%} of released tasks fail, {confidence:.0%} "
        f"confidence; {runs} agents a cell, judged on {FUTURE} future tasks' true success"
    )
    print(
        f"{'agent':<15}{'n':>5}  {'failure among released':<24}{'guarantee':>11}"
        f"{'held':>8}{'no threshold':>14}"
    )
    kinds = (("calibrated", calibrated), ("discriminating", discriminating), ("sharp", sharp))
    for name, make in kinds:
        for n in (60, 200, 1000):
            realised, held, none = [], [], 0
            for _ in range(runs):
                past = make(rng, n)
                gate = release_gate([p for p, _ in past], outcomes(rng, past), rate, confidence)
                future = make(rng, FUTURE, late=True)
                if gate.threshold is None:
                    none += 1
                    held.append(1.0)
                    continue
                released = [t for p, t in future if p >= gate.threshold - 1e-12]
                held.append(1 - len(released) / len(future))
                if released:
                    realised.append(1 - statistics.fmean(released))
            missed = sum(r > rate for r in realised)
            shown = interval(realised) if len(realised) > 1 else "—"
            print(
                f"{name:<15}{n:>5}  {shown:<24}{1 - missed / runs:>11.1%}"
                f"{statistics.fmean(held):>8.1%}{none / runs:>14.1%}"
            )


# the cost over MCP ---------------------------------------------------------------------------

SCORES = {
    "engagement": 0.9, "know": 0.8, "do": 0.8, "context": 0.8, "clarity": 0.8,
    "coherence": 0.9, "signal": 0.8, "density": 0.2, "state": 0.8, "change": 0.8,
    "completion": 0.8, "impact": 0.8, "uncertainty": 0.2,
}  # fmt: skip
OUTCOMES = 10_000
CALLS = 100


def fill(home: Path) -> None:
    """10,000 tasks of agent ``bench``, each with a PREFLIGHT stating 0.8 and an outcome (35%
    succeed), written as the workflow writes them."""
    from noetic.assessment import Assessment
    from noetic.calibration import record_outcome
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    rng = random.Random(1)
    (home / "config.toml").write_text('[calibration]\ndecide_on = "stated"\n')
    with Store(home, write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry(home / "profiles"), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="bench")
        pre = Assessment.from_input("preflight", {"vectors": SCORES, "p_success": 0.8})
        for _ in range(OUTCOMES):
            r = tracker.preflight(session.id, "t", pre, abandon_open=True)
            record_outcome(
                store, r.cascade.id, score=float(rng.random() < 0.35), source="test", refit=False
            )
        started = time.perf_counter()
        from noetic.calibration.recalibrating import fit_for

        body = fit_for(store, "bench", None)
        print(
            f"refit on {OUTCOMES} outcomes (what the next outcome's receipt pays): "
            f"{(time.perf_counter() - started) * 1000:.0f} ms; map in force: "
            f"{body['fitted']['in_force']} ({body['fitted']['map']['method']})"
        )


def configure(path: Path, text: str) -> None:
    """Write the settings and flush them to disk, so the next decision's commit does not pay
    for flushing the file (the filesystem's journal would, with SQLite's synchronous commit)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def in_process(home: Path, settings: dict[str, str], rounds: int = 300) -> None:
    """The same decisions in one process (no transport, no other client): the tracker's
    PREFLIGHT and CHECK, alternating the settings call by call."""
    from noetic.assessment import Assessment
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store

    config = home / "config.toml"
    pre = Assessment.from_input("preflight", {"vectors": SCORES, "p_success": 0.8})
    chk = Assessment.from_input("check", {"vectors": SCORES, "p_success": 0.8})
    times = {(k, ph): [] for k in settings for ph in ("preflight", "check")}
    with Store(home, write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry(home / "profiles"), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="bench")
        for i in range(rounds + 20):
            for label, text in settings.items():
                configure(config, text)
                t = time.perf_counter()
                tracker.preflight(session.id, "t", pre, abandon_open=True)
                middle = time.perf_counter()
                tracker.check(session.id, chk)
                end = time.perf_counter()
                if i >= 20:
                    times[(label, "preflight")].append((middle - t) * 1000)
                    times[(label, "check")].append((end - middle) * 1000)
    print(f"\nThe same in one process ({rounds} calls each, alternating)")
    base = {
        ph: statistics.median(times[(next(iter(settings)), ph)]) for ph in ("preflight", "check")
    }
    for (label, phase), values in times.items():
        med = statistics.median(values)
        print(
            f"  {phase:<10}{label:<28} p50 {med:6.2f} ms  (+{med - base[phase]:.2f} ms beside "
            "stated)"
        )


async def cost() -> None:
    from mcp.client.stdio import get_default_environment

    from mcp import Client, StdioServerParameters

    noetic = str(Path(sys.executable).with_name("noetic"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        started = time.perf_counter()
        fill(home)
        print(f"(filled in {time.perf_counter() - started:.0f} s)")
        config = home / "config.toml"
        settings = {
            "stated (no map)": '[calibration]\ndecide_on = "stated"\n',
            "calibrated (map in force)": "",
            "calibrated + release gate": "[gate]\nmax_failure_rate = 0.10\n",
        }
        env = {**get_default_environment(), "NOETIC_CACHE_DIR": str(home / "cache")}
        params = StdioServerParameters(command=noetic, args=["mcp", "--store", tmp], env=env)
        pre_args = {"task": "bench", "vectors": SCORES, "p_success": 0.8, "abandon_open": True}
        check_args = {"vectors": SCORES, "p_success": 0.8}
        times = {(k, phase): [] for k in settings for phase in ("preflight", "check")}
        async with Client(params, mode="legacy") as client:
            await client.call_tool("bootstrap_session", {"ai_id": "bench"})
            for _ in range(10):  # warm up, and keep the map and the gate
                for text in settings.values():
                    configure(config, text)
                    await client.call_tool("submit_preflight_assessment", pre_args)
                    await client.call_tool("submit_check_assessment", check_args)
            for _ in range(CALLS):
                for label, text in settings.items():
                    configure(config, text)
                    for phase, name, args in (
                        ("preflight", "submit_preflight_assessment", pre_args),
                        ("check", "submit_check_assessment", check_args),
                    ):
                        t = time.perf_counter()
                        result = await client.call_tool(name, args)
                        times[(label, phase)].append((time.perf_counter() - t) * 1000)
                        assert not result.is_error, result.content[0].text
            last = result.structured_content or {}
        print(
            f"\nThe cost over MCP, {OUTCOMES} outcomes recorded, {CALLS} calls each (alternating)"
        )
        base = {
            ph: statistics.median(times[("stated (no map)", ph)]) for ph in ("preflight", "check")
        }
        for (label, phase), values in times.items():
            med = statistics.median(values)
            p95 = sorted(values)[int(0.95 * len(values)) - 1]
            print(
                f"  {phase:<10}{label:<28} p50 {med:6.2f} ms  p95 {p95:6.2f} ms  "
                f"(+{med - base[phase]:.2f} ms beside stated)"
            )
        decision = last.get("decision", {})
        print(f"  the last CHECK: {decision.get('action')} — {decision.get('reason')}")
        in_process(home, settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--only", choices=("map", "gate", "cost"))
    options = parser.parse_args()
    if options.only in (None, "map"):
        map_section(options.runs)
    if options.only in (None, "gate"):
        gate_section(options.runs)
    if options.only in (None, "cost"):
        asyncio.run(cost())


if __name__ == "__main__":
    main()
