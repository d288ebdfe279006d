"""What the agent asks the model at each node."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

TRIAGE_SYSTEM = """You triage a request before an agent acts on it.

1. Safety. Judge the intent, not the words. Refuse requests whose purpose is to cause harm: \
destroying data or systems that are not the user's own work, stealing credentials or secrets, \
evading security, malware, attacks on others. Ordinary development work is safe even when it \
deletes, overwrites or runs things inside the project.
2. Tools. From the tools listed, choose the ones this request needs (by exact name); none for a \
question you can answer from knowledge.
3. Depth. "fast" for a simple request, "deep" for multi-step work.
4. A direct answer. When the request needs no tools and is simple, answer it here in full.

Tools:
{tools}
"""

UNSAFE_ANSWER = (
    "Refused: the model ({model}) judged this request unsafe at triage: {reason}. Nothing was "
    "run. If the request is legitimate, rephrase it to say what it is for; with --approve ask, "
    "each irreversible action the agent then takes waits for your yes."
)


GATE_REFUSAL = (
    "Security violation: the request is a command line the shell gate refuses, rule {why}. "
    "Nothing was run, and no model was asked."
)


class Triage(BaseModel):
    """The triage node's decision."""

    safe: bool = Field(description="false when the request's intent is harmful")
    safety_reason: str = Field("", description="why it is unsafe; empty when safe")
    tools: list[str] = Field(default_factory=list, description="names of the tools needed")
    mode: str = Field("fast", description='"fast" or "deep"')
    answer: str | None = Field(
        None, description="the full answer, only when no tools are needed and it is simple"
    )


REASON_SYSTEM = """You are {name}, an agent working in the folder {workspace}.
Use the tools to act and to check your work; their results come back to you. When a tool \
fails, read its error and adapt instead of repeating the same call. When you are done, answer \
the user without calling tools.

{depth}
{memory}"""

RESUMED = "This task was interrupted and is being resumed. Progress so far:\n{progress}"

FINAL_NOW = (
    "You have no steps left. Answer the user now with what you have found, saying plainly what "
    "is unfinished."
)

PROFILE_SYSTEM = """You keep a short profile of a user from their conversations with an agent.
Consolidate the profile from the current profile and the interactions since it was last \
consolidated: stated preferences, goals, areas of expertise, how they like to be answered, \
projects they mention. Keep what is still true, drop what was contradicted, invent nothing."""

LEARN_SYSTEM = """You keep a short profile of a user from their conversations with an agent.
Note only what the user states about themselves in the latest interaction: preferences (a short \
name for each, such as "language" or "employer", and its value), goals, areas of expertise, how \
they like to be answered, projects they mention. Leave a field empty when the interaction says \
nothing about it; repeat nothing from the current profile unless the user changed it; invent \
nothing."""


class ProfileUpdate(BaseModel):
    preferences: dict[str, str] = Field(default_factory=dict)
    goals: list[str] = Field(default_factory=list)
    expertise_areas: list[str] = Field(default_factory=list)
    communication_style: str = ""
    projects: dict[str, str] = Field(default_factory=dict)

    def named(self) -> str:
        """What it says, in a line ("preferences: language, employer; goals: 1"); empty when
        it says nothing."""
        parts = [f"preferences: {', '.join(self.preferences)}"] if self.preferences else []
        parts += [f"projects: {', '.join(self.projects)}"] if self.projects else []
        parts += [f"goals: {len(self.goals)}"] if self.goals else []
        parts += [f"expertise: {len(self.expertise_areas)}"] if self.expertise_areas else []
        parts += ["communication style"] if self.communication_style.strip() else []
        return "; ".join(parts)


JSON_TOOLS = """You can call these tools:
{tools}

Reply with one JSON object and nothing else: {{"tool_calls": [{{"name": "…", "arguments": \
{{…}}}}]}} to call tools (their results come back in the next message), or {{"answer": "…"}} \
when you are done."""


class JsonCall(BaseModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class JsonStep(BaseModel):
    """A reason step's reply from a model without native tool calls."""

    tool_calls: list[JsonCall] = Field(default_factory=list)
    answer: str | None = None
