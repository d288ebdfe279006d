"""The NovaProcess as data: the nodes, the edges and the conditions on them.

The engine runs this graph and nothing else: each node's handler returns the label of the edge
to take, and :func:`next_node` looks the target up here, so what ``noetic nova graph`` prints
(:func:`mermaid`) is what runs::

    question → unpack → experts → synthesize → check ─┬─ uncertain → experts
                                                      └─ settled   → critique
    critique ─┬─ critical   → experts            (a flaw: the experts look again)
              ├─ minor      → revise → final     (the DCE adjusts the proposal)
              ├─ none       → final
              └─ unresolved → escalated          (critical at the round limit, or converged)
    escalated ── input → final                   (a person decides: ``noetic nova resume``)
    final → done

``check`` is the epistemic gate: the synthesis's uncertainty above the gate (default 0.35)
sends the DCE's open question back to the experts, unless the rounds are used up or the panel's
state has converged (it moved less than epsilon since the previous round), in which case more
rounds would not help and the process goes on to the critique.
"""

from __future__ import annotations

from dataclasses import dataclass

from noetic.nova.turns import Node


@dataclass(frozen=True)
class Edge:
    source: str
    target: Node
    when: str = ""


START = "question"

LABELS: dict[str, str] = {
    START: "Question",
    Node.UNPACK: "DCE: unpack",
    Node.EXPERTS: "Experts: analyse (concurrent)",
    Node.SYNTHESIZE: "DCE: synthesise",
    Node.CHECK: "CHECK gate",
    Node.CRITIQUE: "CAE: critique",
    Node.REVISE: "DCE: revise",
    Node.FINAL: "DCE: final recommendation",
    Node.ESCALATED: "Escalated: a person decides",
    Node.DONE: "Done",
}

EDGES: tuple[Edge, ...] = (
    Edge(START, Node.UNPACK),
    Edge(Node.UNPACK, Node.EXPERTS),
    Edge(Node.EXPERTS, Node.SYNTHESIZE),
    Edge(Node.SYNTHESIZE, Node.CHECK),
    Edge(Node.CHECK, Node.EXPERTS, "uncertain"),
    Edge(Node.CHECK, Node.CRITIQUE, "settled"),
    Edge(Node.CRITIQUE, Node.EXPERTS, "critical"),
    Edge(Node.CRITIQUE, Node.REVISE, "minor"),
    Edge(Node.CRITIQUE, Node.FINAL, "none"),
    Edge(Node.CRITIQUE, Node.ESCALATED, "unresolved"),
    Edge(Node.REVISE, Node.FINAL),
    Edge(Node.ESCALATED, Node.FINAL, "input"),
    Edge(Node.FINAL, Node.DONE),
)


def next_node(source: str, when: str = "") -> Node:
    """The node an edge leads to; an edge the graph does not have is a bug."""
    for edge in EDGES:
        if edge.source == source and edge.when == when:
            return edge.target
    raise LookupError(f"the NovaProcess graph has no edge from {source!r} on {when!r}")


def mermaid() -> str:
    """The graph as a Mermaid flowchart."""
    lines = ["flowchart TD"]
    shapes = {Node.CHECK: ("{", "}"), START: ("([", "])"), Node.DONE: ("([", "])")}
    for name, label in LABELS.items():
        opening, closing = shapes.get(name, ("[", "]"))
        lines.append(f'    {name}{opening}"{label}"{closing}')
    for edge in EDGES:
        arrow = f" -->|{edge.when}| " if edge.when else " --> "
        lines.append(f"    {edge.source}{arrow}{edge.target.value}")
    return "\n".join(lines) + "\n"
