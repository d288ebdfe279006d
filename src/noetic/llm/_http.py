"""Translating SDK exceptions into :class:`noetic.errors.ProviderError`, by type and status,
and what a provider built on a vendor's SDK shares (:class:`SdkProvider`)."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import Any

from noetic.errors import ProviderError, UsageError
from noetic.llm.base import failure


def retry_after_seconds(headers: Any) -> float | None:
    """The ``retry-after`` header in seconds (delta form; HTTP dates are ignored)."""
    if headers is None:
        return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def translate(exc: Exception, sdk: Any, provider: str, model: str) -> ProviderError:
    """Map an ``anthropic`` or ``openai`` SDK exception (both share the shape) to ours."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(
            f"{provider}:{model} timed out", provider=provider, model=model, retryable=True,
            kind="timeout",
        )  # fmt: skip
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(
            f"{provider}:{model}: connection failed: {exc}",
            provider=provider,
            model=model,
            retryable=True,
            kind="connection",
        )
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        retryable = status == 429 or status >= 500
        fix = None
        if status in (401, 403):
            fix = "check the API key in the environment"
        elif status == 404:
            fix = "check the model name"
        return ProviderError(
            f"{provider}:{model} answered HTTP {status}: {_short(exc)}",
            provider=provider,
            model=model,
            status=status,
            retryable=retryable,
            retry_after=retry_after_seconds(getattr(exc.response, "headers", None)),
            kind="status",
            fix=fix,
        )
    if isinstance(exc, sdk.APIError):
        return ProviderError(
            f"{provider}:{model}: {exc}", provider=provider, model=model, retryable=False
        )
    raise exc


def _short(exc: Exception) -> str:
    text = str(getattr(exc, "message", exc))
    return text if len(text) <= 300 else text[:300] + "…"


def _transport_error(exc: Exception) -> bool:
    """Whether ``exc`` is an error of the HTTP client under the SDKs (``httpx2`` in current
    releases, ``httpx`` in older ones)."""
    for module in ("httpx2", "httpx"):
        try:
            base = importlib.import_module(module).HTTPError
        except (ImportError, AttributeError):
            continue
        if isinstance(exc, base):
            return True
    return False


class SdkProvider:
    """What a provider built on a vendor's SDK (``anthropic``, ``openai``) shares: the SDK,
    imported when the provider is made (the install command named when it is missing), its
    client (``connect`` makes one unless one is given), the endpoint it calls, and the SDK's
    errors as :class:`ProviderError`."""

    name: str
    model: str

    def __init__(self, package: str, client: Any, connect: Callable[[Any], Any]) -> None:
        try:
            self._sdk: Any = importlib.import_module(package)
        except ImportError:
            raise UsageError(
                f"the {package!r} package is not installed", fix=f"pip install 'noetic[{package}]'"
            ) from None
        self._client: Any = connect(self._sdk) if client is None else client

    @property
    def endpoint(self) -> str:
        return str(getattr(self._client, "base_url", "")).rstrip("/")

    async def _translated(self, call: Awaitable[Any]) -> Any:
        """What ``call`` returns, an SDK error raised as a :class:`ProviderError`."""
        try:
            return await call
        except self._sdk.APIError as exc:
            raise translate(exc, self._sdk, self.name, self.model) from exc

    def _cut_short(self) -> ProviderError:
        """A stream that ended before the reply was complete (a dropped connection)."""
        return failure(
            self,
            f"{self.name}:{self.model}: the stream ended before the reply was complete",
            retryable=True,
            kind="connection",
        )

    def _broken(self, exc: Exception) -> ProviderError:
        """A failure while reading a stream, as a :class:`ProviderError`: a transport failure
        (the SDKs let their HTTP client's errors through there) as a retryable connection
        error; anything else is raised."""
        if isinstance(exc, self._sdk.APIError):
            return translate(exc, self._sdk, self.name, self.model)
        if not _transport_error(exc):
            raise exc
        return failure(
            self,
            f"{self.name}:{self.model}: the stream broke: {type(exc).__name__}: {exc}",
            retryable=True,
            kind="connection",
        )
