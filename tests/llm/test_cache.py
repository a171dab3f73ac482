"""Cache keys, the on-disk cache and LLMClient caching / concurrency / logging (mock provider)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp

import pytest

from anachron.llm.cache import LLMCache, cache_key, decoding_params
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from anachron.tables import CALL_LOG_COLUMNS

MSGS = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Rank AAPL, MSFT."}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def key(**over):
    args = dict(
        provider="openai",
        model="Qwen/Qwen3-30B-A3B",
        messages=MSGS,
        params={"temperature": 0.6, "max_tokens": 256, "seed": 1},
        response_schema=SCHEMA,
        sample_index=0,
    )
    args.update(over)
    return cache_key(**args)


# --------------------------------------------------------------------------- cache_key


def test_key_is_sha256_hex():
    k = key()
    assert len(k) == 64 and all(c in "0123456789abcdef" for c in k)
    assert key() == k  # deterministic


def test_key_ignores_dict_order():
    msgs_reordered = [{"content": m["content"], "role": m["role"]} for m in MSGS]
    params_reordered = {"seed": 1, "max_tokens": 256, "temperature": 0.6}
    schema_reordered = {"required": ["answer"], "properties": {"answer": {"type": "string"}}, "type": "object"}
    assert key(messages=msgs_reordered, params=params_reordered, response_schema=schema_reordered) == key()


def test_key_keeps_schema_property_order():
    a = {"type": "object", "properties": {"reasoning": {"type": "string"}, "prediction": {"type": "number"}}}
    b = {"type": "object", "properties": {"prediction": {"type": "number"}, "reasoning": {"type": "string"}}}
    a_reordered = {"properties": a["properties"], "type": "object"}
    assert key(response_schema=a) == key(response_schema=a_reordered)
    assert key(response_schema=a) != key(response_schema=b)


def test_key_ignores_operational_settings():
    noisy = {
        "temperature": 0.6,
        "max_tokens": 256,
        "seed": 1,
        "max_retries": 9,
        "timeout": 3,
        "timeout_s": 999,
        "concurrency": 32,
        "retry_base_delay_s": 0.01,
    }
    assert key(params=noisy) == key()


def test_key_normalizes_numbers_and_stop_and_none():
    assert key(params={"temperature": 0, "max_tokens": 256.0}) == key(params={"temperature": 0.0, "max_tokens": 256})
    assert key(params={"stop": "\n"}) == key(params={"stop": ["\n"]})
    assert key(params={"temperature": 0.6, "max_tokens": 256, "seed": 1, "top_p": None}) == key()


@pytest.mark.parametrize(
    "over",
    [
        {"params": {"temperature": 0.7, "max_tokens": 256, "seed": 1}},
        {"params": {"temperature": 0.6, "max_tokens": 512, "seed": 1}},
        {"params": {"temperature": 0.6, "max_tokens": 256, "seed": 2}},
        {"sample_index": 1},
        {"response_schema": None},
        {"response_schema": {**SCHEMA, "properties": {"answer": {"type": "number"}}}},
        {"model": "Qwen/Qwen3.5-35B-A3B"},
        {"provider": "local"},
        {"messages": MSGS[:1] + [{"role": "user", "content": "Rank AAPL, MSFT!"}]},
    ],
)
def test_key_changes_with_content(over):
    assert key(**over) != key()


def test_unknown_param_is_rejected():
    with pytest.raises(ValueError, match="unknown decoding parameter 'temprature'"):
        decoding_params({"temprature": 0.1})


# --------------------------------------------------------------------------- LLMCache


def test_cache_roundtrip_and_layout(tmp_path):
    cache = LLMCache(tmp_path / "c")
    k = key()
    assert cache.get(k) is None and k not in cache
    cache.put(k, {"text": "héllo", "prompt_tokens": 3})
    assert cache.get(k) == {"text": "héllo", "prompt_tokens": 3}
    assert (tmp_path / "c" / k[:2] / f"{k}.json").is_file()
    assert len(cache) == 1
    assert not list((tmp_path / "c").rglob("*.tmp"))


def test_cache_rejects_bad_keys_and_secret_fields(tmp_path):
    cache = LLMCache(tmp_path)
    with pytest.raises(ValueError):
        cache.get("../../etc/passwd")
    with pytest.raises(ValueError, match="secrets"):
        cache.put(key(), {"text": "x", "api_key": "sk-123"})


def test_corrupt_entry_is_a_miss(tmp_path):
    cache = LLMCache(tmp_path)
    k = key()
    p = cache.path_for(k)
    p.parent.mkdir(parents=True)
    p.write_text("{not json")
    assert cache.get(k) is None


def _writer(root: str, k: str, n: int) -> None:
    cache = LLMCache(root)
    for i in range(n):
        cache.put(k, {"text": "x" * 5000, "i": i})


def test_concurrent_process_writers_never_leave_partial_files(tmp_path):
    k = key()
    procs = [mp.get_context("spawn").Process(target=_writer, args=(str(tmp_path), k, 30)) for _ in range(3)]
    for p in procs:
        p.start()
    cache = LLMCache(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs):
        rec = cache.get(k)  # never a corrupt read: a miss or a whole record
        if rec is not None:
            assert rec["text"] == "x" * 5000
            seen += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert json.loads(cache.path_for(k).read_text())["text"] == "x" * 5000


# --------------------------------------------------------------------------- LLMClient with the mock provider


def spec(**over):
    base = dict(name="fake", model="mock/fake-model", knowledge_cutoff="2024-01-01", concurrency=3,
                params={"temperature": 0.0, "max_tokens": 64}, mock={"latency_s": 0.01})
    base.update(over)
    return ModelSpec(**base)


def echo(request: ChatRequest) -> str | ChatResult:
    """Echoes the last user message with the sample index; fails for messages containing 'FAIL'."""
    content = request.messages[-1]["content"]
    if "FAIL" in content:
        return ChatResult(error="RateLimitError: too many requests", latency_s=0.5)
    return f"echo:{content}:{request.sample_index}"


def fake_provider(**over) -> MockProvider:
    return MockProvider(spec(**over), answers=echo)


def reqs(n, prefix="q"):
    return [
        ChatRequest(messages=[{"role": "user", "content": f"{prefix}{i}"}], tag={"instance_id": f"i{i}", "step": "gen"})
        for i in range(n)
    ]


def test_second_run_makes_no_provider_calls(tmp_path):
    fake = fake_provider()
    log = CallLog()
    client = LLMClient(spec(), LLMCache(tmp_path), log, provider=fake)
    first = client.complete_many(reqs(10), progress=False)
    assert len(fake.requests) == 10
    assert all(r.ok and not r.cache_hit for r in first)

    # a fresh client on the same cache (as in a resumed run) with other operational settings
    fake2 = fake_provider()
    log2 = CallLog()
    client2 = LLMClient(spec(concurrency=1, max_retries=0, timeout_s=1), LLMCache(tmp_path), log2, provider=fake2)
    second = client2.complete_many(reqs(10), progress=False)
    assert len(fake2.requests) == 0
    assert [r.text for r in second] == [r.text for r in first]
    assert [(r.prompt_tokens, r.completion_tokens, r.finish_reason) for r in second] == [
        (r.prompt_tokens, r.completion_tokens, r.finish_reason) for r in first
    ]
    assert [r.cache_key for r in second] == [r.cache_key for r in first]
    df = log2.to_frame()
    assert len(df) == 10 and df["cache_hit"].all()
    assert (df["latency_s"] < 0.05).all()
    assert sorted(df["instance_id"]) == sorted(f"i{i}" for i in range(10))
    assert list(df.columns[: len(CALL_LOG_COLUMNS)]) == CALL_LOG_COLUMNS
    assert not log.to_frame()["cache_hit"].any()


def test_tag_is_not_part_of_the_key(tmp_path):
    fake = fake_provider()
    client = LLMClient(spec(), LLMCache(tmp_path), CallLog(), provider=fake)
    a = ChatRequest(messages=[{"role": "user", "content": "x"}], tag={"instance_id": "a"})
    b = ChatRequest(messages=[{"role": "user", "content": "x"}], tag={"instance_id": "b", "step": 2})
    client.complete_many([a], progress=False)
    (rb,) = client.complete_many([b], progress=False)
    assert len(fake.requests) == 1 and rb.cache_hit


def test_sample_index_gives_separate_entries(tmp_path):
    fake = fake_provider()
    client = LLMClient(spec(), LLMCache(tmp_path), CallLog(), provider=fake)
    rs = [ChatRequest(messages=[{"role": "user", "content": "x"}], sample_index=k) for k in range(4)]
    out = client.complete_many(rs, progress=False)
    assert len(fake.requests) == 4
    assert [r.text for r in out] == [f"echo:x:{k}" for k in range(4)]
    assert len({r.cache_key for r in out}) == 4


def test_failed_results_are_not_cached(tmp_path):
    fake = fake_provider()
    log = CallLog()
    cache = LLMCache(tmp_path)
    client = LLMClient(spec(), cache, log, provider=fake)
    rs = reqs(2) + reqs(1, prefix="FAIL")
    out = client.complete_many(rs, progress=False)
    assert [r.ok for r in out] == [True, True, False]
    assert out[2].text == "" and "RateLimitError" in out[2].error
    assert len(cache) == 2
    out2 = client.complete_many(rs, progress=False)
    assert len(fake.requests) == 4  # only the failed one was retried
    assert [r.cache_hit for r in out2] == [True, True, False]
    df = log.to_frame()
    assert df["error"].notna().sum() == 2


def test_concurrency_bound_and_order(tmp_path):
    fake = fake_provider(mock={"latency_s": 0.02})
    client = LLMClient(spec(concurrency=3), LLMCache(tmp_path), CallLog(), provider=fake)
    rs = reqs(25)
    out = client.complete_many(rs, progress=False)
    assert fake.max_in_flight == 3
    assert [r.text for r in out] == [f"echo:q{i}:0" for i in range(25)]


def test_identical_requests_in_one_batch_share_one_call(tmp_path):
    fake = fake_provider()
    log = CallLog()
    client = LLMClient(spec(), LLMCache(tmp_path), log, provider=fake)
    same = [ChatRequest(messages=[{"role": "user", "content": "dup"}], tag={"instance_id": f"i{i}"}) for i in range(5)]
    out = client.complete_many(same, progress=False)
    assert len(fake.requests) == 1
    assert len({r.text for r in out}) == 1
    assert sum(not r.cache_hit for r in out) == 1
    assert len(log) == 5


def test_spec_params_merge_and_request_overrides(tmp_path):
    fake = fake_provider()
    client = LLMClient(spec(), LLMCache(tmp_path), CallLog(), provider=fake)
    r = ChatRequest(messages=[{"role": "user", "content": "x"}], params={"temperature": 0.6, "timeout": 5})
    client.complete_many([r], progress=False)
    assert [r.params for r in fake.requests] == [{"temperature": 0.6, "max_tokens": 64}]
    # the key equals the one computed from the merged decoding params
    assert client.key_for(r) == cache_key("mock", "fake-model", r.messages, {"max_tokens": 64, "temperature": 0.6}, None, 0)


def test_provider_exception_becomes_error_result(tmp_path):
    class Broken:
        async def complete(self, request):
            raise RuntimeError("boom")

    log = CallLog()
    client = LLMClient(spec(), LLMCache(tmp_path), log, provider=Broken())
    (res,) = client.complete_many(reqs(1), progress=False)
    assert res.error == "RuntimeError: boom" and res.text == ""
    assert len(LLMCache(tmp_path)) == 0


def test_complete_many_inside_running_loop(tmp_path):
    fake = fake_provider()
    client = LLMClient(spec(), LLMCache(tmp_path), CallLog(), provider=fake)

    async def main():
        return client.complete_many(reqs(3), progress=False)

    out = asyncio.run(main())
    assert [r.text for r in out] == [f"echo:q{i}:0" for i in range(3)]


def test_empty_call_log_frame():
    df = CallLog().to_frame()
    assert list(df.columns) == CALL_LOG_COLUMNS and len(df) == 0
