"""What a chain has observed so far, and the summary each stage hands to the next."""

from __future__ import annotations

from noetic.observer.observation import Observation


class ChainContext:
    def __init__(self, query: str) -> None:
        self.query = query
        self.observations: list[Observation] = []

    def add(self, observation: Observation) -> None:
        self.observations.append(observation)

    def latest(self) -> Observation | None:
        return self.observations[-1] if self.observations else None

    def previous(self) -> Observation | None:
        return self.observations[-2] if len(self.observations) > 1 else None

    def summary(self) -> str:
        """The previous stages, for the next stage's prompt."""
        return "\n\n".join(
            f"Stage {o.stage} (confidence {o.confidence:.2f}, layers "
            f"{','.join(o.layers) or 'none'}):\n{o.content}"
            for o in self.observations
        )

    def average_confidence(self) -> float:
        if not self.observations:
            return 0.0
        return sum(o.confidence for o in self.observations) / len(self.observations)
