"""The commands the fast path runs, declared once: options, spellings, environment variables,
defaults and help text, and the options every command shares (docs/architecture.md, "The
command line"). The fast path (:mod:`noetic.cli.fast`) and typer
(:mod:`noetic.cli.typer_commands`) both read this table. It imports nothing but the standard
library: the fast path must stay fast.
"""

from __future__ import annotations

from pathlib import Path

from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Opt(NamedTuple):
    """One option: the parameter it sets, its spellings, and how its value is read.

    ``kind`` is ``str``, ``float``, ``Path`` or ``bool`` (a flag, with ``off_flags`` its
    negative spelling ``--no-…`` when it has one). ``show_default`` is passed to typer as is
    (None: typer's own choice)."""

    dest: str
    flags: tuple[str, ...]
    help: str
    kind: type = str
    default: Any = None
    envvar: str | None = None
    off_flags: tuple[str, ...] = ()
    required: bool = False
    show_default: bool | None = None


class Arg(NamedTuple):
    """A positional parameter (a text): required, or else None when left out (only the last
    ones may be optional)."""

    dest: str
    help: str
    show_default: bool | None = None
    required: bool = True


class Command(NamedTuple):
    """A command: its help (the first line is its summary in ``noetic --help``), its options,
    its positional arguments in order, and the module whose function of the command's name
    does the work (that module imports no typer)."""

    help: str
    options: tuple[Opt, ...]
    arguments: tuple[Arg, ...] = ()
    module: str = "noetic.cli.workflow"

    def defaults(self) -> dict[str, Any]:
        """Every option's value when it is not given (before environment variables), and None
        for each optional argument."""
        values = {opt.dest: opt.default for opt in self.options if not opt.required}
        return {**values, **{a.dest: None for a in self.arguments if not a.required}}


# --- shared by many commands (typer's other commands take these from noetic.cli.options) ---

JSON = Opt("json", ("--json",), "Print one JSON document on stdout.", bool, default=False)
STORE = Opt(
    "store",
    ("--store",),
    "Store directory (default: .noetic in the project, or $NOETIC_HOME).",
    Path,
    show_default=False,
)
SESSION = Opt(
    "session",
    ("--session", "-s"),
    "Session id or prefix (default: $NOETIC_SESSION, else the agent's current session).",
    envvar="NOETIC_SESSION",
    show_default=False,
)
AI_ID = Opt(
    "ai_id",
    ("--ai-id",),
    "The agent acting: its current session is used (default: $NOETIC_AI_ID, else 'agent').",
    envvar="NOETIC_AI_ID",
    show_default=False,
)

REQUEST_ID = Opt(
    "request_id",
    ("--request-id",),
    "An idempotency key: a retry with the same key and arguments is answered from the first "
    "run, never applied twice.",
    show_default=False,
)

# --- the assessment phases ---

_VECTORS = Opt("vectors", ("--vectors",), "Scores as JSON, e.g. '{\"know\": 0.8, ...}'.")
_VECTORS_FILE = Opt(
    "vectors_file", ("--vectors-file",), "A JSON file with the scores ('-' for stdin).", Path
)
_PROVIDER = Opt(
    "provider",
    ("--provider",),
    "Let a model write the assessment: anthropic:MODEL, openai:MODEL, ollama:MODEL, "
    "openai-compatible:URL#MODEL, or 'default' for $NOETIC_PROVIDER / config.toml. "
    "Without it the assessment is yours to give (the prompt is printed).",
)
_P_SUCCESS = Opt(
    "p_success",
    ("--p-success",),
    "Your probability, 0 to 1, that the task will succeed as its outcome will judge it "
    '(joins the scores given; the same as "p_success" in the JSON).',
)
_REVIEW = Opt(
    "review",
    ("--review",),
    "standard or adversarial: an adversarial review looks for what is wrong with the work "
    "before reassessing (with --provider the model does; without, the prompt asks you to).",
)
_WRITES = (SESSION, AI_ID, REQUEST_ID, STORE, JSON)  # a command that writes into a session
_ASSESS = (_VECTORS, _VECTORS_FILE, _P_SUCCESS, _PROVIDER, *_WRITES)

COMMANDS: dict[str, Command] = {
    "bootstrap": Command(
        "Open a session, choose its profile and make it this agent's current session.\n\n"
        "Prints the `export` lines that pin the agent and the session for the commands that "
        "follow\nin the same shell (`eval` them, or copy them).",
        (
            Opt("profile", ("--profile",), "Profile name."),
            Opt("ai_model", ("--ai-model",), "Model id, for auto-selection."),
            Opt("domain", ("--domain",), "Task domain, for auto-selection."),
            Opt(
                "ai_id",
                ("--ai-id",),
                "Who is assessing itself ($NOETIC_AI_ID).",
                default="agent",
                envvar="NOETIC_AI_ID",
            ),
            Opt("project", ("--project",), "Project name for this session."),
            Opt(
                "session_type",
                ("--session-type",),
                "What kind of session this is (development, review…), kept with it.",
            ),
            Opt(
                "recall", ("--recall",), "Also recall earlier tasks relevant to this upcoming task."
            ),
            Opt(
                "own",
                ("--own",),
                "With --recall: only this agent's own tasks (default: every agent's in the "
                "project).",
                bool,
                default=False,
            ),
            Opt(
                "vectors",
                ("--vectors",),
                "With --recall: a fresh assessment of the upcoming task (JSON scores); its "
                "need decides how much to load. Without it the need is neutral.",
            ),
            REQUEST_ID,
            STORE,
            JSON,
        ),
    ),
    "preflight": Command(
        "Baseline assessment before a task. Without scores, prints the prompt to answer.",
        (
            *_ASSESS[:3],
            Opt(
                "abandon_open",
                ("--abandon-open",),
                "Close a still-open task as abandoned first.",
                bool,
                default=False,
                off_flags=("--no-abandon-open",),
            ),
            *_ASSESS[3:],
        ),
        arguments=(Arg("task", "The task about to be attempted."),),
    ),
    "investigate": Command(
        "Record one investigation step of the open task.",
        (
            Opt("note", ("--note",), "What was looked into and found.", required=True),
            Opt("tool", ("--tool",), "The tool used, if any."),
            Opt("vector", ("--vector",), "The vector this investigation targets."),
            *_WRITES,
        ),
    ),
    "check": Command(
        "Reassess after investigating (partial scores allowed) and print the decision.", _ASSESS
    ),
    "postflight": Command(
        "Final reassessment: records it, prints the deltas and the calibration, closes the task.",
        (*_ASSESS[:3], _REVIEW, *_ASSESS[3:]),
    ),
    "state": Command(
        "Where the agent's current session stands and what to do next.",
        (SESSION, AI_ID, STORE, JSON),
    ),
    "hook": Command(
        "Handle one host hook event: reads the host's JSON on stdin, answers on stdout.",
        (STORE,),
        arguments=(
            Arg(
                "event",
                "session-start, user-prompt-submit, pre-tool-use, pre-compact, stop, "
                "post-tool-use or session-end.",
                show_default=False,
            ),
        ),
        module="noetic.cli.hooks",
    ),
    "outcome": Command(
        "Record a verified outcome of a task, next to what the agent predicted.",
        (
            Opt("success", ("--success",), "The task succeeded (1.0).", bool, default=False),
            Opt("failure", ("--failure",), "The task failed (0.0).", bool, default=False),
            Opt("score", ("--score",), "A graded outcome in [0, 1].", float),
            Opt(
                "from_junit",
                ("--from-junit",),
                "A JUnit XML report: every test passed is a success, a failure or an error "
                "a failure (skipped tests count for neither).",
                Path,
                show_default=False,
            ),
            Opt("evidence", ("--evidence",), "What the verdict rests on.", default=""),
            Opt(
                "source",
                ("--source",),
                "test, human or check (default: human; test with --from-junit).",
            ),
            SESSION,
            Opt(
                "ai_id",
                ("--ai-id",),
                "The agent whose current session's task it is ($NOETIC_AI_ID).",
                envvar="NOETIC_AI_ID",
            ),
            REQUEST_ID,
            STORE,
            JSON,
        ),
        arguments=(
            Arg(
                "target",
                "Cascade id, or session id (its latest task). Default: the agent's current "
                "session.",
                required=False,
            ),
        ),
        module="noetic.cli.outcome",
    ),
    # a host starts it at the beginning of every session, and waits for its tool list
    "mcp": Command(
        "Serve MCP over stdio: protocol on stdout, logs on stderr.",
        (STORE,),
        module="noetic.cli.mcp_stdio",
    ),
}
