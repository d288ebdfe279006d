"""The commands the fast path also runs, as typer declares them: options, help, and a call
into the module where each command's work lives (:mod:`noetic.cli.workflow`,
:mod:`noetic.cli.hooks`, :mod:`noetic.cli.mcp_stdio`).

Those modules import no typer, so the fast path (:mod:`noetic.cli.fast`) can call them for
plain invocations; ``tests/cli/test_fast_path.py`` holds the two to the same options and the
same parsed values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from noetic.cli import hooks, mcp_stdio, workflow
from noetic.cli.options import AiIdOpt, JsonOpt, SessionOpt, StoreOpt

VectorsOpt = Annotated[
    str | None,
    typer.Option("--vectors", help="Scores as JSON, e.g. '{\"know\": 0.8, ...}'."),
]
ProviderOpt = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="Let a model write the assessment: anthropic:MODEL, openai:MODEL, ollama:MODEL, "
        "openai-compatible:URL#MODEL, or 'default' for $NOETIC_PROVIDER / config.toml. "
        "Without it the assessment is yours to give (the prompt is printed).",
    ),
]
VectorsFileOpt = Annotated[
    Path | None,
    typer.Option("--vectors-file", help="A JSON file with the scores ('-' for stdin)."),
]


def bootstrap(
    profile: Annotated[str | None, typer.Option(help="Profile name.")] = None,
    ai_model: Annotated[str | None, typer.Option(help="Model id, for auto-selection.")] = None,
    domain: Annotated[str | None, typer.Option(help="Task domain, for auto-selection.")] = None,
    ai_id: Annotated[
        str,
        typer.Option(
            "--ai-id", envvar="NOETIC_AI_ID", help="Who is assessing itself ($NOETIC_AI_ID)."
        ),
    ] = "agent",
    project: Annotated[str | None, typer.Option(help="Project name for this session.")] = None,
    recall: Annotated[
        str | None,
        typer.Option("--recall", help="Also recall earlier tasks relevant to this upcoming task."),
    ] = None,
    vectors: Annotated[
        str | None,
        typer.Option(
            "--vectors",
            help="With --recall: a fresh assessment of the upcoming task (JSON scores); its "
            "need decides how much to load. Without it the need is neutral.",
        ),
    ] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Open a session, choose its profile and make it this agent's current session.

    Prints the `export` lines that pin the agent and the session for the commands that follow
    in the same shell (`eval` them, or copy them)."""
    workflow.bootstrap(
        profile=profile,
        ai_model=ai_model,
        domain=domain,
        ai_id=ai_id,
        project=project,
        recall=recall,
        vectors=vectors,
        store=store,
        json=json,
    )


def preflight(
    task: Annotated[str, typer.Argument(help="The task about to be attempted.")],
    vectors: VectorsOpt = None,
    vectors_file: VectorsFileOpt = None,
    abandon_open: Annotated[
        bool, typer.Option(help="Close a still-open task as abandoned first.")
    ] = False,
    provider: ProviderOpt = None,
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Baseline assessment before a task. Without scores, prints the prompt to answer."""
    workflow.preflight(
        task,
        vectors=vectors,
        vectors_file=vectors_file,
        abandon_open=abandon_open,
        provider=provider,
        session=session,
        ai_id=ai_id,
        store=store,
        json=json,
    )


def check(
    vectors: VectorsOpt = None,
    vectors_file: VectorsFileOpt = None,
    provider: ProviderOpt = None,
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Reassess after investigating (partial scores allowed) and print the decision."""
    workflow.check(
        vectors=vectors,
        vectors_file=vectors_file,
        provider=provider,
        session=session,
        ai_id=ai_id,
        store=store,
        json=json,
    )


def postflight(
    vectors: VectorsOpt = None,
    vectors_file: VectorsFileOpt = None,
    provider: ProviderOpt = None,
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Final reassessment: records it, prints the deltas and the calibration, closes the task."""
    workflow.postflight(
        vectors=vectors,
        vectors_file=vectors_file,
        provider=provider,
        session=session,
        ai_id=ai_id,
        store=store,
        json=json,
    )


def investigate(
    note: Annotated[str, typer.Option("--note", help="What was looked into and found.")],
    tool: Annotated[str | None, typer.Option(help="The tool used, if any.")] = None,
    vector: Annotated[
        str | None, typer.Option(help="The vector this investigation targets.")
    ] = None,
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Record one investigation step of the open task."""
    workflow.investigate(
        note, tool=tool, vector=vector, session=session, ai_id=ai_id, store=store, json=json
    )


def state(
    session: SessionOpt = None, ai_id: AiIdOpt = None, store: StoreOpt = None, json: JsonOpt = False
) -> None:
    """Where the agent's current session stands and what to do next."""
    workflow.state(session=session, ai_id=ai_id, store=store, json=json)


def hook(
    event: Annotated[
        str,
        typer.Argument(
            help="session-start, pre-compact, stop, post-tool-use or session-end.",
            show_default=False,
        ),
    ],
    store: StoreOpt = None,
) -> None:
    """Handle one host hook event: reads the host's JSON on stdin, answers on stdout."""
    hooks.hook(event, store=store)


def mcp(store: StoreOpt = None) -> None:
    """Serve MCP over stdio: protocol on stdout, logs on stderr."""
    mcp_stdio.mcp(store)
