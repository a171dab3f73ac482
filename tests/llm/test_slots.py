"""Endpoint limits shared between processes (anachron.llm.slots)."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import signal
import time

import pytest

from anachron.llm.slots import EndpointSlots, SharedRateLimit


def _worker(directory, limit, n_calls, hold_s, counter, peak, lock):
    async def one(slots):
        async with slots.hold():
            with lock:
                counter.value += 1
                peak.value = max(peak.value, counter.value)
            await asyncio.sleep(hold_s)
            with lock:
                counter.value -= 1

    async def main():
        slots = EndpointSlots(directory, limit)
        await asyncio.gather(*(one(slots) for _ in range(n_calls)))
        slots.close()

    asyncio.run(main())


def test_processes_share_the_limit_and_use_all_of_it(tmp_path):
    ctx = mp.get_context("fork")
    counter, peak, lock = ctx.Value("i", 0), ctx.Value("i", 0), ctx.Lock()
    # three processes, each wanting 6 calls at once: 18 wanted, 4 allowed
    procs = [ctx.Process(target=_worker, args=(tmp_path / "ep", 4, 6, 0.05, counter, peak, lock)) for _ in range(3)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    wall = time.perf_counter() - t0
    assert all(p.exitcode == 0 for p in procs)
    assert peak.value == 4  # never more than the limit, and the limit is reached
    assert counter.value == 0
    assert wall < 18 * 0.05  # better than one call at a time (ideal: 18 * 0.05 / 4 = 0.225 s)


def _hold_forever(directory, ready):
    slots = EndpointSlots(directory, 1)
    assert slots.try_acquire() == 0
    ready.set()
    time.sleep(60)


def test_a_killed_process_gives_its_slot_back(tmp_path):
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    p = ctx.Process(target=_hold_forever, args=(tmp_path, ready))
    p.start()
    assert ready.wait(10)
    slots = EndpointSlots(tmp_path, 1)
    assert slots.try_acquire() is None  # taken by the other process
    os.kill(p.pid, signal.SIGKILL)
    p.join(10)
    assert slots.try_acquire() == 0


def test_slots_within_one_process_and_release_on_error(tmp_path):
    slots = EndpointSlots(tmp_path, 2)
    a, b = slots.try_acquire(), slots.try_acquire()
    assert {a, b} == {0, 1} and slots.try_acquire() is None
    slots.release(a)
    assert slots.in_use_here() == 1

    async def fails():
        async with slots.hold():
            raise RuntimeError("call failed")

    with pytest.raises(RuntimeError):
        asyncio.run(fails())
    assert slots.in_use_here() == 1  # the failed call's slot is back
    with pytest.raises(ValueError):
        EndpointSlots(tmp_path, 0)


def test_shared_rate_limit_token_bucket(tmp_path):
    now = [1000.0]
    a = SharedRateLimit(tmp_path / "rate", 60, clock=lambda: now[0])
    b = SharedRateLimit(tmp_path / "rate", 60, clock=lambda: now[0])  # another process, same file
    taken = sum(1 for i in range(100) if (a if i % 2 else b).try_take() == 0.0)
    assert taken == 60  # one minute's burst, shared by both
    assert a.try_take() == pytest.approx(1.0)  # 60/min: the next token in 1 s
    now[0] += 0.5
    assert b.try_take() == pytest.approx(0.5)
    now[0] += 0.5
    assert a.try_take() == 0.0 and b.try_take() > 0
    now[0] += 3600  # an idle hour refills at most one minute's worth
    assert sum(1 for _ in range(100) if a.try_take() == 0.0) == 60
    with pytest.raises(ValueError):
        SharedRateLimit(tmp_path / "r2", 0)


def test_many_waiters_cost_one_poller_and_all_get_through(tmp_path):
    slots = EndpointSlots(tmp_path, 4)
    tries = [0]
    real = slots.try_acquire

    def counting():
        tries[0] += 1
        return real()

    slots.try_acquire = counting
    busy, peak = [0], [0]

    async def one():
        async with slots.hold():
            busy[0] += 1
            peak[0] = max(peak[0], busy[0])
            await asyncio.sleep(0.01)
            busy[0] -= 1

    async def main():
        await asyncio.gather(*(one() for _ in range(200)))

    t0 = time.perf_counter()
    asyncio.run(main())
    assert peak[0] == 4 and busy[0] == 0 and slots.in_use_here() == 0
    # 200 calls: a handful of tries each, not one per waiter per poll
    assert tries[0] < 200 * 3
    assert time.perf_counter() - t0 < 200 * 0.01 / 4 * 3  # ideal 0.5 s; released slots go straight to the next waiter
