"""The OpenAI-compatible provider, and the cached client with answer parsing, against the loopback
test server's injected faults: every transport or body fault is retried to the same answer a
clean server gives, a 429's Retry-After is honoured, retries are bounded, and a truncated answer
is never cached as final."""

from __future__ import annotations

import asyncio
import json
import time

import pandas as pd
import pytest

from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers.openai import OpenAICompatProvider
from anachron.llm.testserver import FaultRates, TestServer
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.methods.base import PARSE_RETRIES, complete_and_parse, generation_request
from anachron.tasks.registry import get_task

pytest.importorskip("openai")

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}},
          "required": ["answer", "n"]}
REQUESTS = [ChatRequest(messages=[{"role": "user", "content": f"question {i}"}], response_schema=SCHEMA)
            for i in range(8)]


@pytest.fixture
def spec(monkeypatch):
    """``spec(server, **over)``: an ``openai/`` model pointed at ``server``, with short timeouts and back-off."""

    def make(server: TestServer, **over) -> ModelSpec:
        monkeypatch.setenv("TEST_SERVER_BASE_URL", server.base_url)
        monkeypatch.setenv("TEST_SERVER_API_KEY", server.api_key or "unused")
        fields = dict(name="srv", model="openai/test-model", knowledge_cutoff="2024-06-30",
                      base_url_env="TEST_SERVER_BASE_URL", api_key_env="TEST_SERVER_API_KEY", max_retries=8,
                      timeout_s=0.3, retry_base_delay_s=0.01, retry_max_delay_s=0.05, concurrency=8)
        return ModelSpec(**{**fields, **over})

    return make


def complete_all(provider: OpenAICompatProvider, requests: list[ChatRequest]) -> list:
    async def go():
        try:
            return await asyncio.gather(*(provider.complete(r) for r in requests))
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def clean_texts() -> list[str]:
    """The answers of a fault-free server to :data:`REQUESTS`."""
    with TestServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("TEST_SERVER_BASE_URL", srv.base_url)
        mp.setenv("TEST_SERVER_API_KEY", "unused")
        spec = ModelSpec(name="srv", model="openai/test-model", knowledge_cutoff="2024-06-30",
                         base_url_env="TEST_SERVER_BASE_URL", api_key_env="TEST_SERVER_API_KEY")
        results = complete_all(OpenAICompatProvider(spec), REQUESTS)
    assert all(r.ok and r.finish_reason == "stop" for r in results)
    return [r.text for r in results]


@pytest.mark.parametrize("kind", ["rate_limit", "server_error", "hang", "malformed", "reset"])
def test_each_fault_is_retried_to_the_clean_answer(kind, spec, clean_texts):
    faults = FaultRates(**{kind: 0.6}, retry_after_s=0.05)
    with TestServer(faults=faults, api_key="k-faults", seed=1) as srv:
        results = complete_all(OpenAICompatProvider(spec(srv)), REQUESTS)
        stats = srv.stats()
    assert [r.error for r in results] == [None] * len(REQUESTS)
    assert [r.text for r in results] == clean_texts
    assert {r.finish_reason for r in results} == {"stop"}
    assert stats[kind] >= 3, stats
    assert stats["requests"] == len(REQUESTS) + stats[kind] and stats["ok"] == len(REQUESTS)


def test_truncated_content_is_returned_as_such(spec, clean_texts):
    with TestServer(faults=FaultRates(truncated=1.0)) as srv:
        [res] = complete_all(OpenAICompatProvider(spec(srv)), REQUESTS[:1])
    assert res.ok and res.finish_reason == "length"
    assert clean_texts[0].startswith(res.text) and len(res.text) < len(clean_texts[0])


def test_retry_after_of_a_429_is_honoured(spec, clean_texts):
    sleeps: list[float] = []

    async def spy(seconds: float) -> None:
        sleeps.append(seconds)

    with TestServer(faults=FaultRates(rate_limit=0.5, retry_after_s=0.25)) as srv:
        results = complete_all(OpenAICompatProvider(spec(srv), sleep=spy), REQUESTS)
        stats = srv.stats()
    assert [r.text for r in results] == clean_texts
    assert len(sleeps) == stats["rate_limit"] > 0
    assert min(sleeps) >= 0.25  # the server's wait beats the 0.01-0.05 s back-off


@pytest.mark.parametrize("kind", ["hang", "reset", "malformed"])
def test_a_dead_endpoint_fails_after_bounded_retries(kind, spec):
    with TestServer(faults=FaultRates(**{kind: 1.0})) as srv:
        t0 = time.perf_counter()
        [res] = complete_all(OpenAICompatProvider(spec(srv, max_retries=2, timeout_s=0.2)), REQUESTS[:1])
        elapsed = time.perf_counter() - t0
        stats = srv.stats()
    assert res.text == "" and res.error is not None
    assert stats["requests"] == 3 and stats[kind] == 3
    assert elapsed < 3.0


# ---------------------------------------------------------------------------- client + parsing


def forecast_rows(n: int) -> list[pd.Series]:
    """``n`` ForecastBench-style instances (hand-written questions)."""
    return [
        pd.Series({"instance_id": f"fc-{i}", "task": "forecast", "split": "eval", "cutoff_date": "2023-01-01",
                   "inputs": json.dumps({"question": f"Will the river at gauge {i} pass flood level by 2023-03-01?",
                                         "resolution_criteria": "Yes if the gauge's daily record shows it."}),
                   "label": json.dumps({"outcome": i % 2}), "provenance": "{}"})
        for i in range(n)
    ]


def test_a_truncated_answer_is_not_cached_as_final_and_the_run_ends_whole(spec, tmp_path):
    task = get_task("forecast")
    rows = forecast_rows(8)
    requests = [generation_request(task, r, {"temperature": 0, "max_tokens": 200}, 5) for r in rows]

    def run(server: TestServer) -> tuple[list, CallLog]:
        log = CallLog()
        client = LLMClient(spec(server), LLMCache(tmp_path / "cache"), log)
        return complete_and_parse(task, rows, requests, client, desc="t"), log

    with TestServer() as clean:
        reference, _ = run(clean)
    full = [c.result.text for c in reference]
    (tmp_path / "cache").rename(tmp_path / "clean-cache")

    with TestServer(faults=FaultRates(truncated=0.5), seed=2) as faulty:
        first, _ = run(faulty)
        n_truncated = faulty.stats()["truncated"]
    cut = [c for c in first if c.first_status == "truncated"]
    assert cut and all(c.retries for c in cut)
    cache = LLMCache(tmp_path / "cache")
    for c, text in zip(first, full):
        if c.parsed.status == "ok":  # whole at once, or one of its retries (a larger max_tokens) was
            assert c.result.text == text
        else:  # every retry was cut too: the run keeps it as truncated, nothing of it is final
            assert c.parsed.status == "truncated" and len(c.retries) == PARSE_RETRIES
            assert all(r["parse_status"] == "truncated" for r in c.retries)
            assert all(cache.get(r["cache_key"]).get("final") is False for r in c.retries)
    assert all(cache.get(c.first_key).get("final") is False for c in cut)  # recorded, never served
    assert n_truncated == len(cut) + sum(r["parse_status"] == "truncated" for c in first for r in c.retries)

    # the next run: whole answers are hits, chains that ended whole are replayed from the cache (same
    # answer and trace, no call), and only answers still cut off are asked afresh
    still_cut = {r["instance_id"] for r, c in zip(rows, first) if c.parsed.status == "truncated"}
    assert still_cut and len(still_cut) < len(cut)
    with TestServer() as again:
        second, log = run(again)
        asked = again.stats()["requests"]
    assert [c.parsed.status for c in second] == ["ok"] * len(rows)
    assert [c.result.text for c in second] == full
    assert asked == len(still_cut)
    for r, a, b in zip(rows, first, second):
        if r["instance_id"] not in still_cut:
            assert b.steps("generate") == a.steps("generate")  # replayed as it was
    missed = {r["instance_id"] for r in log.records if not r["cache_hit"]}
    assert missed == still_cut
