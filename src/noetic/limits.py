"""How much Noetic accepts from outside, in one place.

Every path by which text reaches Noetic — a model's reply, a command line through MCP, stdin, a
file, a JSON document, a text or identifier field — is checked against one of these limits
before any work proportional to its size is done. Breaking a limit is a
:class:`noetic.errors.LimitExceeded` that names the limit, the size seen and the maximum, so the
caller (or the model, in a repair round) knows exactly what to shorten.

``docs/limits.md`` lists them for users; :data:`ALL` is the table it is written from.
"""

from __future__ import annotations

from noetic.errors import LimitExceeded
from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


class InputLimit(NamedTuple):
    """One bound: its ``name`` (as errors and docs spell it), the ``maximum``, the ``unit`` it
    is measured in and ``what`` it bounds."""

    name: str
    maximum: int
    unit: str
    what: str

    def check(self, size: int, source: str) -> None:
        """Raise :class:`LimitExceeded` when ``size`` is over the maximum."""
        if size > self.maximum:
            raise LimitExceeded(
                f"{source} is {size:,} {self.unit}, over the {self.name} limit of "
                f"{self.maximum:,} {self.unit}",
                limit=self.name,
                maximum=self.maximum,
                size=size,
                field=source,
                fix=f"shorten it to at most {self.maximum:,} {self.unit}",
            )


REPLY_CHARS: Final = InputLimit("reply_chars", 200_000, "characters", "a model's reply")
COMMAND_CHARS: Final = InputLimit(
    "command_chars", 8_192, "characters", "a command line sent to execute_cli_command or cli_help"
)
STDIN_BYTES: Final = InputLimit("stdin_bytes", 16 * 1024 * 1024, "bytes", "JSON read from stdin")
FILE_BYTES: Final = InputLimit(
    "file_bytes", 16 * 1024 * 1024, "bytes", "a file read as input (--vectors-file, imports)"
)
JSON_DEPTH: Final = InputLimit("json_depth", 64, "levels", "nesting of arrays and objects in JSON")
NUMBER_CHARS: Final = InputLimit("number_chars", 64, "characters", "one number written in JSON")
TEXT_CHARS: Final = InputLimit(
    "text_chars",
    65_536,
    "characters",
    "one text field: a task, note, rationale, evidence, question or query",
)
IDENTIFIER_CHARS: Final = InputLimit(
    "identifier_chars",
    200,
    "characters",
    "one identifier: an AI id, session id, profile, model, domain or project name",
)

ALL: Final = (
    REPLY_CHARS,
    COMMAND_CHARS,
    STDIN_BYTES,
    FILE_BYTES,
    JSON_DEPTH,
    NUMBER_CHARS,
    TEXT_CHARS,
    IDENTIFIER_CHARS,
)
