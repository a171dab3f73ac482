"""Limits on one endpoint shared by every process that calls it: calls in flight and requests per minute.

Several ``run_method`` jobs (separate processes started by Snakemake) often call the same
endpoint. Giving each job a fixed share of the endpoint's concurrency wastes it as soon as one job
ends or waits (the share is idle while another job still has a queue), so the limit is shared
dynamically instead, through the file system:

- :class:`EndpointSlots`: ``limit`` lock files in a directory; a call holds one (``fcntl.flock``)
  for as long as it is in flight. The operating system drops a lock when its process dies, so a
  killed job never leaks a slot. Works for every process on one machine, and across machines on a
  shared file system whose ``flock`` is coherent (NFSv4, Lustre mounted with ``-o flock``).
- :class:`SharedRateLimit`: a token bucket (capacity = one minute's worth, refilled continuously)
  kept in a small state file, read and written under an exclusive lock.

- :class:`EndpointGate`: both for one endpoint; :func:`shared_endpoint_gates` installs one gate per
  endpoint for the duration of a job, and every :class:`~anachron.llm.client.LLMClient` of a model on
  that endpoint created inside passes each provider call through it (:func:`gate_for`), so a
  method's model and its supervisor on the same endpoint share it too.

Waiting is polling with exponential back-off (``poll_s`` up to ``max_poll_s``), never blocking
the event loop. POSIX only (``fcntl``). The config key is ``endpoints`` (docs/running.md#endpoints).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import json
import os
import random
import threading
import time
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, Iterator, Mapping

from anachron.llm.endpoints import EndpointLimits, endpoint_env
from anachron.llm.types import ModelSpec


class EndpointSlots:
    """At most ``limit`` calls in flight across all processes using the same ``directory``.

    Args:
        directory: where the slot files ``slot-<i>.lock`` live (created when missing); every
            process sharing the endpoint must use the same directory and the same ``limit``.
        limit: slots, >= 1.
        poll_s, max_poll_s: first and largest pause between attempts while all slots are taken,
            in seconds.

    Use ``async with slots.hold(): ...`` around one call. Raises ``ValueError`` for ``limit < 1``.
    """

    def __init__(self, directory: str | os.PathLike[str], limit: int, *, poll_s: float = 0.005, max_poll_s: float = 0.05) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.directory = Path(directory)
        self.limit = int(limit)
        self.poll_s = poll_s
        self.max_poll_s = max_poll_s
        self._fds: dict[int, int] = {}
        self._held: set[int] = set()
        self._lock = threading.Lock()
        self._queue: collections.deque[_Waiter] = collections.deque()

    def _fd(self, slot: int) -> int:
        fd = self._fds.get(slot)
        if fd is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            self._fds[slot] = fd
        return fd

    def try_acquire(self) -> int | None:
        """Take a free slot without waiting: its index, or ``None`` when all are taken."""
        with self._lock:
            order = [s for s in range(self.limit) if s not in self._held]
            random.shuffle(order)  # spread processes over the slots instead of all trying slot 0 first
            for slot in order:
                try:
                    fcntl.flock(self._fd(slot), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                self._held.add(slot)
                return slot
        return None

    def release(self, slot: int) -> None:
        """Give back ``slot`` (taken by :meth:`try_acquire` or :meth:`hold`) and wake this process's
        first waiter, if any."""
        with self._lock:
            if slot in self._held:
                fcntl.flock(self._fds[slot], fcntl.LOCK_UN)
                self._held.discard(slot)
            head = self._queue[0] if self._queue else None
        if head is not None:
            head.wake()

    async def acquire(self) -> int:
        """Wait until a slot is free and take it; returns its index.

        Waiters of this process queue in arrival order and only the first one polls the lock files
        (every ``poll_s``, doubling up to ``max_poll_s``, for slots freed by other processes); a slot
        released here wakes it at once, and when it gets a slot the next one takes over. So a
        thousand waiting calls cost one poller, not a thousand.
        """
        with self._lock:
            queued = bool(self._queue)
        if not queued:
            slot = self.try_acquire()
            if slot is not None:
                return slot
        me = _Waiter(asyncio.get_running_loop())
        with self._lock:
            self._queue.append(me)
        try:
            pause = self.poll_s
            while True:
                with self._lock:
                    first = self._queue[0] is me
                if first:
                    slot = self.try_acquire()
                    if slot is not None:
                        return slot
                    timeout = pause * (0.5 + random.random())
                    pause = min(pause * 2, self.max_poll_s)
                else:
                    timeout = 1.0  # woken when it becomes first; the timeout is only a safety net
                me.event.clear()
                try:
                    await asyncio.wait_for(me.event.wait(), timeout)
                except asyncio.TimeoutError:
                    pass
        finally:
            with self._lock:
                was_first = bool(self._queue) and self._queue[0] is me
                self._queue.remove(me)
                nxt = self._queue[0] if (was_first and self._queue) else None
            if nxt is not None:
                nxt.wake()  # the next waiter polls now

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[int]:
        """Hold one slot for the body of an ``async with`` (released on exit, also on error or cancel)."""
        slot = await self.acquire()
        try:
            yield slot
        finally:
            self.release(slot)

    def in_use_here(self) -> int:
        """Slots held by this process now."""
        with self._lock:
            return len(self._held)

    def close(self) -> None:
        """Release every slot of this process and close the lock files."""
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)  # closing drops the lock
            self._fds.clear()
            self._held.clear()


class _Waiter:
    """One call waiting for a slot: its event loop and the event that wakes it (set thread-safely)."""

    __slots__ = ("loop", "event")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()

    def wake(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.event.set)
        except RuntimeError:  # its loop is closed: nothing waits any more
            pass


class SharedRateLimit:
    """At most ``per_minute`` requests per minute across all processes using the same ``path``.

    A token bucket holding up to ``per_minute`` tokens (a burst of one minute's worth is allowed
    after an idle minute), refilled at ``per_minute / 60`` tokens per second; each request takes
    one. The state ``{"tokens": float, "t": unix seconds}`` lives in the file ``path`` and is
    updated under ``flock``. ``clock`` is injectable for tests (default ``time.time``; wall time,
    because processes share it). Raises ``ValueError`` for ``per_minute <= 0``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        per_minute: float,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_poll_s: float = 1.0,
    ) -> None:
        if per_minute <= 0:
            raise ValueError(f"per_minute must be > 0, got {per_minute}")
        self.path = Path(path)
        self.per_minute = float(per_minute)
        self.clock = clock
        self.sleep = sleep
        self.max_poll_s = max_poll_s

    def try_take(self) -> float:
        """Take one token if there is one: returns 0.0, else the seconds until one is due (nothing taken)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        rate = self.per_minute / 60.0
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.read(fd, 4096)
            now = self.clock()
            try:
                state = json.loads(raw) if raw else {}
                tokens, t = float(state["tokens"]), float(state["t"])
            except (ValueError, KeyError, TypeError):
                tokens, t = self.per_minute, now  # first use (or a torn file): a full bucket
            tokens = min(self.per_minute, tokens + max(0.0, now - t) * rate)
            wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate
            if wait == 0.0:
                tokens -= 1.0
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"tokens": tokens, "t": now}).encode())
            return wait
        finally:
            os.close(fd)  # also releases the lock

    async def take(self) -> None:
        """Wait until a token is available and take it."""
        while True:
            wait = self.try_take()
            if wait == 0.0:
                return
            await self.sleep(min(wait, self.max_poll_s))


class EndpointGate:
    """Every provider call to one endpoint passes here: a slot of its shared in-flight limit and,
    with a rate limit, a token of its shared request rate.

    Args:
        directory: the endpoint's lock directory (slot files and ``rate.json``), the same for every
            process that calls the endpoint.
        concurrency: calls in flight at once over all those processes, >= 1.
        requests_per_minute: request starts per minute over all of them (first attempts and retries),
            or ``None`` for no rate limit.
        clock, sleep: for the rate limit's tests.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        concurrency: int,
        requests_per_minute: float | None = None,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.directory = Path(directory)
        self.slots = EndpointSlots(self.directory, concurrency)
        self.rate = (
            SharedRateLimit(self.directory / "rate.json", requests_per_minute, clock=clock, sleep=sleep)
            if requests_per_minute else None
        )

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """One call's passage: a slot for the whole call (retries included), then a rate token."""
        async with self.slots.hold():
            await self.acquire()
            yield

    async def acquire(self) -> None:
        """Wait for a rate token (no-op without a rate limit); also awaited before each retry."""
        if self.rate is not None:
            await self.rate.take()

    def __repr__(self) -> str:
        rate = f", {self.rate.per_minute:g}/min" if self.rate else ""
        return f"EndpointGate({self.slots.limit} in flight{rate})"


def endpoint_gates(limits: Mapping[str, EndpointLimits], root: str | os.PathLike[str]) -> dict[str, EndpointGate]:
    """One gate per limited endpoint, its lock directory ``<root>/<base-URL variable>``.

    ``root`` is normally ``<cache_dir>/.limits``: every job of a run sees the cache directory (on a
    cluster it is on shared storage), so every job shares the same slots.
    """
    return {
        env: EndpointGate(Path(root) / env, lim.concurrency, lim.requests_per_minute)
        for env, lim in limits.items()
    }


_gates: dict[str, EndpointGate] = {}
_gates_lock = threading.Lock()


@contextlib.contextmanager
def shared_endpoint_gates(gates: Mapping[str, EndpointGate]) -> Iterator[None]:
    """Make ``gates`` (base-URL variable name -> gate) the process's endpoint gates inside the
    ``with`` block; the previous ones come back afterwards."""
    global _gates
    with _gates_lock:
        before, _gates = _gates, dict(gates)
    try:
        yield
    finally:
        with _gates_lock:
            _gates = before


def gate_for(spec: ModelSpec) -> EndpointGate | None:
    """The installed gate of ``spec``'s endpoint (``openai/`` models only), or None."""
    env = endpoint_env(spec)
    if env is None:
        return None
    with _gates_lock:
        return _gates.get(env)
