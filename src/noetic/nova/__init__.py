"""NovaProcess: a panel of personas deliberates on a question, gated by its epistemic state.

``run_nova(ctx, question)`` walks the graph in :mod:`noetic.nova.graph` with the personas of
:mod:`noetic.nova.personas`; ``resume_nova(ctx, run_id, input=…)`` continues an escalated, failed
or killed run without repeating a model call that succeeded.
"""

from noetic.nova.deliberation import resume_nova, run_nova
from noetic.nova.models import NovaRun, NovaSettings

__all__ = ["NovaRun", "NovaSettings", "resume_nova", "run_nova"]
