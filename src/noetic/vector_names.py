"""The 13 epistemic vectors' names and tiers, for the modules that only name them (the store's
rows and tables): plain constants, without the formula's pydantic models in :mod:`noetic.vectors`,
which re-exports them."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


TIERS: Final[dict[str, tuple[str, ...]]] = {
    "engagement": ("engagement",),
    "foundation": ("know", "do", "context"),
    "comprehension": ("clarity", "coherence", "signal", "density"),
    "execution": ("state", "change", "completion", "impact"),
}
META_VECTOR: Final = "uncertainty"
VECTOR_NAMES: Final[tuple[str, ...]] = (
    *(name for names in TIERS.values() for name in names),
    META_VECTOR,
)
