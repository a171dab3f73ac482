"""The mock provider: schema-valid default answers, scripted and echo answers, latency, injected failures."""

from __future__ import annotations

import asyncio
import json
import time

import jsonschema
import pandas as pd
import pytest

from anachron.errors import ConfigError
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider, make_provider
from anachron.llm.providers.mock import MockOptions, regex_example, schema_instance
from anachron.llm.structured import output_schema
from anachron.tables import ParseStatus
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from fictional_corpus import stock_row


def spec(**over) -> ModelSpec:
    base = dict(name="dry", model="mock/dry", knowledge_cutoff="2024-06-30", concurrency=4,
                retry_base_delay_s=0.001, retry_max_delay_s=0.002)
    base.update(over)
    return ModelSpec(**base)


def req(content: str = "hi", schema=None, step: str | None = None, k: int = 0) -> ChatRequest:
    return ChatRequest(messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": content}],
                       response_schema=schema, sample_index=k, tag={"step": step} if step else {})


def run_all(client: LLMClient, requests) -> list[ChatResult]:
    return client.complete_many(list(requests), progress=False)


# --------------------------------------------------------------------------- schema-valid defaults

SYNTHETIC = [
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"]},
    {"type": "number", "exclusiveMinimum": 2, "exclusiveMaximum": 3},
    {"type": "integer", "minimum": 5, "multipleOf": 4},
    {"type": "number", "maximum": -3.5},
    {"type": "string", "minLength": 7, "maxLength": 9},
    {"type": "string", "maxLength": 2},
    {"type": "string", "format": "date"},
    {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"},
    {"type": "string", "pattern": "^(Q[1-4]) (19|20)[0-9]{2}$"},
    {"type": ["string", "null"]},
    {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "boolean"}]},
    {"allOf": [{"type": "object", "required": ["x"]}, {"properties": {"x": {"const": 7}}}]},
    {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "string", "enum": ["u"]}], "minItems": 3},
    {"type": "array", "items": {"enum": ["A", "B", "C"]}, "minItems": 3, "uniqueItems": True},
    {"type": "object", "properties": {"p": {"type": "integer"}, "q": {"type": "null"}}, "minProperties": 2},
]


@pytest.mark.parametrize("schema", SYNTHETIC, ids=[json.dumps(s)[:40] for s in SYNTHETIC])
def test_schema_instance_is_valid(schema):
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(schema_instance(schema))


def test_project_schemas_get_valid_defaults():
    from anachron.methods.rag import query_schema
    from anachron.verify.extract.llm import extraction_schema
    from anachron.verify.layers.llm import verdict_schema

    schemas = [
        output_schema({"type": "array", "items": {"type": "string", "enum": ["XOM", "CVX"]}, "minItems": 2, "maxItems": 2}),
        output_schema({"type": "number", "minimum": 0, "maximum": 1}),
        output_schema({"type": "number", "description": "expected average annual value in US dollars"}),
        verdict_schema(5), extraction_schema(), query_schema(3, 6),
    ]
    for schema in schemas:
        jsonschema.validate(schema_instance(schema), schema)
    # a stock ranking lists each enum value once; verdict indexes count the items
    assert schema_instance(schemas[0])["prediction"] == ["XOM", "CVX"]
    assert [v["index"] for v in schema_instance(verdict_schema(3))["verdicts"]] == [0, 1, 2]
    assert schema_instance(schemas[0])["evidence"][0]["source_date"] == "2000-01-01"
    assert schema_instance(schemas[1])["prediction"] == 0.5 and schema_instance(schemas[2])["prediction"] == 1.0


def test_regex_example():
    assert regex_example("^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$") == "2000-01-01"
    assert regex_example("^\\d{3}-[A-Z]{2}$") == "000-AA"
    assert regex_example("^[^a-z0-9 -]+$") is not None
    assert regex_example("(a)\\1b") is None and regex_example("[unclosed") is None


def test_default_answer_parses_as_a_task_completion():
    from anachron.methods.base import generation_request, parse_result
    from anachron.tasks.stock import StockTask

    row = pd.Series(stock_row("s1", "2022-06-01", [("CYGR", "Cygnet Robotics"), ("ESKF", "Eskerfield Foods")]))
    task = StockTask()
    client = LLMClient(spec(), None, CallLog())  # the provider comes from the registry
    assert isinstance(client.provider, MockProvider)
    (res,) = run_all(client, [generation_request(task, row, {}, max_evidence=5)])
    parsed = parse_result(task, row, res)
    assert res.ok and res.finish_reason == "stop" and res.completion_tokens > 0 and res.prompt_tokens > 0
    assert parsed.status == ParseStatus.OK and parsed.prediction == ["CYGR", "ESKF"] and len(parsed.evidence) == 1
    (free,) = run_all(client, [req("no schema")])
    assert free.text == "{}"


# --------------------------------------------------------------------------- scripted and echo answers


def test_answers_list_is_cycled_in_call_order_and_json_values_are_dumped():
    s = spec(mock={"answers": ["one", {"n": 2}]}, concurrency=1)
    out = run_all(LLMClient(s, None, CallLog()), [req(f"q{i}") for i in range(5)])
    assert [r.text for r in out] == ["one", '{"n": 2}', "one", '{"n": 2}', "one"]


def test_answers_by_step_and_fallbacks():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    s = spec(mock={"answers": {"queries": ["a", "b"], "generate": "G"}}, concurrency=1)
    client = LLMClient(s, None, CallLog())
    out = run_all(client, [req("1", step="queries"), req("2", step="generate"), req("3", step="queries"),
                           req("4", step="queries"), req("5", schema, step="shapley")])
    assert [r.text for r in out] == ["a", "G", "b", "a", '{"ok": false}']
    echo = LLMClient(spec(mock={"echo": True, "answers": {"generate": "G"}}), None, CallLog())
    assert [r.text for r in run_all(echo, [req("say this", schema), req("x", step="generate")])] == ["say this", "G"]


def test_callable_answers_may_return_results_or_fall_through():
    def script(r: ChatRequest):
        content = r.messages[-1]["content"]
        if content == "fail":
            return ChatResult(error="APIError: scripted")
        return None if content == "default" else [content]

    prov = MockProvider(spec(), answers=script)
    client = LLMClient(spec(), None, CallLog(), provider=prov)
    out = run_all(client, [req("x"), req("fail"), req("default", {"type": "integer", "minimum": 4})])
    assert [(r.text, r.error) for r in out] == [('["x"]', None), ("", "APIError: scripted"), ("4", None)]
    assert [r.messages[-1]["content"] for r in prov.requests] == ["x", "fail", "default"]


def test_mock_calls_are_cached_like_real_ones(tmp_path):
    s = spec(mock={"answers": ["first", "second"]})
    run_all(LLMClient(s, LLMCache(tmp_path), CallLog()), [req("q")])
    log = CallLog()
    (again,) = run_all(LLMClient(s, LLMCache(tmp_path), log), [req("q")])
    assert again.cache_hit and again.text == "first"
    assert log.to_frame()["provider"].tolist() == ["mock"]


# --------------------------------------------------------------------------- latency and failures


def test_latency_is_per_call_and_calls_overlap():
    client = LLMClient(spec(mock={"latency_s": 0.1}, concurrency=4), None, CallLog())
    t0 = time.perf_counter()
    out = run_all(client, [req(f"q{i}") for i in range(4)])
    wall = time.perf_counter() - t0
    assert all(r.ok and r.latency_s >= 0.1 for r in out)
    assert wall < 0.35  # four calls of 0.1 s ran concurrently
    assert client.provider.max_in_flight == 4


def test_transient_failures_are_retried_then_succeed():
    sleeps: list[float] = []

    async def record(s: float) -> None:
        sleeps.append(s)

    s = spec(mock={"fail_first": 2, "failure_kind": "rate_limit"}, max_retries=3, retry_base_delay_s=1.0,
             retry_max_delay_s=4.0)
    prov = MockProvider(s, sleep=record)
    (res,) = run_all(LLMClient(s, None, CallLog(), provider=prov), [req("q", {"type": "string"})])
    assert res.ok and res.text == '"mock"'
    assert prov.attempts == 3 and len(prov.requests) == 1
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0  # exponential backoff


def test_failures_beyond_max_retries_become_uncached_errors(tmp_path):
    s = spec(mock={"fail_first": 5, "failure_kind": "server_error"}, max_retries=2)
    cache = LLMCache(tmp_path)
    client = LLMClient(s, cache, CallLog())
    (res,) = run_all(client, [req("q")])
    assert res.text == "" and res.error.startswith("MockServerError: HTTP 500")
    assert client.provider.attempts == 3 and len(cache) == 0
    # the next run of the same request calls the provider again (the error was not cached)
    (again,) = run_all(client, [req("q")])
    assert not again.cache_hit and client.provider.attempts == 6


@pytest.mark.parametrize("kind,error", [("bad_request", "MockBadRequestError: HTTP 400"),
                                        ("crash", "MockCrash: the provider crashed")])
def test_non_retryable_failures(kind, error):
    client = LLMClient(spec(mock={"fail_first": 1, "failure_kind": kind}, max_retries=3), None, CallLog())
    (res,) = run_all(client, [req("q")])
    assert res.error.startswith(error) and client.provider.attempts == 1


def test_failure_draws_depend_on_seed_and_request_not_on_call_order():
    def failed(seed: int, order: list[int]) -> dict[str, bool]:
        prov = MockProvider(spec(mock={"failure_rate": 0.5, "failure_kind": "bad_request", "seed": seed}))
        results = asyncio.run(_each(prov, [req(f"q{i}") for i in order]))
        return {f"q{i}": r.error is not None for i, r in zip(order, results)}

    forward = failed(7, list(range(30)))
    assert forward == failed(7, list(reversed(range(30))))
    assert 5 < sum(forward.values()) < 25
    assert forward != failed(8, list(range(30)))


async def _each(prov: MockProvider, requests: list[ChatRequest]) -> list[ChatResult]:
    return [await prov.complete(r) for r in requests]


# --------------------------------------------------------------------------- options


def test_invalid_options_name_the_key():
    with pytest.raises(ConfigError, match=r"models\.dry\.mock\.latency_s"):
        MockProvider(spec(mock={"latency_s": -1}))
    with pytest.raises(ConfigError, match=r"models\.dry\.mock\.retries"):
        make_provider(spec(mock={"retries": 3}))
    with pytest.raises(ConfigError, match=r"models\.x\.mock"):
        ModelSpec.from_config("x", {"model": "local/smollm2", "knowledge_cutoff": "2024-01-01", "mock": {}})
    assert MockOptions.of(spec()) == MockOptions()
