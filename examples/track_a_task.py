"""Track one task from Python: the agent supplies its own scores, Noetic records and decides.

Run it with `python examples/track_a_task.py`; it uses a throwaway store.
"""

import tempfile

from noetic import Assessment, ProfileRegistry, Store, Tracker

BEFORE = {
    "engagement": 0.9, "know": 0.5, "do": 0.8, "context": 0.4, "clarity": 0.8,
    "coherence": 0.8, "signal": 0.6, "density": 0.5, "state": 0.5, "change": 0.7,
    "completion": 0.5, "impact": 0.6, "uncertainty": 0.6,
}  # fmt: skip


def main() -> None:
    with tempfile.TemporaryDirectory() as home, Store(home) as store:
        tracker = Tracker(store, ProfileRegistry())
        session, profile = tracker.bootstrap(ai_id="example", ai_model="gpt-4o-mini")
        print(f"profile: {profile.name} (threshold {profile.investigation.confidence_threshold})")

        baseline = Assessment.from_input("preflight", BEFORE)
        pre = tracker.preflight(session.id, "Summarise last night's incident", baseline)
        print("preflight:", pre.decision.action, "-", pre.decision.reason)

        tracker.investigate(session.id, "Read the incident timeline and the pager log")
        check = tracker.check(
            session.id,
            Assessment.from_input("check", {"know": 0.85, "context": 0.85, "uncertainty": 0.2}),
        )
        print("check:", check.decision.action, "-", check.decision.reason)

        after = {**BEFORE, "know": 0.85, "context": 0.85, "state": 0.8, "completion": 0.85}
        post = tracker.postflight(session.id, Assessment.from_input("postflight", after))
        print("calibration:", post.calibration.classification, post.calibration.delta)


if __name__ == "__main__":
    main()
