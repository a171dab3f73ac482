"""A request-rate limit for model calls, shared by every client of one endpoint in a process.

:class:`RateLimiter` spaces request starts to a fixed rate (a token bucket written as virtual
scheduling: each request reserves the next free start time, so no lock is held while waiting and
one limiter serves every event loop and thread of the process). :func:`shared_rate_limits`
installs one limiter per endpoint for the duration of a job (``run_method``); an
:class:`~anachron.llm.client.LLMClient` created inside picks up its endpoint's limiter
(:func:`rate_limiter_for`), so a method's model and its supervisor on the same endpoint share one
budget. The job's budget is its share of the endpoint's ``requests_per_minute``
(:func:`anachron.llm.endpoints.job_rate_per_minute`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Awaitable, Callable, Iterator, Mapping

from anachron.llm.endpoints import endpoint_env
from anachron.llm.types import ModelSpec


class RateLimiter:
    """At most ``per_minute`` request starts per minute, evenly spaced, with bursts of ``burst``.

    Every request is given an evenly spaced due time (``60 / per_minute`` after the previous one,
    never before now) and may start up to ``burst - 1`` intervals before it, so up to ``burst``
    requests start at once after an idle spell. Over any window of ``T`` seconds at most
    ``burst + T * per_minute / 60`` requests start.

    Args:
        per_minute: the rate, > 0.
        burst: requests that may start back to back after an idle spell (>= 1).
        clock: monotonic seconds (tests pass a fake).
        sleep: the coroutine that waits (tests pass a fake that advances the fake clock).

    Raises:
        ValueError: for a rate <= 0 or a burst < 1.
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not per_minute > 0:
            raise ValueError(f"rate must be > 0 requests per minute, got {per_minute}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.per_minute = float(per_minute)
        self.interval_s = 60.0 / self.per_minute
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._due: float | None = None  # evenly spaced start of the next request
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Reserve the next start and return the seconds to wait for it (0 when it is now)."""
        with self._lock:
            now = self._clock()
            # theoretical start of this request if every request were spaced evenly
            due = now if self._due is None else max(self._due, now)
            self._due = due + self.interval_s
            return max(0.0, due - (self.burst - 1) * self.interval_s - now)

    async def acquire(self) -> None:
        """Wait until this request may start."""
        delay = self.reserve()
        if delay > 0:
            await self._sleep(delay)

    def __repr__(self) -> str:
        return f"RateLimiter(per_minute={self.per_minute:g}, burst={self.burst})"


_shared: dict[str, RateLimiter] = {}
_shared_lock = threading.Lock()


@contextlib.contextmanager
def shared_rate_limits(limiters: Mapping[str, RateLimiter]) -> Iterator[None]:
    """Make ``limiters`` (base-URL variable name -> limiter) the process's endpoint limiters inside
    the ``with`` block; the previous ones come back afterwards."""
    global _shared
    with _shared_lock:
        before, _shared = _shared, dict(limiters)
    try:
        yield
    finally:
        with _shared_lock:
            _shared = before


def rate_limiter_for(spec: ModelSpec) -> RateLimiter | None:
    """The installed limiter of ``spec``'s endpoint (``openai/`` models only), or None."""
    env = endpoint_env(spec)
    if env is None:
        return None
    with _shared_lock:
        return _shared.get(env)
