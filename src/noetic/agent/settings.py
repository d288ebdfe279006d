"""How one agent runs: its workspace, mode, limits, and what it may do without asking."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from noetic.agent.state import Mode
from noetic.frozen import Frozen


class AgentSettings(Frozen):
    """How one agent runs."""

    name: str = "assistant"
    workspace: Path = Path(".")
    mode: Mode = "adapt"
    max_iterations: int = Field(10, ge=1, le=100)
    max_tokens: int | None = Field(None, gt=0, description="token budget of the whole run")
    breaker_threshold: int = Field(3, ge=1)
    tools_fixed: bool = False  # the caller listed the tools: triage does not narrow them
    user_id: str = "default"
    epistemic: bool = False  # wrap the run in CASCADE and hold irreversible actions
    approve: Literal["ask", "never", "always"] = "never"
    scratch: str | None = None  # a folder of the workspace whose writes count as reversible
    policy_files: tuple[Path, ...] = ()
