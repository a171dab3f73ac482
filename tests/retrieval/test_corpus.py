"""build_corpus on small invented tables: dates, exclusions, restatement links, entity validity.

EDGAR facts come from the invented tests/fixtures/edgar/companyfacts/CIK0000000042.json via the
source module; every other table is written here with made-up names and values.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from anachron.retrieval import CORPUS_COLUMNS, ENTITY_COLUMNS, build_corpus, entity_key, normalize_case_name, validity_index
from anachron.sources import edgar

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
Q1_10Q = "0000000042-22-000011"
KA_2022 = "0000000042-23-000019"
Q1_2023 = "0000000042-23-000012"


@pytest.fixture(scope="module")
def edgar_facts() -> pd.DataFrame:
    facts, _ = edgar.fetch(snapshot_dir=FIXTURES)
    return facts


def _one(corpus, **eq):
    sel = corpus
    for k, v in eq.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (eq, sel[["doc_id", "title"]])
    return sel.iloc[0]


def test_edgar_one_document_per_fact_and_filing_with_restatement_links(edgar_facts):
    corpus, _, report = build_corpus({"edgar": edgar_facts}, cik_tickers={42: "EXWD"})
    assert list(corpus.columns) == CORPUS_COLUMNS
    assert len(corpus) == len(edgar_facts) == 8
    assert corpus["doc_id"].is_unique and set(corpus["source"]) == {"edgar"}
    # published_at is the filing day
    assert sorted(corpus["published_at"]) == sorted(edgar_facts["filed"])
    # the 10-K/A's lower Q1 revenue restates the 10-Q's figure
    amended = corpus[corpus["doc_id"].str.startswith(f"edgar:{KA_2022}:") & corpus["title"].str.contains("Revenues for 2022-01-01 to 2022-03-31")]
    assert len(amended) == 1
    row = amended.iloc[0]
    assert row["kind"] == "restatement" and row["published_at"] == "2023-08-01"
    target = _one(corpus, doc_id=row["restates"])
    assert target["doc_id"].startswith(f"edgar:{Q1_10Q}:") and target["published_at"] == "2022-05-05"
    assert target["restates"] is None and target["kind"] == "fact"
    assert "revises the $1.00 million" in row["text"] and "$950,000" in row["title"]
    # the unchanged FY comparative in the same amendment is a plain fact
    fy = corpus[corpus["doc_id"].str.startswith(f"edgar:{KA_2022}:") & corpus["title"].str.contains("2022-12-31: \\$4.20 million")]
    assert len(fy) == 1 and fy.iloc[0]["restates"] is None
    # instant (balance) restated by a later 10-Q
    assets = corpus[corpus["doc_id"].str.startswith(f"edgar:{Q1_2023}:") & corpus["title"].str.contains("Assets as of 2022-12-31")]
    assert len(assets) == 1 and assets.iloc[0]["restates"] is not None
    assert report["restatement_links"] == 2 == report["edgar_restatement_links"]
    assert report["edgar_restatement_accn_mismatch"] == 0
    assert set(corpus["entities"]) == {'["ticker:EXWD"]'}
    assert report["by_kind"] == {"fact": 6, "restatement": 2}


def test_edgar_derived_q4_is_no_corpus_document(edgar_facts):
    derived = edgar_facts.iloc[[0]].assign(derived=True, accn="0000000042-99-000001", filed="2023-02-01")
    facts = pd.concat([edgar_facts.assign(derived=False), derived], ignore_index=True)
    corpus, _, _ = build_corpus({"edgar": facts}, cik_tickers={42: "EXWD"})
    assert len(corpus) == len(edgar_facts) and not corpus["doc_id"].str.contains("0000000042-99-000001").any()


def test_edgar_unknown_cik_has_no_ticker_entity(edgar_facts):
    corpus, _, _ = build_corpus({"edgar": edgar_facts})
    assert set(corpus["entities"]) == {"[]"}


def test_membership_spells_give_documents_and_validity():
    membership = pd.DataFrame(
        {
            "ticker": ["OLDC", "ZZZA", "ZZZA", "BRK-Q"],
            "start_date": pd.to_datetime(["1996-01-02", "2010-03-01", "2021-05-10", "2015-01-05"]),
            "end_date": pd.to_datetime([None, "2019-06-24", None, None]),
        }
    )
    sectors = pd.DataFrame({"as_of": ["2020-01-01"], "ticker": ["ZZZA"], "name": ["Zeta Zinc Alloys"], "sector": ["Materials"]})
    corpus, entities, report = build_corpus({"sp500_membership": membership, "sp500_sectors": sectors})
    assert list(entities.columns) == ENTITY_COLUMNS and len(entities) == 4
    join = _one(corpus, doc_id="sp500:join:ZZZA:2010-03-01")
    assert join["published_at"] == "2010-03-01" and join["kind"] == "index_join"
    assert join["title"] == "Zeta Zinc Alloys (ZZZA) joined the S&P 500 index"
    assert (join["valid_from"], join["valid_to"]) == ("2010-03-01", "2019-06-24")
    assert json.loads(join["entities"]) == ["ticker:ZZZA"]
    leave = _one(corpus, doc_id="sp500:leave:ZZZA:2019-06-24")
    assert leave["published_at"] == "2019-06-24" and leave["kind"] == "index_leave"
    rejoin = _one(corpus, doc_id="sp500:join:ZZZA:2021-05-10")
    assert rejoin["valid_to"] is None
    # the first day of the history is not a join date: a separate kind says so
    start = _one(corpus, doc_id="sp500:member:OLDC:1996-01-02")
    assert start["kind"] == "index_member_at_start" and "already" in start["text"]
    assert _one(corpus, kind="index_join", published_at="2015-01-05")["entities"] == '["ticker:BRK.Q"]'
    assert report["by_kind"] == {"index_join": 3, "index_leave": 1, "index_member_at_start": 1}
    valid = validity_index(entities)
    assert not valid.is_valid("ticker:ZZZA", "2010-02-28")  # not yet listed
    assert valid.is_valid("ticker:ZZZA", "2010-03-01")  # listed that day
    assert valid.is_valid("ticker:ZZZA", "2019-06-23")
    assert not valid.is_valid("ticker:ZZZA", "2019-06-24")  # removed that day
    assert not valid.is_valid("ticker:ZZZA", "2020-01-01")  # between spells
    assert valid.is_valid("ticker:ZZZA", "2022-01-01")  # second spell, open
    assert valid.is_valid("ticker:NEVERLISTED", "2000-01-01")  # unknown entity: always valid


def test_membership_spell_known_only_by_its_removal_day():
    membership = pd.DataFrame({"ticker": ["GONE", "NODATE", "AAA"], "start_date": [None, None, "2001-01-02"],
                               "end_date": ["2012-07-02", None, None]})
    corpus, entities, report = build_corpus({"sp500_membership": membership})
    gone = entities[entities["entity"] == "ticker:GONE"].iloc[0]
    assert gone["valid_from"] is None and gone["valid_to"] == "2012-07-02"
    assert set(corpus["doc_id"]) == {"sp500:leave:GONE:2012-07-02", "sp500:member:AAA:2001-01-02"}
    assert "ticker:NODATE" not in set(entities["entity"])  # nothing to date: excluded and counted
    valid = validity_index(entities)
    assert valid.is_valid("ticker:GONE", "2012-07-01") and not valid.is_valid("ticker:GONE", "2012-07-02")


def test_index_changes():
    changes = pd.DataFrame({"date": pd.to_datetime(["2020-03-02", "2020-04-01"]), "add": ["NEWA,NEWB", ""], "remove": ["GONE", ""]})
    corpus, _, report = build_corpus({"sp500_changes": changes})
    assert len(corpus) == 1
    doc = corpus.iloc[0]
    assert doc["published_at"] == "2020-03-02" and doc["kind"] == "index_change"
    assert doc["title"] == "S&P 500 index change: added NEWA, NEWB; removed GONE"
    assert json.loads(doc["entities"]) == ["ticker:NEWA", "ticker:NEWB", "ticker:GONE"]
    assert report["excluded_by_reason"] == {"empty_change": 1}


def test_oyez_timeline_events_and_missing_dates_counted():
    cases = pd.DataFrame(
        {
            "term": [2018, 2019],
            "docket": ["18-101", "19-202"],
            "docket_key": ["18-101", "19-202"],
            "name": ["Plum v. Quince Holdings, Inc.", "Rowan v. Sorrel"],
            "petitioner": ["Anna Plum", "Ben Rowan"],
            "respondent": ["Quince Holdings, Inc.", "Carl Sorrel"],
            "question": ["Does the invented statute apply?", "Is the made-up rule valid?"],
            "lower_court": ["Court of Appeals for the Ninth Circuit", None],
            "granted_date": ["2018-10-01", "2019-11-04"],
            "argued_date": ["2019-01-15", None],
            "decided_date": ["2019-05-20", "not recorded"],
            "oyez_outcome": ["respondent", None],
        }
    )
    corpus, _, report = build_corpus({"oyez": cases})
    assert report["by_kind"] == {"case_argued": 1, "case_decided": 1, "case_granted": 2}
    assert report["excluded_by_source"] == {"oyez": {"missing_date": 1, "unparseable_date": 1}}
    decided = _one(corpus, doc_id="oyez:2018:18-101:decided")
    assert decided["published_at"] == "2019-05-20" and decided["title"] == "The Supreme Court decided Plum v. Quince Holdings, Inc."
    assert decided["text"] == "The Court ruled for the respondent, Quince Holdings, Inc."
    assert json.loads(decided["entities"]) == ["case:plum v quince holdings inc", "docket:18-101"]
    granted = _one(corpus, doc_id="oyez:2019:19-202:granted")
    assert granted["text"] == "Is the made-up rule valid?"
    assert entity_key("case", "Plum v. Quince Holdings, Inc.") == "case:plum v quince holdings inc"


def test_signings_and_unparseable_dates_counted():
    signings = pd.DataFrame(
        {
            "league": ["NBA", "NBA", "NBA"],
            "player": ["Dario Šarić-Example", "Max Invented", "Lou Madeup"],
            "signing_date": ["2019-07-06", None, "2019-13-40"],
            "team": ["Suns", "Heat", None],
            "years": pd.array([3, 1, 2], dtype="Int64"),
            "total_value": [27_000_000.0, 2_000_000.0, 5_000_000.0],
            "aav": [9_000_000.0, 2_000_000.0, 2_500_000.0],
            "re_signing": pd.array([False, True, None], dtype="boolean"),
        }
    )
    corpus, _, report = build_corpus({"nba": signings})
    assert len(corpus) == 1
    doc = corpus.iloc[0]
    assert doc["title"] == "Dario Šarić-Example signed with the Suns: 3 years, $27.00 million"
    assert doc["published_at"] == "2019-07-06" and doc["kind"] == "signing" and doc["source"] == "nba"
    assert json.loads(doc["entities"]) == ["player:dario saric example"]
    assert report["excluded_by_reason"] == {"missing_date": 1, "unparseable_date": 1}


def test_forecastbench_resolutions():
    fb = pd.DataFrame(
        {
            "question_id": ["q1", "q1", "q2", "WIDG"],
            "source": ["manifold", "manifold", "acled", "yfinance"],
            "question": [
                "Will the invented treaty be signed by 2025?",
                "Will the invented treaty be signed by 2025?",
                "Will events rise by {resolution_date} versus {forecast_due_date}?\n\nDetails follow.",
                "Will WIDG close higher on {resolution_date}?",
            ],
            "forecast_due_date": ["2024-07-21", "2024-07-21", "2024-07-21", "2024-07-21"],
            "resolution_date": ["2025-01-01", "2025-01-01", "2024-08-20", "2024-07-28"],
            "resolved": [True, True, True, False],
            "resolved_to": [1.0, 1.0, 0.0, 0.0],
        }
    )
    corpus, _, report = build_corpus({"forecastbench": fb})
    assert len(corpus) == 2
    assert report["excluded_by_reason"] == {"duplicate_doc": 1, "unresolved": 1}
    yes = _one(corpus, published_at="2025-01-01")
    assert yes["title"] == "Will the invented treaty be signed by 2025? resolved YES"
    no = _one(corpus, published_at="2024-08-20")
    assert no["title"] == "Will events rise by 2024-08-20 versus 2024-07-21? resolved NO"
    assert json.loads(no["entities"]) == ["question:q2"]


def test_monthly_price_summaries():
    days = pd.bdate_range("2020-01-01", "2020-03-10")
    px = pd.DataFrame({"ticker": "WIDG", "date": days, "close": 100.0, "adj_close": 100.0, "high": 101.0, "low": 99.0})
    px.loc[px["date"] <= "2020-01-31", ["close", "adj_close"]] = 50.0
    px.loc[px["date"] == "2020-01-31", ["close", "adj_close"]] = 80.0
    corpus, _, report = build_corpus({"prices": px})
    assert corpus["doc_id"].tolist() == ["yahoo:WIDG:2020-01", "yahoo:WIDG:2020-02"]
    jan, feb = corpus.iloc[0], corpus.iloc[1]
    assert jan["published_at"] == "2020-01-31" and jan["title"] == "WIDG closed January 2020 at $80.00"
    assert feb["published_at"] == "2020-02-28" and feb["title"] == "WIDG closed February 2020 at $100.00, month return +25.0%"
    assert "range was $99.00 to $101.00" in feb["text"]
    assert report["excluded_by_reason"] == {"partial_month": 1}  # March ends after the data


def test_news_documents_and_sorting():
    news = pd.DataFrame(
        {
            "published_at": ["2020-07-18", "2019-01-02", "18-Jul"],
            "title": ["Widgetco opens plant", "Exampleco upgraded", "No year"],
            "text": ["", "", ""],
            "source": ["reuters", "analyst_ratings", "guardian"],
            "ticker": [None, "EXCO", None],
        }
    )
    corpus, entities, report = build_corpus({"news": news})
    assert corpus["published_at"].tolist() == ["2019-01-02", "2020-07-18"]
    assert corpus["source"].tolist() == ["analyst_ratings", "reuters"]
    assert corpus["entities"].tolist() == ['["ticker:EXCO"]', "[]"]
    assert corpus["doc_id"].iloc[0].startswith("news:analyst_ratings:")
    assert report["excluded_by_source"] == {"news": {"unparseable_date": 1}}
    assert entities.empty and list(entities.columns) == ENTITY_COLUMNS
    assert report["by_source"] == {"analyst_ratings": 1, "reuters": 1}


def test_bad_tables_raise():
    with pytest.raises(ValueError, match="unknown table"):
        build_corpus({"tweets": pd.DataFrame()})
    with pytest.raises(ValueError, match="missing required column"):
        build_corpus({"nba": pd.DataFrame({"player": ["x"]})})


def test_empty_input_gives_empty_tables():
    corpus, entities, report = build_corpus({})
    assert list(corpus.columns) == CORPUS_COLUMNS and corpus.empty and entities.empty
    assert report["documents"] == 0 and report["restatement_links"] == 0


def test_normalize_case_name():
    assert normalize_case_name("Café Owners’ Ass'n v. Doe") == "cafe owners assn v doe"
    assert entity_key("ticker", "brk-b") == "ticker:BRK.B"
    assert entity_key("player", "Gary Example Jr.") == "player:gary example"
