"""Dated news headlines: each publisher's date format, exclusions by reason, live mode refused.

Fixtures under tests/fixtures/news/news/ are invented headlines laid out like the real files.
"""

from __future__ import annotations


import pytest

from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.news import NewsReader, fetch
from anachron.sources.news.headlines import NEWS_COLUMNS, news_doc_id
from anachron.sources.news.publishers import LAYOUTS, source_of_file

from conftest import TESTS

SNAP = TESTS / "fixtures" / "news"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


@pytest.fixture(scope="module")
def fetched():
    return fetch(snapshot_dir=SNAP)


def _day(df, source, title):
    sel = df[(df["source"] == source) & (df["title"] == title)]
    assert len(sel) == 1, (source, title, df[df["source"] == source]["title"].tolist())
    return sel.iloc[0]["published_at"]


def test_columns_sorting_and_counts(fetched):
    df, manifest = fetched
    assert list(df.columns) == NEWS_COLUMNS
    assert len(df) == 16
    assert df["published_at"].tolist() == sorted(df["published_at"])
    assert manifest["rows_by_source"] == {"analyst_ratings": 3, "cnbc": 3, "guardian": 2, "reddit": 2, "reuters": 3, "wsj": 3}
    assert manifest["skipped_by_reason"] == {"duplicate": 1, "missing_date": 2, "unknown_file": 1, "unparseable_date": 4}
    by_file = {e["publisher"]: e for e in manifest["sources"]}
    assert by_file["reuters"]["skipped_by_reason"] == {"unparseable_date": 1}
    assert by_file["guardian"]["skipped_by_reason"] == {"unparseable_date": 1}
    assert by_file["cnbc"]["skipped_by_reason"] == {"missing_date": 1}
    assert by_file["analyst_ratings"]["skipped_by_reason"] == {"missing_date": 1, "unparseable_date": 1}
    assert by_file["reuters"]["origin"].startswith("snapshot:") and len(by_file["reuters"]["sha256"]) == 64
    assert by_file["wsj"]["first_day"] == "1999-06-26" and by_file["wsj"]["last_day"] == "2015-10-06"


def test_reuters_and_guardian_formats(fetched):
    df, _ = fetched
    assert _day(df, "reuters", "Widgetco opens a new plant in Ohio") == "2020-07-18"
    assert _day(df, "reuters", "Sprocket Inc names new chief executive") == "2018-03-20"
    assert _day(df, "guardian", "Fictional bank posts record profit") == "2020-07-18"
    # a quoted headline over several lines: whitespace collapsed
    assert _day(df, "guardian", "The Week in Widgets why sprockets are back") == "2017-12-17"
    assert "Headline whose date has no year" not in set(df["title"])


def test_cnbc_format_long_short_and_sept_months_with_description(fetched):
    df, _ = fetched
    assert _day(df, "cnbc", "Cramer likes Widgetco") == "2020-07-17"
    assert _day(df, "cnbc", "Sprocket earnings beat") == "2020-02-28"
    assert _day(df, "cnbc", "Gadget Corp cuts jobs") == "2019-09-30"
    row = df[df["title"] == "Cramer likes Widgetco"].iloc[0]
    assert row["text"] == "The host likes the made-up widget maker." and row["ticker"] is None


def test_wsj_two_digit_years_and_html_entities(fetched):
    df, _ = fetched
    assert _day(df, "wsj", "Widget Prices Climb") == "2012-01-26"
    assert _day(df, "wsj", "Sprocket Maker Merges With Rival") == "1999-06-26"  # 99 -> 1999, not 2099
    assert _day(df, "wsj", "Widget Télécom Expands") == "2015-10-06"  # "&eacute" without ";" decoded, trailing space gone


def test_analyst_ratings_local_day_and_ticker(fetched):
    df, _ = fetched
    row = df[df["title"] == "Exampleco Shares Halted"].iloc[0]
    assert row["published_at"] == "2019-01-02"  # 23:30 -05:00 is already Jan 3 in UTC; the local day counts
    assert row["ticker"] == "EXCO"  # upper-cased
    assert df[df["title"] == "Brk Class B Initiated"].iloc[0]["ticker"] == "BRK.B"  # S&P spelling
    assert not df["title"].str.startswith("2011-07-20").any()  # the broken continuation line is excluded


def test_reddit_published_and_timestamp_fallback(fetched):
    df, _ = fetched
    assert _day(df, "reddit", "Invented satellite story") == "2021-11-16"
    # 1637031600 = 2021-11-16 03:00 UTC = 2021-11-15 22:00 in New York
    assert _day(df, "reddit", "Story dated only by its timestamp") == "2021-11-15"
    assert "Story without any usable date" not in set(df["title"])


def test_subset_of_sources_and_unknown_source():
    df = NewsReader(["wsj"], snapshot_dir=SNAP).read()
    assert set(df["source"]) == {"wsj"} and len(df) == 3
    with pytest.raises(SourceError, match="unknown source"):
        NewsReader(["bloomberg"], snapshot_dir=SNAP)


def test_live_mode_is_refused_with_a_hint():
    with pytest.raises(SourceError, match=r"snapshot.*news/\*\.csv.*LiveSearch"):
        fetch()


def test_missing_column_names_file_and_column(tmp_path):
    (tmp_path / "news").mkdir()
    (tmp_path / "news" / "reuters_bad.csv").write_text("When,Headlines\nJul 18 2020,x\n")
    with pytest.raises(SourceError, match=r"reuters_bad\.csv: missing required column\(s\) Time"):
        fetch(snapshot_dir=tmp_path)


def test_helpers():
    assert source_of_file("analyst_ratings_processed_first10k.csv") == "analyst_ratings"
    assert source_of_file("mystery.csv") is None
    assert set(LAYOUTS) == {"reuters", "guardian", "cnbc", "wsj", "analyst_ratings", "reddit"}
    assert news_doc_id("wsj", "2012-01-26", "A") == news_doc_id("wsj", "2012-01-26", "A") != news_doc_id("wsj", "2012-01-27", "A")
