"""``Frozen``: the pydantic model whose instances cannot change, the base of Noetic's results
and read models (a report, a run, a page's view)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.plain import evaluable


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # before pydantic reads the fields: an alias a module the hot paths load writes as
        # text (``Stated``) is the type it names here
        evaluable(cls)
        super().__init_subclass__(**kwargs)
