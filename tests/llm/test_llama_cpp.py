"""The real SmolLM2-135M GGUF through LocalLlamaProvider (slow: loads and runs the model)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re

import pytest

from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import LocalLlamaProvider, check_provider_ready
from anachron.llm.providers.llama_cpp import gbnf_friendly_pattern
from anachron.llm.types import ChatRequest, ModelSpec, SchemaError

pytestmark = [
    pytest.mark.slow,
    pytest.mark.local_runtime,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (pip install llama-cpp-python==0.3.36)",
    ),
]

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 40}},
    "required": ["answer"],
}


@pytest.fixture(scope="module")
def provider():
    spec = ModelSpec(
        name="smollm2",
        model="local/smollm2-135m-instruct",
        knowledge_cutoff="2024-06-01",
        n_ctx=2048,
        params={"temperature": 0.0, "max_tokens": 64},
    )
    check_provider_ready(spec)
    prov = LocalLlamaProvider(spec)
    prov.load()
    return prov


def ask(provider, content, schema=None, **params):
    req = ChatRequest(messages=[{"role": "user", "content": content}], response_schema=schema, params=params)
    return asyncio.run(provider.complete(req))


def test_json_schema_output_parses(provider):
    res = ask(provider, "What is the capital of France? Answer in JSON.", SCHEMA)
    assert res.error is None, res.error
    obj = json.loads(res.text)
    assert isinstance(obj["answer"], str) and len(obj["answer"]) <= 40
    assert res.prompt_tokens > 0 and 0 < res.completion_tokens <= 64
    assert res.finish_reason in ("stop", "length")


def test_grammar_bounds_arrays_enums_and_dates(provider):
    schema = {
        "type": "object",
        "properties": {
            "evidence": {
                "type": "array",
                "maxItems": 2,
                "items": {
                    "type": "object",
                    "properties": {
                        "fact": {"type": "string", "maxLength": 30},
                        "source_date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
                    },
                    "required": ["fact", "source_date"],
                },
            },
            "ranking": {"type": "array", "items": {"enum": ["AAPL", "MSFT", "XOM"]}, "minItems": 3, "maxItems": 3},
        },
        "required": ["evidence", "ranking"],
    }
    res = ask(provider, "List ten dated facts about Apple, then rank AAPL, MSFT, XOM, GOOG.", schema,
              max_tokens=200, temperature=0.8, seed=3)
    assert res.error is None, res.error
    assert res.finish_reason == "stop", res.text
    obj = json.loads(res.text)
    assert len(obj["evidence"]) <= 2
    for ev in obj["evidence"]:
        assert len(ev["fact"]) <= 30
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", ev["source_date"])
    assert len(obj["ranking"]) == 3 and set(obj["ranking"]) <= {"AAPL", "MSFT", "XOM"}


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": r"^\bfoo$"},  # \b: converter emits an invalid escape
        {"type": "string", "maxLength": 2000},  # llama.cpp caps repetitions at 1000
    ],
)
def test_unparseable_grammar_raises_instead_of_crashing(provider, prop):
    # without the check llama-cpp-python adds a NULL sampler and the process segfaults
    bad = {"type": "object", "properties": {"x": prop}, "required": ["x"]}
    with pytest.raises(SchemaError):
        ask(provider, "x", bad)


def test_pattern_rewrite():
    assert gbnf_friendly_pattern(r"^\d{4}-\d{2}-\d{2}$") == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    assert gbnf_friendly_pattern(r"^\$\d+(\.\d{2})?$") == "^[$][0-9]+([.][0-9]{2})?$"
    assert gbnf_friendly_pattern(r"^[\d.]+$") == "^[0-9.]+$"


def test_samples_differ_and_are_reproducible(provider):
    msgs = [{"role": "user", "content": "Write a one-line poem about markets."}]
    reqs = [ChatRequest(messages=msgs, sample_index=k, params={"temperature": 1.0, "max_tokens": 24}) for k in range(3)]
    a = [asyncio.run(provider.complete(r)).text for r in reqs]
    b = [asyncio.run(provider.complete(r)).text for r in reqs]
    assert a == b
    assert len(set(a)) > 1


def test_client_caches_local_results(provider, tmp_path):
    log = CallLog()
    client = LLMClient(provider.spec, LLMCache(tmp_path), log, provider=provider)
    req = ChatRequest(messages=[{"role": "user", "content": "Say hi in JSON."}], response_schema=SCHEMA)
    (first,) = client.complete_many([req], progress=False)
    (second,) = client.complete_many([req], progress=False)
    assert first.error is None and second.cache_hit
    assert (second.text, second.prompt_tokens, second.completion_tokens) == (
        first.text, first.prompt_tokens, first.completion_tokens,
    )
    assert log.to_frame()["cache_hit"].tolist() == [False, True]


def test_the_greedy_grammar_sampler_gives_the_librarys_tokens(provider):
    """Greedy decoding under the workflow's answer grammar: the token-first grammar check
    (GreedyGrammarSampler) writes exactly what llama-cpp-python's own chain writes, while it filters
    the whole vocabulary on only some of the steps."""
    from llama_cpp import Llama, LlamaGrammar

    from anachron.llm.providers.llama_cpp import default_gguf_path, schema_to_gbnf, use_greedy_grammar_sampler
    from anachron.llm.structured import output_schema

    schemas = [
        output_schema({"type": "number", "minimum": 0, "maximum": 1}, max_evidence=3),
        output_schema({"type": "array", "items": {"type": "string", "enum": ["AAA", "BBB", "CCC"]},
                       "minItems": 3, "maxItems": 3}, max_evidence=3),
    ]
    prompts = [
        "Will the petitioner win Smith v. Jones (decided 2019)? List dated evidence, then a probability.",
        "Rank AAA, BBB and CCC by their 2020 return. Give evidence with dates.",
    ]
    library = Llama(model_path=str(default_gguf_path()), n_ctx=1024, n_threads=2, verbose=False)
    ours = use_greedy_grammar_sampler(Llama(model_path=str(default_gguf_path()), n_ctx=1024, n_threads=2, verbose=False))
    for schema, prompt in zip(schemas, prompts):
        gbnf = schema_to_gbnf(schema)
        texts = []
        for llm in (library, ours):
            out = llm.create_chat_completion(
                messages=[{"role": "user", "content": prompt}], max_tokens=90, temperature=0.0, seed=0,
                repeat_penalty=1.1, grammar=LlamaGrammar.from_string(gbnf, verbose=False))
            texts.append(out["choices"][0]["message"]["content"])
        assert texts[0] == texts[1]
        sampler = ours.last_grammar_sampler
        assert sampler.checked >= 30 and 0 < sampler.filtered < sampler.checked
    assert not hasattr(library, "last_grammar_sampler")
    # sampling at a temperature keeps the library's own chain
    ours.create_completion("The", max_tokens=3, temperature=0.7, seed=1)
    assert ours.last_grammar_sampler is sampler
