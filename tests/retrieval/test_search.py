"""Search backends: BM25 with the as-of filter, persistence, the hosted search client (replayed HTTP).

The corpus here is a handful of invented documents.
"""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.retrieval import BM25Search, LiveSearch, SearchBackend, SearchError, SearchHit, validity_index
from anachron.retrieval.corpus import CORPUS_COLUMNS
from anachron.retrieval.search import PERPLEXITY_SEARCH_URL

KEY_ENV = "ANACHRON_TEST_SEARCH_KEY"


def _doc(doc_id, day, title, text="", source="reuters", entities=(), restates=None):
    return {
        "doc_id": doc_id,
        "published_at": day,
        "title": title,
        "text": text,
        "source": source,
        "kind": "headline",
        "entities": json.dumps(list(entities)),
        "valid_from": None,
        "valid_to": None,
        "restates": restates,
    }


@pytest.fixture(scope="module")
def corpus() -> pd.DataFrame:
    rows = [
        _doc("d-on", "2020-03-31", "Widgetco quarterly revenue rises", "Widgetco sold more widgets.", entities=["ticker:WIDG"]),
        _doc("d-after", "2020-04-01", "Widgetco quarterly revenue falls", "Widgetco sold fewer widgets.", entities=["ticker:WIDG"]),
        _doc("d-old", "2019-01-10", "Sprocket Inc opens plant", "Sprockets for everyone."),
        _doc("d-restated", "2020-06-01", "Widgetco revenue for Q1 revised", "Widgetco revises revenue.", source="edgar", restates="d-on"),
    ]
    # many strong matches after the cutoff, a few weaker ones before it
    for i in range(30):
        rows.append(_doc(f"late-{i:02d}", "2021-05-01", f"Gizmo gizmo gizmo report {i}", "Gizmo gizmo."))
    for i in range(4):
        rows.append(_doc(f"early-{i}", f"2018-0{i + 1}-15", f"Gizmo note {i}", "A long note that mentions many other things at length."))
    return pd.DataFrame(rows, columns=CORPUS_COLUMNS)


@pytest.fixture(scope="module")
def bm25(corpus) -> BM25Search:
    return BM25Search(corpus)


def test_as_of_excludes_the_day_after_and_keeps_the_day_itself(bm25):
    ids = [h.doc_id for h in bm25.search("Widgetco revenue", k=5, as_of=dt.date(2020, 3, 31))]
    assert "d-on" in ids and "d-after" not in ids and "d-restated" not in ids
    ids = [h.doc_id for h in bm25.search("Widgetco revenue", k=5, as_of="2020-03-31")]  # ISO string too
    assert ids == ["d-on"]


def test_unrestricted_returns_both(bm25):
    hits = bm25.search("Widgetco revenue", k=5)
    ids = [h.doc_id for h in hits]
    assert {"d-on", "d-after", "d-restated"} <= set(ids)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_k_is_respected_under_the_filter(bm25):
    unrestricted = bm25.search("gizmo", k=3)
    assert len(unrestricted) == 3 and all(h.doc_id.startswith("late-") for h in unrestricted)
    filtered = bm25.search("gizmo", k=3, as_of="2020-01-01")
    assert len(filtered) == 3 and all(h.doc_id.startswith("early-") for h in filtered)
    assert all(h.published_at <= "2020-01-01" for h in filtered)
    assert len(bm25.search("gizmo", k=10, as_of="2020-01-01")) == 4  # only 4 match before the day
    assert bm25.search("gizmo", k=3, as_of="2000-01-01") == []  # nothing that early


def test_search_split_gives_the_best_hits_on_each_side_of_the_day(bm25):
    before, after = bm25.search_split("gizmo", "2020-01-01", k=3)
    assert len(before) == 3 and all(h.doc_id.startswith("early-") for h in before)
    assert len(after) == 3 and all(h.doc_id.startswith("late-") for h in after)
    # the same hits and scores as the filtered search, and the unfiltered one past the day
    assert [h.doc_id for h in before] == [h.doc_id for h in bm25.search("gizmo", k=3, as_of="2020-01-01")]
    assert [h.score for h in after] == [h.score for h in bm25.search("gizmo", k=3)]
    before, after = bm25.search_split("Widgetco revenue", dt.date(2020, 3, 31), k=5)
    assert [h.doc_id for h in before] == ["d-on"] and {h.doc_id for h in after} == {"d-after", "d-restated"}
    assert bm25.search_split("", "2020-01-01") == ([], []) and bm25.search_split("the of", "2020-01-01") == ([], [])
    with pytest.raises(ValueError, match="not a date"):
        bm25.search_split("gizmo", "soon")


def test_document_frequency_and_source_coverage(bm25):
    assert bm25.doc_freq(["gizmo", "Widgetco", "unheardofword"]) == [34, 3, 0]
    first = bm25.source_first_days()
    assert first == {"reuters": "2018-01-15", "edgar": "2020-06-01"}
    # the 50% quantile of reuters' 37 documents falls among the 2021 reports
    assert bm25.source_first_days(0.5)["reuters"] == "2021-05-01"


def test_docs_between_counts_each_source_sets_documents_in_a_day_range(bm25, corpus):
    def brute(sources, start, end):
        c = corpus[corpus["source"].isin(sources)]
        return int(((c["published_at"] >= start) & (c["published_at"] <= end)).sum())

    ranges = [("2018-01-01", "2018-12-31"), ("2020-03-31", "2020-03-31"), ("2020-04-01", "9999-12-31"),
              ("2019-01-11", "2020-03-30"), ("2021-05-02", "2030-01-01"), ("2020-01-01", "2019-01-01")]
    for sources in (["reuters"], ["edgar"], ["reuters", "edgar"], ["nosuch"]):
        for start, end in ranges:
            assert bm25.docs_between(sources, start, end) == brute(sources, start, end), (sources, start, end)
    assert bm25.docs_between(["reuters"], "2020-03-31", "2020-04-01") == 2  # both ends inclusive
    assert bm25.docs_between(("edgar", "reuters"), "0000-01-01", "9999-12-31") == len(corpus)  # same set, any order


def test_hit_fields(bm25):
    (hit,) = bm25.search("revised", k=1)
    assert isinstance(hit, SearchHit)
    assert hit.doc_id == "d-restated" and hit.restates == "d-on" and hit.source == "edgar"
    assert hit.published_at == "2020-06-01" and hit.snippet == "Widgetco revises revenue." and hit.score > 0
    (on,) = bm25.search("rises", k=1)
    assert on.entities == ("ticker:WIDG",) and on.restates is None


def test_empty_stopword_and_foreign_queries(bm25):
    assert bm25.search("") == [] and bm25.search("   ") == []
    assert bm25.search("the of and") == []  # stopwords only
    assert bm25.search("Правительство Китая") == []  # nothing shared with the corpus
    assert [h.doc_id for h in bm25.search("Umsatz von Sprocket", k=2)] == ["d-old"]  # shares one word
    with pytest.raises(ValueError):
        bm25.search("gizmo", k=0)
    with pytest.raises(ValueError, match="not a date"):
        bm25.search("gizmo", as_of="March 2020")


def test_save_load_round_trip(bm25, tmp_path):
    bm25.save(tmp_path / "idx")
    loaded = BM25Search.load(tmp_path / "idx")
    assert loaded.n_docs == bm25.n_docs
    for q, a in [("Widgetco revenue", None), ("gizmo", "2020-01-01"), ("revised", None)]:
        assert loaded.search(q, k=5, as_of=a) == bm25.search(q, k=5, as_of=a)
    mapped = BM25Search.load(tmp_path / "idx", mmap=True)
    assert mapped.search("gizmo", k=2) == bm25.search("gizmo", k=2)
    with pytest.raises(SearchError, match="not a saved index"):
        BM25Search.load(tmp_path)


def test_bad_corpus(corpus):
    with pytest.raises(SearchError, match="missing required column"):
        BM25Search(corpus.drop(columns=["title"]))
    with pytest.raises(SearchError, match="repeats"):
        BM25Search(pd.concat([corpus, corpus.head(1)]))
    bad = corpus.copy()
    bad.loc[0, "published_at"] = "sometime"
    s = BM25Search(bad)
    assert s.dropped_bad_date == 1 and s.n_docs == len(corpus) - 1
    empty = BM25Search(corpus.head(0))
    assert empty.search("gizmo") == []


def test_backends_satisfy_the_protocol(bm25, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k")
    assert isinstance(bm25, SearchBackend) and isinstance(LiveSearch(KEY_ENV), SearchBackend)


# -- hosted search ------------------------------------------------------------------------------

ANSWER = {
    "id": "abc",
    "results": [
        {"title": "Widgetco beats", "url": "https://news.example.com/widgetco", "snippet": "Widgetco did well.", "date": "2020-03-30", "last_updated": "2020-04-02"},
        {"title": "Widgetco outlook", "url": "https://blog.example.org/outlook", "snippet": "Outlook.", "date": None},
        {"title": "Widgetco later", "url": "https://news.example.com/later", "snippet": "Leaked.", "date": "2020-04-05"},
    ],
}


@pytest.fixture
def live(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sekret-key")
    return LiveSearch(KEY_ENV, session=requests.Session())


@responses.activate
def test_live_request_carries_date_filter_and_key(live):
    responses.post(
        PERPLEXITY_SEARCH_URL,
        json=ANSWER,
        match=[
            matchers.json_params_matcher({"query": "Widgetco earnings 2020", "max_results": 5, "search_before_date_filter": "03/31/2020"}),
            matchers.header_matcher({"Authorization": "Bearer sekret-key"}),
        ],
    )
    hits = live.search("Widgetco earnings 2020", k=5, as_of=dt.date(2020, 3, 31))
    assert [h.doc_id for h in hits] == ["https://news.example.com/widgetco", "https://blog.example.org/outlook"]
    assert hits[0].published_at == "2020-03-30" and hits[0].source == "news.example.com" and hits[0].score == 1.0
    assert hits[1].published_at == "" and hits[1].score == 0.5
    assert live.dropped_after_as_of == 1  # the result dated after the as-of day is dropped client-side


@responses.activate
def test_live_unrestricted_has_no_filter(live):
    responses.post(PERPLEXITY_SEARCH_URL, json=ANSWER, match=[matchers.json_params_matcher({"query": "Widgetco", "max_results": 2})])
    hits = live.search("Widgetco", k=2)
    assert len(hits) == 2


@responses.activate
def test_live_server_error_raises_search_error(live):
    responses.post(PERPLEXITY_SEARCH_URL, status=500, body="upstream exploded")
    with pytest.raises(SearchError, match="HTTP 500"):
        live.search("Widgetco", k=3, as_of="2020-03-31")


@responses.activate
def test_live_bad_key_and_bad_answer(live):
    responses.post(PERPLEXITY_SEARCH_URL, status=401, json={"error": "unauthorized"})
    with pytest.raises(SearchError, match=KEY_ENV):
        live.search("Widgetco")
    responses.replace(responses.POST, PERPLEXITY_SEARCH_URL, json={"unexpected": True})
    with pytest.raises(SearchError, match="without a results list"):
        live.search("Widgetco")
    responses.replace(responses.POST, PERPLEXITY_SEARCH_URL, body=requests.ConnectionError("down"))
    with pytest.raises(SearchError, match="failed"):
        live.search("Widgetco")


@responses.activate
def test_live_empty_query_makes_no_request(live):
    assert live.search("  ") == []
    assert len(responses.calls) == 0


def test_live_missing_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(SearchError, match=KEY_ENV):
        LiveSearch(KEY_ENV)


def test_validity_index_from_table():
    table = pd.DataFrame(
        {"entity": ["ticker:AAA", "ticker:AAA"], "valid_from": ["2001-01-02", "2015-06-01"], "valid_to": ["2010-01-04", None], "source": "sp500_membership"}
    )
    v = validity_index(table)
    assert "ticker:AAA" in v and len(v) == 1
    assert v.is_valid("ticker:AAA", dt.date(2001, 1, 2)) and not v.is_valid("ticker:AAA", "2010-01-04")
    assert v.is_valid("ticker:AAA", pd.Timestamp("2020-01-01")) and v.is_valid("ticker:ZZZ", "1990-01-01")
    assert v.invalid(["ticker:AAA", "ticker:ZZZ", "ticker:AAA"], "2012-01-01") == ["ticker:AAA"]
    with pytest.raises(ValueError, match="missing required column"):
        validity_index(pd.DataFrame({"entity": []}))


def test_validity_window_open_at_the_start_and_the_removal_day():
    """Only a removal day known: valid before it; removed on day d means not valid at a cutoff of d."""
    v = validity_index(pd.DataFrame({"entity": ["ticker:OLD", "ticker:NEW", "ticker:ANY"],
                                     "valid_from": [None, "2020-03-02", None], "valid_to": ["2019-11-05", None, None]}))
    assert v.is_valid("ticker:OLD", "1950-01-01") and v.is_valid("ticker:OLD", "2019-11-04")
    assert not v.is_valid("ticker:OLD", "2019-11-05") and not v.is_valid("ticker:OLD", "2020-01-01")
    assert not v.is_valid("ticker:NEW", "2020-03-01") and v.is_valid("ticker:NEW", "2020-03-02")  # added on d: valid at d
    assert "ticker:ANY" in v and v.is_valid("ticker:ANY", "1900-01-01")  # tracked, no bounds
    assert v.spells("ticker:OLD") == [(None, "2019-11-05")]
    with pytest.raises(ValueError, match="ticker:BAD.*not a date"):
        validity_index(pd.DataFrame({"entity": ["ticker:BAD"], "valid_from": [None], "valid_to": ["soon"]}))


def test_unsorted_postings_are_sorted_before_prefix_filtering(corpus):
    import numpy as np

    from anachron.retrieval.search import _sort_postings

    s = BM25Search(corpus)
    expected = s.search("gizmo", k=3, as_of="2020-01-01")
    sc = s.retriever.scores
    for t in range(len(sc["indptr"]) - 1):  # reverse every token's postings
        lo, hi = sc["indptr"][t], sc["indptr"][t + 1]
        sc["indices"][lo:hi] = sc["indices"][lo:hi][::-1].copy()
        sc["data"][lo:hi] = sc["data"][lo:hi][::-1].copy()
    _sort_postings(s.retriever)
    idx = s.retriever.scores["indices"]
    assert all(np.all(np.diff(idx[a:b]) > 0) for a, b in zip(sc["indptr"][:-1], sc["indptr"][1:]))
    assert s.search("gizmo", k=3, as_of="2020-01-01") == expected


def test_ranked_split_scores_the_later_side_only_when_asked(bm25, monkeypatch):
    ranges = []
    real = BM25Search._scores
    monkeypatch.setattr(BM25Search, "_scores", lambda self, ids, lo, hi: ranges.append((lo, hi)) or real(self, ids, lo, hi))
    before, later = bm25.ranked_split("gizmo", "2020-01-01", k=3)
    assert len(ranges) == 1 and ranges[0][0] == 0  # the documents on or before the day only
    cut = ranges[0][1]
    assert (before, later()) == bm25.search_split("gizmo", "2020-01-01", k=3)
    assert ranges[1] == (cut, bm25.n_docs)
    assert bm25.ranked_split("the of", "2020-01-01")[1]() == []


def test_scores_of_a_range_are_the_whole_index_scores_of_its_documents(bm25):
    import numpy as np

    ids = bm25.query_token_ids("gizmo Widgetco revenue gizmo")
    whole = bm25._scores(ids, 0, bm25.n_docs)
    for lo, hi in [(0, 1), (1, bm25.n_docs - 1), (2, 2), (bm25.n_docs - 1, bm25.n_docs)]:
        assert np.array_equal(bm25._scores(ids, lo, hi), whole[lo:hi])


def test_equal_scores_at_the_kth_place_go_to_the_earlier_document():
    import numpy as np

    from anachron.retrieval.search import _select

    docs = np.array([3, 5, 8, 9, 12])
    scores = np.array([1.0, 2.0, 1.0, 0.0, 1.0], dtype=np.float32)
    assert _select(docs, scores, 2) == [(5, 2.0), (3, 1.0)]
    assert _select(docs, scores, 3) == [(5, 2.0), (3, 1.0), (8, 1.0)]
    assert _select(docs, scores, 9) == [(5, 2.0), (3, 1.0), (8, 1.0), (12, 1.0)]  # zero scores never
    docs = np.arange(40)
    scores = np.ones(40, dtype=np.float32)
    assert [d for d, _ in _select(docs, scores, 5)] == [0, 1, 2, 3, 4]
