"""RAG method: query generation and fallback, date filter, dedup, budget, dateless passages, errors."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from anachron.errors import ConfigError
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatResult, ModelSpec
from anachron.methods.base import generation_request
from anachron.methods.rag import (
    PASSAGES_HEADER,
    build_context,
    fallback_queries,
    parse_queries,
    query_count_range,
    query_intent_after_cutoff,
    query_problem,
    query_schema,
    relevance_order,
    run_rag,
    run_rag_enforced,
    run_rag_unrestricted,
)
from anachron.tables import TOOL_CALL_COLUMNS
from anachron.tasks.legal import LegalTask
from anachron.tasks.stock import StockTask
from fictional_corpus import (
    CORPUS,
    ENTITIES,
    FakeSearch,
    FakeValidity,
    SearchHit,
    query_json,
    scripted_answer,
    scripted_provider,
    stock_row,
)

SPEC = ModelSpec(name="fake", model="mock/fake-model", knowledge_cutoff="2023-01-01", concurrency=2)
COMPANIES = [("CYGR", "Cygnet Robotics"), ("ESKF", "Eskerfield Foods")]


def _client(provider) -> LLMClient:
    return LLMClient(SPEC, None, CallLog(), provider=provider)


def _provider(answers: dict[str, str | None], tickers: tuple[str, ...] = ("CYGR", "ESKF")) -> MockProvider:
    return scripted_provider(SPEC, lambda iid: answers[iid], lambda iid: list(tickers))


def _instances(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def _calls(tool_calls: pd.DataFrame, iid: str) -> pd.DataFrame:
    return tool_calls[tool_calls["instance_id"] == iid].sort_values("seq")


# ------------------------------------------------------------------------------ pieces


def test_query_counts_follow_tempo_and_accept_overrides():
    assert query_count_range("stock") == (7, 12)
    assert query_count_range("legal") == (3, 6) and query_count_range("salary") == (3, 6)
    assert query_count_range("stock", 2, 4) == (2, 4)
    with pytest.raises(ConfigError, match="queries_min"):
        query_count_range("stock", 5, 3)
    schema = query_schema(7, 12)
    assert schema["minItems"] == 7 and schema["maxItems"] == 12
    assert schema["items"]["properties"]["query"]["maxLength"] == 200


@pytest.mark.parametrize(
    "text, expected, reason",
    [
        (query_json("ab 2020", "cd 2020", "ef 2020"), ["ab 2020", "cd 2020", "ef 2020"], None),
        ('["ab 2020", "cd  2020 ", "ef 2020"]', ["ab 2020", "cd 2020", "ef 2020"], None),
        ('Sure!\n```json\n{"queries": [{"query": "ab 2020"}, {"query": "cd 2020"}, {"query": "ef 2020"}]}\n```',
         ["ab 2020", "cd 2020", "ef 2020"], None),
        (query_json("ab", "AB", "cd", "ef", "gh", "ij", "kl", "mn"), ["ab", "cd", "ef", "gh", "ij", "kl"], "truncated"),
        (query_json("ab", "", "cd", "ef"), ["ab", "", "cd", "ef"], None),  # empty kept: logged as a failed call
    ],
)
def test_parse_queries_accepts_usable_answers(text, expected, reason):
    queries, why, _ = parse_queries(text, 3, 6)
    assert queries == expected and why == reason


@pytest.mark.parametrize(
    "text, reason",
    [("I would search for the company.", "not_json"), ("", "empty"), ('{"q": 1}', "not_a_list"), ("[]", "empty"),
     (query_json("ab", "ab", "AB"), "too_few"), (query_json("", "", "xy"), "too_few"), ("[1, 2, 3]", "empty"),
     (query_json("2019-06-30", "2021-07-04", "2021-08-05", "Q3 2021"), "too_few")],  # dates are no queries
)
def test_parse_queries_rejects_unusable_answers(text, reason):
    queries, why, _ = parse_queries(text, 3, 6)
    assert queries is None and why == reason


def test_fallback_queries_use_entities_and_cutoff_year():
    row = stock_row("s1", "2022-06-01", COMPANIES)
    qs = fallback_queries(StockTask(), row, 7, 12)
    assert len(qs) == 12 and len(set(qs)) == 12
    assert all("2022" in q for q in qs)
    assert qs[0] == "Cygnet Robotics CYGR quarterly earnings 2022" and qs[1] == "Eskerfield Foods ESKF quarterly earnings 2022"
    assert fallback_queries(StockTask(), row, 7, 12) == qs  # deterministic
    legal = {"instance_id": "l1", "task": "legal", "split": "eval", "cutoff_date": "2018-06-04",
             "inputs": json.dumps({"case_name": "Ardmore v. Pellham County", "court": "Supreme Court", "term": 2017,
                                   "docket": "17-101", "petitioner": "Ardmore", "respondent": "Pellham County"}),
             "label": "{}", "provenance": "{}"}
    lq = fallback_queries(LegalTask(), legal, 3, 6)
    assert lq[:3] == ["Ardmore v. Pellham County 2018", "Ardmore 2018", "Pellham County 2018"] and len(lq) == 6


@pytest.mark.parametrize(
    "query, problem",
    [("", "empty query"), ("   ", "empty query"), ("赛格机器人 2022 新闻", "non-Latin"),
     ("noticias de la empresa para inversores 2022", "foreign"), ("Cygnet Robotics 2022", None),
     ("Société Générale v. Müller 2019", None), ("Dunmore Pharma revenue per share 2021", None)],
)
def test_query_problem(query, problem):
    got = query_problem(query)
    assert (got is None) if problem is None else (problem in got)


@pytest.mark.parametrize(
    "query, intent",
    [("Eskerfield Foods results 2021", True), ("Eskerfield Foods results 2020", False),
     ("Eskerfield Foods March 2020", False), ("Eskerfield Foods April 2020", True),
     ("Eskerfield Foods 2020-03-02", False), ("Eskerfield Foods 2020-03-05", True),
     ("Eskerfield Foods Q2 2020 outlook", True), ("Eskerfield Foods revenue 2019 vs 2018", False)],
)
def test_query_intent_after_cutoff(query, intent):
    assert query_intent_after_cutoff(query, dt.date(2020, 3, 2)) is intent


def _hit(doc_id: str, title: str = "T", snippet: str = "s", published_at: str = "2020-01-01") -> SearchHit:
    return SearchHit(doc_id=doc_id, title=title, snippet=snippet, published_at=published_at, score=1.0,
                     source="fiction", entities=(), restates=None)


def test_relevance_order_interleaves_ranks_and_dedups():
    calls = [[_hit("a"), _hit("b"), _hit("c")], [_hit("b"), _hit("d")], [], [_hit("e")]]
    assert [h.doc_id for h in relevance_order(calls)] == ["a", "b", "e", "d", "c"]


def test_build_context_respects_budget_and_cuts_at_word_boundary():
    hits = [_hit(f"d{i}", title=f"Title {i}", snippet="word " * 30) for i in range(5)]
    ctx = build_context(hits, 400)
    lines = ctx.text.split("\n")
    assert lines[0] == PASSAGES_HEADER
    assert ctx.chars == len("\n".join(lines[1:])) <= 400
    assert ctx.truncated and ctx.consumed == ["d0", "d1", "d2"]  # two whole passages, the third cut
    assert lines[1].startswith("[1] Title 0 — word") and lines[3].startswith("[3] Title 2 — ") and lines[3].endswith("…")
    assert not lines[3].endswith(" …")
    whole = build_context(hits[:2], 10_000)
    assert not whole.truncated and whole.consumed == ["d0", "d1"]
    assert build_context([], 100).text == "" and build_context([], 100).chars == 0


# ------------------------------------------------------------------------------ the method


def test_rag_prompt_keeps_system_prompt_and_prepends_dateless_passages():
    row = stock_row("s1", "2022-06-01", COMPANIES)
    prov = _provider({"s1": query_json("Cygnet Robotics 2022", "Eskerfield Foods results 2022")})
    results, calls = run_rag_unrestricted(_instances(row), StockTask(), _client(prov), params={"temperature": 0},
                                          search=FakeSearch(), queries_min=1, queries_max=3)
    gen = [r for r in prov.requests if r.tag["step"] == "generate"][0]
    base = generation_request(StockTask(), pd.Series(row), {"temperature": 0}, 10)
    assert gen.messages[0] == base.messages[0]  # the system prompt is Temporal Hint's, byte for byte
    assert gen.response_schema == base.response_schema
    user = gen.messages[1]["content"]
    block, original = user.split("\n\n", 1)
    assert original == base.messages[1]["content"]
    assert block.startswith(PASSAGES_HEADER + "\n[1] ")
    for d in CORPUS["published_at"]:
        assert d not in block  # no publication dates in the passages
    assert "Cygnet Robotics prices initial public offering — " in block
    q = [r for r in prov.requests if r.tag["step"] == "queries"][0]
    assert len(q.messages) == 1 and q.messages[0]["role"] == "user"
    assert "2022-06-01" in q.messages[0]["content"] and base.messages[1]["content"] in q.messages[0]["content"]
    (res,) = results
    assert res.parsed.status == "ok" and res.n_llm_calls == 2
    steps = {s["step"]: s for s in res.trace}
    assert steps["queries"]["source"] == "model" and steps["queries"]["n_queries"] == 2
    assert steps["context"]["n_passages"] == len(set(sum((json.loads(c) for c in calls["consumed"]), [])))
    assert list(calls.columns) == TOOL_CALL_COLUMNS
    assert set(calls["method"]) == {"rag_unrestricted"} and set(calls["model"]) == {"fake"}


def test_enforced_mode_passes_the_cutoff_as_date_filter():
    row = stock_row("s1", "2022-06-01", COMPANIES)
    search = FakeSearch()
    _, calls = run_rag_enforced(_instances(row), StockTask(), _client(_provider({"s1": query_json("Cygnet Robotics 2022")})),
                                params={}, search=search, queries_min=1, queries_max=3)
    assert search.calls == [("Cygnet Robotics 2022", 5, dt.date(2022, 6, 1))]
    assert calls["mode"].tolist() == ["enforced"] and calls["method"].tolist() == ["rag"]
    assert json.loads(calls["returned"].iloc[0]) == []  # both Cygnet items are after the cutoff
    search2 = FakeSearch()
    run_rag_unrestricted(_instances(row), StockTask(), _client(_provider({"s1": query_json("Cygnet Robotics 2022")})),
                         params={}, search=search2, queries_min=1, queries_max=3, results_per_query=1)
    assert search2.calls == [("Cygnet Robotics 2022", 1, None)]


def test_garbage_query_answer_falls_back_to_entity_queries():
    # distinct cutoffs: identical prompts would share one (cached) model answer
    rows = [stock_row("g1", "2022-06-01", COMPANIES), stock_row("g2", "2022-06-02", COMPANIES),
            stock_row("g3", "2022-06-03", COMPANIES)]
    prov = _provider({"g1": "Here are some ideas: search the news!", "g2": query_json("Cygnet 2022"), "g3": None})
    results, calls = run_rag(_instances(*rows), StockTask(), _client(prov), params={}, search=FakeSearch())
    reasons = {r.instance_id: r.trace[0] for r in results}
    assert reasons["g1"]["source"] == "fallback" and reasons["g1"]["reason"] == "not_json"
    assert reasons["g2"]["source"] == "fallback" and reasons["g2"]["reason"] == "too_few"  # 1 < 7 for stock
    assert reasons["g3"]["source"] == "fallback" and reasons["g3"]["reason"] == "llm_error"
    expected = fallback_queries(StockTask(), rows[0], 7, 12)
    for iid in ("g1", "g2", "g3"):
        assert _calls(calls, iid)["query"].tolist() == expected
    assert all(r.parsed.status == "ok" for r in results)


def test_duplicates_across_queries_enter_the_prompt_once():
    row = stock_row("s1", "2021-12-01", [("DNMP", "Dunmore Pharma"), ("ESKF", "Eskerfield Foods")])
    prov = _provider({"s1": query_json("Dunmore Pharma revenue 2021", "Dunmore Pharma fourth quarter 2021")})
    results, calls = run_rag_unrestricted(_instances(row), StockTask(), _client(prov), params={}, search=FakeSearch(),
                                          queries_min=1, queries_max=3)
    returned = [json.loads(r) for r in calls["returned"]]
    assert returned[0] == returned[1] == ["dnm-1", "dnm-2"]
    gen = [r for r in prov.requests if r.tag["step"] == "generate"][0]
    block = gen.messages[1]["content"].split("\n\n", 1)[0]
    assert block.count("[") == 2 and "[3]" not in block
    assert [json.loads(c) for c in calls["consumed"]] == [["dnm-1", "dnm-2"], ["dnm-1", "dnm-2"]]
    assert results[0].trace[1]["n_hits"] == 4 and results[0].trace[1]["n_unique"] == 2


def test_token_budget_limits_consumed_passages():
    long_corpus = pd.DataFrame(
        [{"doc_id": f"x{i}", "published_at": "2019-01-0%d" % (i + 1), "title": f"Quillon Freight note {i}",
          "text": "Quillon Freight " + "tonnage " * 60, "source": "fiction", "kind": "news",
          "entities": "[]", "valid_from": None, "valid_to": None, "restates": None} for i in range(5)]
    )
    row = stock_row("b1", "2020-01-01", [("QLFR", "Quillon Freight"), ("ESKF", "Eskerfield Foods")])
    prov = _provider({"b1": query_json("Quillon Freight 2019")})
    results, calls = run_rag_enforced(_instances(row), StockTask(), _client(prov), params={},
                                      search=FakeSearch(long_corpus), queries_min=1, queries_max=2,
                                      token_budget=150, chars_per_token=4)
    ctx = results[0].trace[2]
    assert ctx["budget_chars"] == 600 and ctx["chars"] <= 600 and ctx["truncated"]
    gen = [r for r in prov.requests if r.tag["step"] == "generate"][0]
    passages = gen.messages[1]["content"].split("\n\n", 1)[0].split("\n")[1:]
    assert len("\n".join(passages)) == ctx["chars"]
    consumed = json.loads(calls["consumed"].iloc[0])
    assert json.loads(calls["returned"].iloc[0]) == ["x0", "x1", "x2", "x3", "x4"]
    assert consumed == ["x0", "x1"] and len(passages) == 2


def test_search_error_empty_and_foreign_queries_are_logged_and_the_run_goes_on():
    row = stock_row("e1", "2020-06-01", [("BRML", "Boreal Mining"), ("ESKF", "Eskerfield Foods")])
    prov = _provider({"e1": query_json("Boreal Mining boom 2020", "", "noticias de la empresa para inversores 2020",
                                       "Boreal Mining copper 2020")}, ("BRML", "ESKF"))
    results, calls = run_rag_enforced(_instances(row), StockTask(), _client(prov), params={},
                                      search=FakeSearch(fail_on="boom"), queries_min=1, queries_max=4)
    c = _calls(calls, "e1")
    assert c["seq"].tolist() == [0, 1, 2, 3]
    assert "SearchError" in c["error"].iloc[0] and "503" in c["error"].iloc[0]
    assert c["error"].iloc[1] == "empty query"
    assert c["error"].iloc[2].startswith("query not in English")
    assert c["error"].iloc[3] is None
    assert [json.loads(r) for r in c["returned"]] == [[], [], [], ["bor-1", "bor-2"]]
    (res,) = results
    assert res.parsed.status == "ok" and res.trace[1]["n_errors"] == 3 and res.trace[2]["n_passages"] == 2


def test_bad_config_is_a_config_error():
    row = stock_row("s1", "2022-06-01", COMPANIES)
    with pytest.raises(ConfigError, match="mode"):
        run_rag(_instances(row), StockTask(), _client(_provider({})), params={}, search=FakeSearch(), mode="lenient")
    with pytest.raises(ConfigError, match="token_budget"):
        run_rag(_instances(row), StockTask(), _client(_provider({})), params={}, search=FakeSearch(), token_budget=0)
    with pytest.raises(ConfigError, match="always runs in mode"):
        run_rag_enforced(_instances(row), StockTask(), _client(_provider({})), params={}, search=FakeSearch(),
                         mode="unrestricted")


def test_generation_error_is_recorded_not_raised():
    script = scripted_answer(lambda iid: query_json("Cygnet Robotics 2022"), lambda iid: None)

    def failing(request):
        return ChatResult(error="APIError: 500") if request.tag["step"] == "generate" else script(request)

    row = stock_row("s1", "2022-06-01", COMPANIES)
    prov = MockProvider(SPEC, answers=failing)
    (res,), calls = run_rag_enforced(_instances(row), StockTask(), _client(prov), params={}, search=FakeSearch(),
                                     queries_min=1, queries_max=2)
    assert res.llm_error == "APIError: 500" and res.parsed.status == "empty" and len(calls) == 1


def test_real_bm25_backend_when_available():
    search_mod = pytest.importorskip("anachron.retrieval.search")
    bm25 = search_mod.BM25Search(CORPUS)
    row = stock_row("s1", "2021-06-01", [("DNMP", "Dunmore Pharma"), ("ESKF", "Eskerfield Foods")])
    prov = _provider({"s1": query_json("Dunmore Pharma restated revenue 2021")})
    _, un = run_rag_unrestricted(_instances(row), StockTask(), _client(prov), params={}, search=bm25,
                                 entity_validity=FakeValidity(), queries_min=1, queries_max=2)
    _, en = run_rag_enforced(_instances(row), StockTask(), _client(prov), params={}, search=bm25,
                             entity_validity=FakeValidity(), queries_min=1, queries_max=2)
    assert "dnm-2" in json.loads(un["restatements"].iloc[0])
    assert "dnm-2" not in json.loads(en["returned"].iloc[0]) and json.loads(en["restatements"].iloc[0]) == []
    # survivorship under the filter with the real validity index: Boreal was delisted before the cutoff
    row = stock_row("b1", "2020-06-01", [("BRML", "Boreal Mining"), ("ESKF", "Eskerfield Foods")])
    prov = _provider({"b1": query_json("Boreal Mining copper output 2020")}, ("BRML", "ESKF"))
    _, en = run_rag_enforced(_instances(row), StockTask(), _client(prov), params={}, search=bm25,
                             entity_validity=search_mod.validity_index(ENTITIES), queries_min=1, queries_max=2)
    assert json.loads(en["invalid_entities"].iloc[0]) == ["ticker:brml"]
    assert json.loads(en["after_cutoff"].iloc[0]) == []


def test_enforced_mode_logs_what_slips_past_a_leaky_filter():
    class LeakyLive:
        """A live backend whose date filter lets a later item through; one result has no date."""

        def search(self, query, *, k=5, as_of=None):
            return [
                SearchHit(doc_id="https://news.example/late", title="Late story", snippet="After the fact.",
                          published_at="2022-07-15", score=1.0, source="live", entities=(), restates=float("nan")),
                SearchHit(doc_id="https://news.example/undated", title="Undated page", snippet="No date on it.",
                          published_at="", score=0.5, source="live", entities=(), restates=None),
            ]

    row = stock_row("s1", "2022-06-01", COMPANIES)
    _, calls = run_rag_enforced(_instances(row), StockTask(), _client(_provider({"s1": query_json("Cygnet Robotics 2022")})),
                                params={}, search=LeakyLive(), queries_min=1, queries_max=2)
    r = calls.iloc[0]
    assert json.loads(r["after_cutoff"]) == ["https://news.example/late"]  # not filtered away by the method
    assert json.loads(r["consumed"]) == ["https://news.example/late", "https://news.example/undated"]
    assert json.loads(r["restatements"]) == []  # a NaN "restates" is no restatement
