"""The cognitive agent: triage → reason → act → synthesize, with tools, a safety gate and memory.

``Agent`` (:mod:`noetic.agent.api`) is the entry point for Python callers; ``run_agent(ctx,
query, settings)`` (:mod:`noetic.agent.loop`) is the engine, on a run context like every other.
"""

from noetic.agent.api import Agent, Finished, StepEvent, TextDelta
from noetic.agent.loop import EDGES, AgentResult, mermaid, run_agent
from noetic.agent.state import AgentSettings

__all__ = [
    "EDGES",
    "Agent",
    "AgentResult",
    "AgentSettings",
    "Finished",
    "StepEvent",
    "TextDelta",
    "mermaid",
    "run_agent",
]
