"""``Frozen``: the pydantic model whose instances cannot change, the base of Noetic's results
and read models (a report, a run, a page's view)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)
