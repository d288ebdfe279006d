"""Model providers: the :class:`Provider` protocol and its adapters."""

from noetic.llm.base import Completion, Message, Provider, Request, Usage, complete_sync

__all__ = ["Completion", "Message", "Provider", "Request", "Usage", "complete_sync"]
