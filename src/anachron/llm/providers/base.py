"""What every provider shares: the :class:`Provider` protocol, the :class:`BaseProvider` class
(prefix check, readiness check, retry backoff) and the helpers that turn a request into
decoding parameters and a seed.

Providers never raise for model-side failures (HTTP errors after retries, context
overflow, grammar failures): they return a :class:`ChatResult` with ``error`` set and
``text == ""``. Configuration problems (missing environment variable, missing GGUF)
raise :class:`~anachron.errors.ConfigError`; :meth:`BaseProvider.check_ready` surfaces
them before work starts.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Awaitable, Callable, ClassVar, Protocol, runtime_checkable

from anachron.errors import ConfigError
from anachron.http import retry_after_seconds
from anachron.llm.cache import decoding_params
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec

log = logging.getLogger(__name__)


@runtime_checkable
class Provider(Protocol):
    """A chat-completion backend. ``complete`` is uncached and must not raise for model-side failures."""

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one completion; return a result with ``error`` set (and ``text == ""``) on failure."""
        ...


def effective_params(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The decoding parameters of one call: ``spec.params`` overridden by ``request.params``, normalized.

    Raises ``ValueError`` on an unknown parameter (see :func:`anachron.llm.cache.decoding_params`).
    """
    return decoding_params({**spec.params, **request.params})


def sample_seed(params: dict[str, Any], sample_index: int, default: int | None = None) -> int | None:
    """Seed for sample ``sample_index``: ``params['seed']`` (or ``default``) plus the sample index.

    Distinct samples of one prompt thus get distinct but reproducible seeds. ``None`` when
    neither a seed nor a default is given.
    """
    base = params.get("seed", default)
    if base is None:
        return None
    return (int(base) + int(sample_index)) % (2**31)


def error_text(exc: BaseException) -> str:
    """One line describing ``exc`` for ``ChatResult.error``: ``"<Type>: <message>"``, whitespace
    collapsed, the message cut at 500 characters."""
    msg = " ".join(str(exc).split())
    if len(msg) > 500:
        msg = msg[:500] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` / ``Retry-After`` headers of
    ``exc.response``), if any; ``None`` for an exception without such a response."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    return retry_after_seconds(headers.get("retry-after"))


class BaseProvider:
    """Base class of the in-package providers (registered in :mod:`anachron.llm.providers`).

    A subclass sets :attr:`prefix` (the provider part of ``provider/model-id``), implements
    :meth:`complete` and lists what keeps a model from running here in
    :meth:`readiness_problems`. The base checks the prefix on construction and offers the
    retry backoff of providers that retry (``spec.max_retries``, ``retry_base_delay_s``,
    ``retry_max_delay_s``).

    Args:
        spec: the model; its provider must be :attr:`prefix`.
        sleep: the coroutine that waits between retries (tests pass a recorder).

    Attributes:
        throttle: ``None``, or a coroutine function awaited before each retry (after the backoff):
            :class:`~anachron.llm.client.LLMClient` sets it to its rate limiter's ``acquire``, so
            that retries count against the endpoint's request rate like first attempts do.

    Raises:
        ConfigError: when ``spec`` belongs to another provider.
    """

    #: The provider prefix of the ``provider/model-id`` strings this class serves.
    prefix: ClassVar[str] = ""

    def __init__(self, spec: ModelSpec, *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        if spec.provider != self.prefix:
            raise ConfigError(
                f"model '{spec.name}': {type(self).__name__} needs a '{self.prefix}/...' model, got {spec.model!r}"
            )
        self.spec = spec
        self._sleep = sleep
        self.throttle: Callable[[], Awaitable[None]] | None = None

    @classmethod
    def readiness_problems(cls, spec: ModelSpec) -> list[str]:
        """What keeps ``spec`` from running here, one message per problem (naming env vars and
        config keys, never a secret's value); empty when ready. The base has none."""
        return []

    @classmethod
    def check_ready(cls, spec: ModelSpec) -> None:
        """Fail early, with one clear message, if ``spec`` cannot run here.

        Raises:
            ConfigError: listing every problem of :meth:`readiness_problems`.
        """
        problems = cls.readiness_problems(spec)
        if problems:
            raise ConfigError("; ".join(problems))

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one completion; see :class:`Provider`."""
        raise NotImplementedError

    def backoff_s(self, attempt: int, exc: BaseException | None = None) -> float:
        """Delay before retry number ``attempt`` (0-based), in seconds, with jitter.

        ``max(Retry-After, jittered exponential)``; the exponential part is in
        ``[d/2, d]`` with ``d = min(retry_max_delay_s, retry_base_delay_s * 2**attempt)``;
        the server's ``Retry-After`` (see :func:`retry_after_s`) counts up to 600 s.
        """
        d = min(self.spec.retry_max_delay_s, self.spec.retry_base_delay_s * (2**attempt))
        delay = d / 2 + random.uniform(0, d / 2)
        server = retry_after_s(exc) if exc is not None else None
        if server is not None:
            delay = max(delay, min(server, 600.0))
        return delay

    async def pause_before_retry(self, attempt: int, exc: BaseException, what: str) -> bool:
        """Wait :meth:`backoff_s` before retry ``attempt + 1`` and return True, or return False
        (without waiting) when the ``spec.max_retries`` retries are used up. ``what`` names the
        failure in the log line (``"HTTP 429"``, ``"APITimeoutError"``). With a :attr:`throttle`,
        waits for it too after the backoff."""
        if attempt >= self.spec.max_retries:
            return False
        delay = self.backoff_s(attempt, exc)
        log.info("model '%s': %s, retry %d in %.2fs", self.spec.name, what, attempt + 1, delay)
        await self._sleep(delay)
        if self.throttle is not None:
            await self.throttle()
        return True
