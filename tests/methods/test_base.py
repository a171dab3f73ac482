"""Hardened parsing of model answers: repair, truncation, duplicate keys, missing keys, and the one retry.

The answers are written for two fictional companies (QTRX, MNVL); the stock task asks for a
ranking of both.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.decode import FROM_REPAIR, complete_objects, decode_json, ends_inside_value
from anachron.llm.structured import parse_output
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from anachron.methods.base import PARSE_RETRIES, RETRY_MAX_TOKENS, generation_request, retry_request
from anachron.methods.supervised import run_self_correction
from anachron.methods.temporal_hint import run_temporal_hint
from anachron.tables import EVIDENCE_USABLE, PREDICTION_USABLE, RETRIED, ParseStatus
from anachron.tasks.stock import StockTask
from anachron.training.rewards import CompletionScore, group_rewards
from fictional_corpus import stock_row

from conftest import REPO

S = ParseStatus
TICKERS = ["QTRX", "MNVL"]
FULL = {
    "evidence": [
        {"id": 1, "fact": "Quartrex Labs opened a second plant in Ohio.", "source_date": "2021-03-04"},
        {"id": 2, "fact": "Monvale Foods lowered its sales outlook.", "source_date": "2021-05-20"},
    ],
    "reasoning": "Quartrex is expanding [1]; Monvale expects weaker sales [2].",
    "prediction": ["QTRX", "MNVL"],
}
FULL_TEXT = json.dumps(FULL)


def ranking(p):
    if not isinstance(p, list) or sorted(p) != sorted(TICKERS):
        raise ValueError(f"not a ranking of {TICKERS}: {p!r}")
    return p


def parse(text):
    return parse_output(text, ranking, aliases=("ranking",))


# --------------------------------------------------------------------------- one status per answer

TRAILING_COMMA = FULL_TEXT[:-1] + ",}"
SINGLE_QUOTES = ("{'evidence': [{'id': 1, 'fact': 'Quartrex Labs opened a second plant in Ohio.', "
                 "'source_date': '2021-03-04'}], 'reasoning': 'Expanding [1].', 'prediction': ['QTRX', 'MNVL']}")
COMMENTED = FULL_TEXT.replace('"reasoning"', '// the model explains itself\n"reasoning"')
MISMATCHED = FULL_TEXT.replace('"2021-05-20"}]', '"2021-05-20"]')  # the last evidence item's } is missing
MID_STRING = FULL_TEXT[: FULL_TEXT.index("lowered") + 3]
MID_ARRAY = FULL_TEXT[: FULL_TEXT.rindex('"MNVL"')]  # '... "prediction": ["QTRX", '
LAST_ITEM_ONLY = FULL_TEXT[: FULL_TEXT.rindex(', "MNVL"')]  # '... ["QTRX"': closing it would shorten the ranking
DUPLICATE_TOP = FULL_TEXT[:-1] + ', "prediction": ["MNVL", "QTRX"]}'
DUPLICATE_NESTED = FULL_TEXT.replace('"id": 2,', '"id": 2, "id": 3,')


@pytest.mark.parametrize(
    "text, status",
    [
        (FULL_TEXT, S.OK),
        ("Here is my answer:\n```json\n" + FULL_TEXT + "\n```", S.OK_FENCED),
        ("My answer is " + FULL_TEXT + " as requested.", S.OK_BRACES),
        (TRAILING_COMMA, S.REPAIRED),
        (SINGLE_QUOTES, S.REPAIRED),
        (COMMENTED, S.REPAIRED),
        (MISMATCHED, S.REPAIRED),
        ("```json\n" + FULL_TEXT[:-1] + "\n```", S.REPAIRED),  # the model closed the fence: not cut off
        (MID_STRING, S.TRUNCATED),
        (MID_ARRAY, S.TRUNCATED),
        (LAST_ITEM_ONLY, S.TRUNCATED),
        (MID_ARRAY.replace('"QTRX", ', '"QTRX",, '), S.TRUNCATED),  # a slip and cut off: truncation wins
        (DUPLICATE_TOP, S.DUPLICATE_KEYS),
        (DUPLICATE_NESTED, S.DUPLICATE_KEYS),
        ("{}", S.INVALID),
        (json.dumps({k: v for k, v in FULL.items() if k != "prediction"}), S.INVALID),
        (json.dumps({**FULL, "evidence": "none"}), S.INVALID),
        (json.dumps({**FULL, "prediction": ["QTRX"]}), S.INVALID_PREDICTION),
        (json.dumps({**FULL, "prediction": None}), S.INVALID_PREDICTION),
        ("I cannot rank these companies.", S.NOT_JSON),
        ('["QTRX", "MNVL"]', S.NOT_JSON),
        ("   ", S.EMPTY),
    ],
)
def test_status_of_each_answer(text, status):
    out = parse(text)
    assert out.status == status, out.error
    assert out.prediction_usable == (status in PREDICTION_USABLE)
    if out.prediction_usable:
        assert out.prediction == ["QTRX", "MNVL"] and out.error is None
    else:
        assert out.prediction is None and out.error


def test_repaired_answer_keeps_its_content():
    out = parse(TRAILING_COMMA)
    assert out.evidence_usable and [e.fact for e in out.evidence] == [e["fact"] for e in FULL["evidence"]]
    assert out.reasoning == FULL["reasoning"]
    assert decode_json(SINGLE_QUOTES).source == FROM_REPAIR
    mended = parse(MISMATCHED)
    assert [e.source_date for e in mended.evidence] == ["2021-03-04", "2021-05-20"]


def test_truncated_answer_is_never_repaired_into_a_shorter_one():
    got = decode_json(LAST_ITEM_ONLY)
    assert got.truncated and got.value is None and "cut off" in got.problem
    # what a repair would have given: a valid-looking ranking with one name missing
    import json_repair

    assert json_repair.loads(LAST_ITEM_ONLY)["prediction"] == ["QTRX"]
    out = parse(MID_STRING)
    assert not out.evidence_usable and out.evidence == []
    assert len(complete_objects(MID_STRING, ("fact", "source_date"))) == 1  # what TEMPO can still count


def test_duplicate_keys_name_the_key():
    assert decode_json(DUPLICATE_TOP).duplicate_keys == ("prediction",)
    assert decode_json(DUPLICATE_NESTED).duplicate_keys == ("id",)
    assert "'prediction'" in parse(DUPLICATE_TOP).error
    # a repeated key in two different objects is no duplicate
    assert parse(json.dumps({**FULL, "evidence": FULL["evidence"] * 1})).status == S.OK


def test_missing_keys_are_named_and_an_alias_counts():
    out = parse(json.dumps({"evidence": FULL["evidence"]}))
    assert out.status == S.INVALID and "reasoning" in out.error and "prediction" in out.error
    aliased = {k: v for k, v in FULL.items() if k != "prediction"} | {"ranking": ["MNVL", "QTRX"]}
    assert parse(json.dumps(aliased)).status == S.OK


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": "x {"', True),  # inside a string that holds a bracket
        ('{"a": "say \\"hi\\" ', True),  # escaped quotes do not end the string
        ('{"a": 1} and then {"b"', False),  # the first value closed; later prose does not count
        ('```json\n{"a": [1\n```\nDone.', False),  # a closed fence was closed on purpose
        ("no bracket here", False),
        ('{"a": [1, 2]', True),
    ],
)
def test_ends_inside_value(text, expected):
    assert ends_inside_value(text) is expected


def test_one_enum_and_its_documentation():
    assert {s.value for s in S} == {"ok", "ok_fenced", "ok_braces", "repaired", "invalid_prediction", "invalid",
                                   "duplicate_keys", "truncated", "not_json", "empty"}
    assert PREDICTION_USABLE < EVIDENCE_USABLE and EVIDENCE_USABLE - PREDICTION_USABLE == {S.INVALID_PREDICTION}
    assert RETRIED.isdisjoint(EVIDENCE_USABLE)
    assert pd.Series(["ok", "repaired", "invalid"]).isin(PREDICTION_USABLE).tolist() == [True, True, False]
    doc = (REPO / "docs" / "methods.md").read_text()
    table = doc[doc.index("| status |"):].split("\n\n")[0]
    assert set(re.findall(r"^\| `(\w+)`", table, re.M)) == {s.value for s in S}


# --------------------------------------------------------------------------- the one retry


def row(iid: str = "s1") -> pd.Series:
    return pd.Series(stock_row(iid, "2021-06-30", [("QTRX", "Quartrex Labs"), ("MNVL", "Monvale Foods")]))


def mock_client(answers, cache: LLMCache | None = None, **params) -> LLMClient:
    spec = ModelSpec(name="scripted", model="mock/scripted", knowledge_cutoff="2024-06-30", params=params,
                     mock={"answers": answers})
    return LLMClient(spec, cache, CallLog())


def run_one(client: LLMClient, **params):
    (res,) = run_temporal_hint(pd.DataFrame([row()]), StockTask(), client, params=params, max_evidence=5)
    return res, client.provider.requests


def test_truncated_answer_is_retried_once_with_twice_the_tokens():
    res, reqs = run_one(mock_client([MID_STRING, FULL_TEXT]), max_tokens=300)
    assert len(reqs) == 2
    assert reqs[0].params["max_tokens"] == 300 and reqs[1].params["max_tokens"] == 600
    assert reqs[1].sample_index == reqs[0].sample_index == 0 and reqs[1].messages == reqs[0].messages
    assert res.parsed.status == S.OK and res.completion == FULL_TEXT and res.n_llm_calls == 2
    gen, retry = res.trace
    assert gen["step"] == "generate" and gen["parse_status"] == S.TRUNCATED
    assert retry["step"] == "retry" and retry["of"] == "generate" and retry["reason"] == "truncated"
    assert (retry["max_tokens_before"], retry["max_tokens"]) == (300, 600)
    assert retry["parse_status"] == S.OK and retry["cache_key"] != gen["cache_key"]


def test_the_models_own_limit_is_doubled_when_the_request_sets_none():
    res, reqs = run_one(mock_client([MID_ARRAY, FULL_TEXT], max_tokens=512))  # the model's params, not the method's
    assert [r.params["max_tokens"] for r in reqs] == [512, 1024] and res.trace[1]["max_tokens_before"] == 512


@pytest.mark.parametrize("first", ["{}", DUPLICATE_TOP, json.dumps({"evidence": FULL["evidence"], "reasoning": "x"})])
def test_invalid_answer_is_retried_once_as_a_new_sample(first):
    res, reqs = run_one(mock_client([first, FULL_TEXT]), max_tokens=300)
    assert len(reqs) == 2 and [r.sample_index for r in reqs] == [0, 1]
    assert reqs[1].params == reqs[0].params  # same token limit
    assert res.parsed.status == S.OK and res.n_llm_calls == 2
    assert res.trace[1]["sample_index"] == 1 and res.trace[1]["reason"] == str(parse(first).status)


def test_parsed_answers_are_not_retried_and_keep_their_trace():
    for answer, status in [(FULL_TEXT, S.OK), (TRAILING_COMMA, S.REPAIRED), (json.dumps({**FULL, "prediction": ["QTRX"]}),
                                                                           S.INVALID_PREDICTION), ("no JSON", S.NOT_JSON)]:
        res, reqs = run_one(mock_client([answer, FULL_TEXT]), max_tokens=300)
        assert len(reqs) == 1 and res.n_llm_calls == 1 and res.parsed.status == status
        assert res.trace == [{"step": "generate", "cache_key": res.trace[0]["cache_key"], "parse_status": status}]


def test_retry_calls_load_into_the_llm_calls_table(tmp_path):
    """The retry's call-log row (its ``retry`` tag) is a declared llm_calls column: the database loads."""
    import duckdb

    from anachron.io import write_parquet
    from anachron.store.load import load_parquet
    from anachron.tables import SCHEMA

    client = mock_client([MID_STRING, FULL_TEXT])
    run_one(client, max_tokens=300)
    calls = client.call_log.frame(task="stock", method="temporal_hint", model_key="scripted")
    assert calls["retry"].isna().tolist() == [True, False] and calls["retry"].iloc[1] == "truncated"
    write_parquet(calls, tmp_path / "calls.parquet")
    con = duckdb.connect()
    con.execute(SCHEMA["llm_calls"].create_sql())
    load_parquet(con, "llm_calls", [tmp_path / "calls.parquet"])
    assert con.execute("SELECT retry FROM llm_calls ORDER BY retry NULLS FIRST").fetchall() == [(None,), ("truncated",)]


def test_retries_stop_after_two_and_a_failed_retry_call_keeps_the_answer_before():
    # cut twice, whole the third time: max_tokens 300 -> 600 -> 1200
    res, reqs = run_one(mock_client([MID_STRING, MID_STRING, FULL_TEXT]), max_tokens=300)
    assert len(reqs) == 3 and res.parsed.status == S.OK and res.n_llm_calls == 3
    assert [r.params.get("max_tokens") for r in reqs] == [300, 600, 1200]
    assert [t["step"] for t in res.trace] == ["generate", "retry", "retry"]
    assert [t.get("max_tokens") for t in res.trace[1:]] == [600, 1200]
    # the second retry's answer is final whatever it is
    res, reqs = run_one(mock_client([MID_STRING, MID_STRING, MID_STRING, FULL_TEXT]), max_tokens=300)
    assert len(reqs) == 3 and res.parsed.status == S.TRUNCATED and res.n_llm_calls == 3
    res, reqs = run_one(mock_client(["{}", ChatResult(error="RuntimeError: gone")]), max_tokens=300)
    assert len(reqs) == 2 and res.completion == "{}" and res.parsed.status == S.INVALID and res.llm_error is None
    assert res.trace[1]["llm_error"] == "RuntimeError: gone" and res.n_llm_calls == 2


def test_the_retry_gets_its_own_cache_entry(tmp_path):
    cache = LLMCache(tmp_path / "cache")
    first, _ = run_one(mock_client(["{}", FULL_TEXT], cache), max_tokens=300)
    # a rerun replays the chain from the cache: the invalid first answer (not final, but marked for
    # replay since its retry parsed) and the retry's parsed answer are both hits; nothing is asked
    assert cache.get(first.trace[0]["cache_key"]) | {} == {**cache.get(first.trace[0]["cache_key"]), "replay": True}
    client = mock_client(["{}", FULL_TEXT], cache)  # the same script: the same cache keys
    again, reqs = run_one(client, max_tokens=300)
    assert reqs == [] and again.parsed.status == S.OK and again.completion == first.completion
    assert again.trace == first.trace and again.n_llm_calls == first.n_llm_calls == 2
    assert [r["cache_hit"] for r in client.call_log.records] == [True, True]


# --------------------------------------------------------------------------- no poisoned cache entries


def deterministic_client(cache: LLMCache, good_from: int, bad: str = "{}") -> LLMClient:
    """A mock model that answers ``bad`` for every sample index below ``good_from``, else FULL_TEXT."""
    from anachron.llm.providers.mock import MockProvider

    spec = ModelSpec(name="scripted", model="mock/scripted", knowledge_cutoff="2024-06-30")
    provider = MockProvider(spec, answers=lambda req: bad if req.sample_index < good_from else FULL_TEXT)
    return LLMClient(spec, cache, CallLog(), provider=provider)


@pytest.mark.parametrize("bad", ["no JSON here", "", MID_STRING, "{}", DUPLICATE_TOP])
def test_an_unparsed_answer_is_not_cached_and_a_rerun_asks_a_fresh_sample(tmp_path, bad):
    cache = LLMCache(tmp_path / "cache")
    good = 1 + PARSE_RETRIES  # one run's first answer and its retries are all bad
    res, reqs = run_one(deterministic_client(cache, good_from=good, bad=bad), max_tokens=300)
    assert res.parsed.status == parse(bad).status and res.parsed.status not in EVIDENCE_USABLE
    asked = [r.sample_index for r in reqs]  # 0, plus 1, 2 when the status is retried as a new sample
    # the rerun is not served the garbage: it asks again, past every sample already rejected
    client = deterministic_client(cache, good_from=good, bad=bad)
    again, reqs = run_one(client, max_tokens=300)
    assert reqs and reqs[0].sample_index == max(asked) + 1
    assert client.call_log.records[0]["cache_hit"] is False
    while again.parsed.status != S.OK:  # each rerun moves on past the samples it was refused
        before = max(r.sample_index for r in reqs)
        again, reqs = run_one(deterministic_client(cache, good_from=good, bad=bad), max_tokens=300)
        assert reqs[0].sample_index == before + 1
    assert again.trace[0]["sample_index"] == good
    # once parsed, the answer is final: a rerun makes no call
    final, reqs = run_one(deterministic_client(cache, good_from=99), max_tokens=300)
    assert reqs == [] and final.parsed.status == S.OK and final.completion == FULL_TEXT


def test_parsed_and_invalid_prediction_answers_are_served_from_the_cache(tmp_path):
    for answer in (FULL_TEXT, TRAILING_COMMA, json.dumps({**FULL, "prediction": ["QTRX"]})):
        cache = LLMCache(tmp_path / str(len(answer)))
        first, _ = run_one(mock_client([answer], cache), max_tokens=300)
        assert first.parsed.status in EVIDENCE_USABLE
        again, reqs = run_one(mock_client([answer], cache), max_tokens=300)
        assert reqs == [] and again.completion == answer and again.trace == first.trace


def test_a_changed_mock_script_is_asked_again_not_replayed(tmp_path):
    # the scripted answers decide the mock's answer, so they are part of the cache key
    cache = LLMCache(tmp_path / "cache")
    first, _ = run_one(mock_client([FULL_TEXT], cache), max_tokens=300)
    again, reqs = run_one(mock_client([TRAILING_COMMA], cache), max_tokens=300)
    assert len(reqs) == 1 and again.completion == TRAILING_COMMA != first.completion
    plain = ModelSpec(name="m", model="mock/x", knowledge_cutoff="2024-06-30")
    req = generation_request(StockTask(), row(), {"max_tokens": 300}, 5)
    assert LLMClient(plain, cache, CallLog()).key_for(req) == LLMClient(
        ModelSpec(name="m", model="mock/x", knowledge_cutoff="2024-06-30", mock={"latency_s": 0.5}), cache, CallLog()
    ).key_for(req)  # options that only delay or fail calls leave the key as it was


def test_an_old_unflagged_garbage_entry_is_not_served(tmp_path):
    """An entry cached before answers were judged (no ``final`` field) is still asked again."""
    cache = LLMCache(tmp_path / "cache")
    req = generation_request(StockTask(), row(), {"max_tokens": 300}, 5)
    old = deterministic_client(cache, good_from=1, bad="no JSON")
    [res] = old.complete_many([req], progress=False)  # no accept: stored as final, as before
    assert "final" not in cache.get(res.cache_key)
    again, reqs = run_one(deterministic_client(cache, good_from=1, bad="no JSON"), max_tokens=300)
    assert [r.sample_index for r in reqs] == [0] and again.parsed.status == S.NOT_JSON
    assert cache.get(res.cache_key)["final"] is False  # now marked: the next rerun moves on
    final, reqs = run_one(deterministic_client(cache, good_from=1, bad="no JSON"), max_tokens=300)
    assert [r.sample_index for r in reqs] == [1] and final.parsed.status == S.OK


def test_client_accept_predicate_keeps_rejected_answers_out_of_the_hits(tmp_path):
    cache = LLMCache(tmp_path / "cache")
    client = deterministic_client(cache, good_from=0)
    req = ChatRequest(messages=[{"role": "user", "content": "hi"}])
    [res] = client.complete_many([req], progress=False, accept=[lambda r: False])
    assert res.error is None and res.text == FULL_TEXT and cache.get(res.cache_key)["final"] is False
    [res2] = client.complete_many([req], progress=False, accept=[None])
    assert res2.cache_hit is False and "final" not in cache.get(res.cache_key)  # asked again, now final
    [res3] = client.complete_many([req], progress=False)
    assert res3.cache_hit is True
    assert [r["cache_hit"] for r in client.call_log.records] == [False, False, True]  # every call logged
    assert client.fresh_sample(req) is req
    with pytest.raises(ValueError, match="predicates"):
        client.complete_many([req], progress=False, accept=[])


def test_retry_request_caps_the_token_limit():
    req = generation_request(StockTask(), row(), {"max_tokens": RETRY_MAX_TOKENS}, 5)
    mock = ModelSpec(name="m", model="mock/m", knowledge_cutoff="2024-06-30")
    assert retry_request(req, S.TRUNCATED, ChatResult(text="{"), mock) is None  # nothing left to grow
    local = ModelSpec(name="l", model="local/l", knowledge_cutoff="2024-06-30", n_ctx=2048)
    small = req.model_copy(update={"params": {"max_tokens": 700}})
    again, fields = retry_request(small, S.TRUNCATED, ChatResult(text="{", prompt_tokens=600), local)
    assert again.params["max_tokens"] == 1400 == fields["max_tokens"]
    again, _ = retry_request(small, S.TRUNCATED, ChatResult(text="{", prompt_tokens=1000), local)
    assert again.params["max_tokens"] == 1048  # n_ctx less the prompt
    unknown = req.model_copy(update={"params": {}})
    again, _ = retry_request(unknown, S.TRUNCATED, ChatResult(text="{", completion_tokens=250), mock)
    assert again.params["max_tokens"] == 500
    for status in set(S) - RETRIED:
        assert retry_request(req, status, ChatResult(text="x"), mock) is None


def test_supervised_final_answer_is_retried_too():
    client = mock_client({"generate": [FULL_TEXT], "aggregate": ["{}", FULL_TEXT]})
    (res,) = run_self_correction(pd.DataFrame([row()]), StockTask(), client, params={"max_tokens": 300},
                                 extractor="deterministic", max_regenerations=0)
    steps = [s["step"] for s in res.trace]
    assert steps[-2:] == ["aggregate", "retry"] and res.trace[-1]["of"] == "aggregate"
    assert res.parsed.status == S.OK
    aggregate_calls = [r for r in client.provider.requests if r.tag.get("step") == "aggregate"]
    assert [r.sample_index for r in aggregate_calls] == [0, 1]


# --------------------------------------------------------------------------- TEMPO's view of the statuses


def score(text: str, *, overlong: bool = False) -> CompletionScore:
    out = parse(text)
    recovered = 0 if out.evidence_usable else len(complete_objects(text, ("fact", "source_date")))
    return CompletionScore("g", out.status, 0, len(out.evidence), 1.0 if out.evidence else 0.0,
                           len(out.reasoning.split()), 0.8 if out.prediction_usable else float("nan"),
                           overlong=overlong, n_recovered=recovered)


def test_tempo_classifies_the_new_statuses():
    repaired = score(TRAILING_COMMA)
    assert repaired.valid and repaired.evidence_usable
    cut = score(MID_STRING, overlong=True)
    assert cut.parse_status == S.TRUNCATED and not cut.valid and cut.n_recovered == 1 and cut.near_miss
    assert not score(MID_STRING).near_miss  # ends inside a value without reaching the limit: it stopped itself
    no_prediction = score(json.dumps({k: v for k, v in FULL.items() if k != "prediction"}))
    assert no_prediction.parse_status == S.INVALID and no_prediction.near_miss
    for degenerate in ("{}", DUPLICATE_TOP, DUPLICATE_NESTED):
        s = score(degenerate)
        assert not s.valid and not s.evidence_usable and not s.near_miss, degenerate
    g = group_rewards([repaired, cut, score("{}")])
    assert g.rewards[0] > g.rewards[1] > g.rewards[2]
