"""The LLM date-plausibility verifier (layer 3) on the scripted mock provider, plus one slow SmolLM2 check."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json

import pytest

from anachron.tasks.registry import get_task
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from anachron.verify.layers.llm import (
    BATCH_SIZE,
    LLMVerdict,
    check_plausibility,
    parse_verdicts,
    plausibility_requests,
    verdict_schema,
)


SPEC = ModelSpec(name="fake", model="mock/fake", knowledge_cutoff="2024-06-01")


class MockClient(LLMClient):
    """The real client (no cache) on the mock provider answering ``script(request) -> text | ChatResult``;
    records the size of every ``complete_many`` batch."""

    def __init__(self, script):
        super().__init__(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=script))
        self.batches: list[int] = []

    @property
    def requests(self) -> list[ChatRequest]:
        return self.provider.requests

    def complete_many(self, requests, *, desc=None, progress=True):
        requests = list(requests)
        self.batches.append(len(requests))
        return super().complete_many(requests, desc=desc, progress=progress)


def _items_of(req: ChatRequest) -> list[dict]:
    text = req.messages[-1]["content"]
    start = text.index("Items:\n") + len("Items:\n")
    return json.loads(text[start : text.index("\n", start)])


def _cutoff_of(req: ChatRequest) -> str:
    return req.tag["cutoff_date"]


def all_plausible(req: ChatRequest) -> str:
    return json.dumps({"verdicts": [
        {"index": it["index"], "plausible": True, "corrected_date": None, "reason": "fits"} for it in _items_of(req)
    ]})


def _items(n: int, cutoff: str = "2019-11-30") -> list[dict]:
    return [{"fact": f"Fact number {i}", "declared_date": "2019-10-01", "cutoff_date": cutoff} for i in range(n)]


def test_request_states_cutoff_rules_and_items():
    req = plausibility_requests("2019-11-30", [{"fact": "Exxon Q3 2019 earnings were $3.2B", "declared_date": "2019-09-30"},
                                               {"fact": "Undated fact", "declared_date": None}], {"temperature": 0})
    user = req.messages[-1]["content"]
    assert "2019-11-30" in user
    for needle in ("Full-year results", "Quarterly results", "trading day", "8-K", "signing", "court decision",
                   "10-K", "60 to 90 days", "plausible=false", "corrected_date"):
        assert needle in user
    assert _items_of(req) == [
        {"index": 0, "fact": "Exxon Q3 2019 earnings were $3.2B", "declared_date": "2019-09-30"},
        {"index": 1, "fact": "Undated fact", "declared_date": None},
    ]
    assert req.sample_index == 0 and req.params == {"temperature": 0}
    arr = req.response_schema["properties"]["verdicts"]
    assert arr["minItems"] == arr["maxItems"] == 2
    assert plausibility_requests("2019-11-30", [], None, sample_index=1).sample_index == 1


def test_schema_is_grammar_safe():
    text = json.dumps(verdict_schema(BATCH_SIZE))
    assert "\\\\d" not in text and "\\d" not in text
    assert verdict_schema(BATCH_SIZE)["properties"]["verdicts"]["maxItems"] <= 1000


def test_batches_of_80_grouped_by_cutoff():
    items = _items(100, "2019-11-30") + _items(70, "2020-06-30")
    items = items[:50] + items[100:135] + items[50:100] + items[135:]  # interleave the two cutoffs
    client = MockClient(all_plausible)
    out = check_plausibility(client, items, {"temperature": 0})
    sizes = [(_cutoff_of(r), len(_items_of(r))) for r in client.requests]
    assert sizes == [("2019-11-30", 80), ("2019-11-30", 20), ("2020-06-30", 70)]
    assert client.batches == [3]  # one complete_many, no retry
    assert all(r.sample_index == 0 for r in client.requests)
    assert len(out) == 170 and all(v.status == "ok" and v.plausible for v in out)
    for req in client.requests:  # every prompt holds one cutoff only
        assert all(it["fact"].startswith("Fact number") for it in _items_of(req))


def test_results_in_input_order_with_corrections():
    items = [
        {"fact": "A", "declared_date": "2019-12-31", "cutoff_date": "2020-01-15"},
        {"fact": "B", "declared_date": "2019-10-01", "cutoff_date": "2019-11-30"},
        {"fact": "C", "declared_date": "2019-12-31", "cutoff_date": "2020-01-15"},
    ]

    def script(req):
        verdicts = []
        for it in _items_of(req):
            if it["fact"] == "A":
                verdicts.append({"index": it["index"], "plausible": False, "corrected_date": "2020-01-30",
                                 "reason": "full-year results come out in late January"})
            elif it["fact"] == "B":
                verdicts.append({"index": it["index"], "plausible": True, "corrected_date": "2019-01-01", "reason": "ok"})
            else:
                verdicts.append({"index": it["index"], "plausible": "false", "corrected_date": None, "reason": "too early"})
        return json.dumps(verdicts)  # a bare array is accepted as well

    out = check_plausibility(MockClient(script), items, None, batch_size=80)
    assert out[0] == LLMVerdict(False, dt.date(2020, 1, 30), "full-year results come out in late January", "ok")
    assert out[1] == LLMVerdict(True, None, "ok", "ok")  # a correction beside plausible=true is ignored
    assert out[2] == LLMVerdict(False, None, "too early", "ok")
    assert out[0].to_dict()["corrected_date"] == "2020-01-30"


def test_invalid_json_twice_falls_back_with_reason():
    client = MockClient(lambda req: "Sure, the dates look fine to me!")
    out = check_plausibility(client, _items(3), None)
    assert [r.sample_index for r in client.requests] == [0, 1]  # retried once, distinct cache key
    assert client.batches == [1, 1]
    assert client.requests[0].messages == client.requests[1].messages  # the same prompt
    for v in out:
        assert v.status == "fallback" and v.plausible is None and v.corrected_date is None
        assert v.reason.startswith("verifier answer not valid JSON twice: ")


def test_invalid_then_valid_uses_the_retry():
    answers = iter(["{not json", None])

    def script(req):
        nxt = next(answers)
        return all_plausible(req) if nxt is None else nxt

    out = check_plausibility(MockClient(script), _items(4), None)
    assert all(v.status == "ok" and v.plausible for v in out)


def test_only_bad_batches_are_retried():
    items = _items(3, "2019-11-30") + _items(2, "2020-06-30")

    def script(req):
        if _cutoff_of(req) == "2020-06-30" and req.sample_index == 0:
            return "```json\n[{\"index\": 0, \"plausible\": tru\n```"
        return all_plausible(req)

    client = MockClient(script)
    out = check_plausibility(client, items, None)
    assert client.batches == [2, 1]
    assert [(_cutoff_of(r), r.sample_index) for r in client.requests][-1] == ("2020-06-30", 1)
    assert all(v.status == "ok" for v in out)


def test_partial_answers_keep_valid_verdicts():
    def script(req):
        # item 0 valid; item 1 missing; item 2 bad date; item 3 answered twice differently; index 9 out of range
        return json.dumps({"verdicts": [
            {"index": 0, "plausible": False, "corrected_date": "2019-11-05", "reason": "quarterly lag"},
            {"index": 2, "plausible": False, "corrected_date": "2019-02-30", "reason": "x"},
            {"index": 3, "plausible": True, "corrected_date": None, "reason": "x"},
            {"index": 3, "plausible": False, "corrected_date": "2019-12-01", "reason": "y"},
            {"index": 9, "plausible": True, "corrected_date": None, "reason": "x"},
        ]})

    client = MockClient(script)
    out = check_plausibility(client, _items(4), None)
    assert [r.sample_index for r in client.requests] == [0, 1]
    assert out[0] == LLMVerdict(False, dt.date(2019, 11, 5), "quarterly lag", "ok")
    for v in out[1:]:
        assert v.status == "fallback" and v.plausible is None
        assert v.reason.startswith("no valid verifier verdict after one retry")
    assert "unanswered" in out[1].reason


def test_retry_fills_the_gaps_of_the_first_answer():
    def script(req):
        if req.sample_index == 0:
            return json.dumps([{"index": 0, "plausible": True, "corrected_date": None, "reason": "first"}])
        return json.dumps([{"index": 0, "plausible": False, "corrected_date": "2019-11-02", "reason": "second"},
                           {"index": 1, "plausible": True, "corrected_date": None, "reason": "second"}])

    out = check_plausibility(MockClient(script), _items(2), None)
    assert [(v.reason, v.status) for v in out] == [("first", "ok"), ("second", "ok")]


def test_call_errors_fall_back():
    out = check_plausibility(MockClient(lambda r: ChatResult(error="TimeoutError: slow")), _items(2), None)
    assert all(v.status == "fallback" and "TimeoutError" in v.reason for v in out)


def test_empty_and_bad_batch_size():
    client = MockClient(all_plausible)
    assert check_plausibility(client, [], None) == [] and client.requests == []
    with pytest.raises(ValueError):
        check_plausibility(client, _items(1), None, batch_size=0)


@pytest.mark.parametrize(
    "text,n_ok",
    [
        ('{"verdicts": [{"index": 0, "plausible": true, "corrected_date": null, "reason": "r"}]}', 1),
        ('[{"index": "0", "plausible": false, "corrected_date": "2019-12-01", "reason": "r"}]', 1),
        ('[{"index": 0, "plausible": "maybe", "corrected_date": null}]', 0),
        ('[{"index": true, "plausible": true, "corrected_date": null}]', 0),
        ('[{"index": 0, "plausible": true, "corrected_date": "12/01/2019"}]', 1),  # plausible: the date is ignored
        ('[{"index": 0, "plausible": false, "corrected_date": "12/01/2019"}]', 0),
        ("", 0),
        ("[1, 2]", 0),
    ],
)
def test_parse_verdicts(text, n_ok):
    got, why = parse_verdicts(text, 1)
    assert len(got) == n_ok
    assert (why is None) == (n_ok == 1)


# --------------------------------------------------------------------------- real SmolLM2 (slow)


@pytest.mark.slow
@pytest.mark.local_runtime
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_smollm2_schemas_compile_and_never_raise(tmp_path):
    from anachron.llm.cache import LLMCache
    from anachron.llm.providers import LocalLlamaProvider, check_provider_ready
    from anachron.verify.extract import extract_claims_llm
    from anachron.verify.layers.llm import BATCH_SIZE as B

    spec = ModelSpec(name="smollm2", model="local/smollm2-135m-instruct", knowledge_cutoff="2024-06-01", n_ctx=4096,
                     params={"temperature": 0.0, "max_tokens": 160})
    check_provider_ready(spec)
    provider = LocalLlamaProvider(spec)
    provider.load()
    client = LLMClient(spec, LLMCache(tmp_path), CallLog(), provider=provider)
    llm = provider._llm
    # both schemas (the largest verifier batch included) compile into grammars llama.cpp accepts
    from anachron.verify.extract.llm import extraction_schema

    for schema in (extraction_schema(), verdict_schema(B), verdict_schema(3)):
        provider._grammar_for(llm, schema)

    items = [
        {"fact": "Exxon's full-year 2019 revenue was $265 billion.", "declared_date": "2019-12-31", "cutoff_date": "2020-01-15"},
        {"fact": "Chevron agreed to buy Anadarko.", "declared_date": "2019-04-12", "cutoff_date": "2020-01-15"},
    ]
    # an answer cut off by max_tokens is malformed JSON: retried once, then a fallback, never an exception
    cut = check_plausibility(client, items, {"max_tokens": 12})
    assert [v.status for v in cut] == ["fallback", "fallback"]
    assert cut[0].reason.startswith("verifier answer not valid JSON twice")
    # with room to finish, the grammar-constrained answer parses (or, at worst, falls back)
    verdicts = check_plausibility(client, items, {"max_tokens": 120})
    assert len(verdicts) == 2 and all(v.status in ("ok", "fallback") for v in verdicts)

    row = {"instance_id": "s1", "cutoff_date": "2020-01-15",
           "inputs": json.dumps({"sector": "Energy", "start_date": "2020-01-16", "end_date": "2020-06-30",
                                 "companies": [{"ticker": "XOM", "name": "Exxon Mobil"}]})}
    ev = [{"id": 1, "fact": "Exxon's 2019 revenue was $265 billion.", "source_date": "2020-01-31"}]
    ctx = [{"task": get_task("stock"), "tickers": ["XOM"], "names": ["Exxon Mobil"], "cutoff_date": "2020-01-15"}]
    (claims, trace), = extract_claims_llm(client, get_task("stock"), [row], [(ev, "Revenue fell in 2019 [1].")],
                                          {"max_tokens": 16}, ctx)
    assert trace["extractor"] == "deterministic" and "fallback" in trace["reason"]
    assert [c.text for c in claims] == ["Exxon's 2019 revenue was $265 billion.", "Revenue fell in 2019."]
