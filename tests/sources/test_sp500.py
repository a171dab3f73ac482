"""S&P 500 membership, changes and GICS sectors: snapshot fixtures and replayed HTTP.

Fixtures under tests/fixtures/snapshots/sp500 and tests/fixtures/wikipedia are invented.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError, read_csv_checked
from anachron.sources.index_membership import members_as_of
from anachron.sources.sp500 import (
    CHANGES_URL,
    MEMBERSHIP_URL,
    WIKIPEDIA_API_URL,
    GICSSectorReader,
    SP500ChangesReader,
    SP500MembershipReader,
    changes_long,
    sector_as_of,
)

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots"
SP500 = SNAPSHOTS / "sp500"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


@pytest.fixture
def spells() -> pd.DataFrame:
    return SP500MembershipReader(snapshot_dir=SNAPSHOTS).read()


@pytest.fixture
def sectors() -> pd.DataFrame:
    return GICSSectorReader(snapshot_dir=SNAPSHOTS).read()


# -- membership ---------------------------------------------------------------------------


def test_membership_snapshot_types_and_manifest():
    reader = SP500MembershipReader(snapshot_dir=SNAPSHOTS)
    df = reader.read()
    assert list(df.columns) == ["ticker", "start_date", "end_date"]
    assert df["start_date"].dtype == "datetime64[ns]" and df["end_date"].dtype == "datetime64[ns]"
    fff = df[df["ticker"] == "FFF"]
    assert len(fff) == 2 and fff["end_date"].isna().sum() == 1  # two spells, second still open
    assert df.loc[df["ticker"] == "AAA", "end_date"].isna().all()
    (entry,) = reader.manifest
    path = SP500 / "sp500_ticker_start_end.csv"
    assert entry["origin"] == f"snapshot:{path}" and entry["sha256"] == sha256_file(path)
    assert entry["rows"] == 10


def test_membership_live_replayed_matches_snapshot():
    body = (SP500 / "sp500_ticker_start_end.csv").read_bytes()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, MEMBERSHIP_URL, body=body, content_type="text/plain")
        reader = SP500MembershipReader(session=requests.Session())
        live = reader.read()
    assert MEMBERSHIP_URL.startswith("https://raw.githubusercontent.com/fja05680/sp500/")
    pd.testing.assert_frame_equal(live, SP500MembershipReader(snapshot_dir=SNAPSHOTS).read())
    assert reader.manifest[0]["origin"] == MEMBERSHIP_URL


def test_membership_live_http_error_points_at_snapshot():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, MEMBERSHIP_URL, status=503)
        with pytest.raises(SourceError) as err:
            SP500MembershipReader(session=requests.Session()).read()
    msg = str(err.value)
    assert "503" in msg and "snapshot_dir" in msg and "sp500/sp500_ticker_start_end.csv" in msg


def test_membership_missing_column_names_file_and_column(tmp_path):
    (tmp_path / "sp500").mkdir()
    bad = tmp_path / "sp500" / "sp500_ticker_start_end.csv"
    bad.write_text("ticker,start_date\nAAA,2010-01-04\n")
    with pytest.raises(SourceError) as err:
        SP500MembershipReader(snapshot_dir=tmp_path).read()
    assert str(bad) in str(err.value) and "end_date" in str(err.value)


def test_members_as_of_is_point_in_time(spells):
    members = members_as_of(spells, "2019-11-30")
    assert "CCC" not in members  # added after the cutoff
    assert "DDD" not in members  # removed before the cutoff
    assert "EEE" in members  # removed after the cutoff: still a member then (survivorship-free)
    assert "GGG" in members  # added on the day
    assert "HHH" not in members  # removed on the day
    assert "FFF" in members  # second spell
    assert members == sorted(members)
    assert members == ["AAA", "BBB.B", "EEE", "FFF", "GGG", "ZZZ"]
    assert "FFF" not in members_as_of(spells, "2016-06-01")  # gap between spells
    assert "CCC" in members_as_of(spells, pd.Timestamp("2019-12-16"))


def test_changes_reader_and_long_form():
    reader = SP500ChangesReader(snapshot_dir=SNAPSHOTS)
    df = reader.read()
    assert list(df.columns) == ["date", "add", "remove"]
    assert df["date"].dtype == "datetime64[ns]"
    assert df.loc[2, "add"] == "CCC,RRR" and df.loc[3, "add"] == ""
    long = changes_long(df)
    assert len(long) == 9
    assert set(long.loc[long["date"] == "2019-12-16", "ticker"]) == {"CCC", "RRR", "SSS", "TTT"}
    assert long.loc[long["ticker"] == "EEE", "action"].item() == "remove"
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, CHANGES_URL, body=(SP500 / "sp500_changes_since_2019.csv").read_bytes())
        live = SP500ChangesReader(session=requests.Session()).read()
    pd.testing.assert_frame_equal(live, df)


# -- GICS sectors ---------------------------------------------------------------------------


def test_gics_snapshots_normalise_column_variants(sectors):
    assert list(sectors.columns) == ["as_of", "ticker", "name", "sector"]
    assert sectors["as_of"].dtype == "datetime64[ns]"
    dates = sorted(sectors["as_of"].dt.strftime("%Y-%m-%d").unique())
    assert dates == ["2019-06-01", "2020-04-20", "2021-01-15"]  # incl. constituents_latest_<date>
    newer = sectors[sectors["as_of"] == "2021-01-15"].set_index("ticker")  # Symbol,Security,GICS Sector,...
    assert newer.loc["CCC", "sector"] == "Materials" and newer.loc["AAA", "name"] == "Alpha Test Corp."
    older = sectors[sectors["as_of"] == "2019-06-01"].set_index("ticker")  # Symbol,Name,Sector
    assert older.loc["FFF", "sector"] == "Energy" and older.loc["DDD", "name"] == "Delta Power"


def test_sector_as_of_rules(sectors):
    got = sector_as_of(sectors, ["AAA", "FFF", "GGG", "ZZZ", "BBB-B"], "2019-11-30").set_index("ticker")
    assert list(got.columns) == ["name", "sector", "sector_as_of", "sector_rule"]
    assert got.loc["AAA", "sector_rule"] == "latest_at_or_before"
    assert got.loc["AAA", "sector_as_of"] == pd.Timestamp("2019-06-01")
    # FFF moved Energy -> Utilities in a later list: as of 2019-11-30 it is still Energy
    assert got.loc["FFF", "sector"] == "Energy"
    # GGG is not in any list at or before the date: nearest later list, rule recorded
    assert (got.loc["GGG", "sector"], got.loc["GGG", "sector_rule"]) == ("Health Care", "nearest_after")
    assert got.loc["GGG", "sector_as_of"] == pd.Timestamp("2020-04-20")
    # in no list at all: NaN sector for the caller to exclude
    assert pd.isna(got.loc["ZZZ", "sector"]) and got.loc["ZZZ", "sector_rule"] == "missing"
    assert pd.isna(got.loc["ZZZ", "sector_as_of"])
    assert got.loc["BBB.B", "sector"] == "Financials"  # Yahoo spelling normalised

    later = sector_as_of(sectors, ["FFF", "DDD"], "2020-06-01").set_index("ticker")
    assert later.loc["FFF", "sector"] == "Utilities"
    # DDD left before the latest list; the nearest (older) list that has it is used
    assert (later.loc["DDD", "sector"], later.loc["DDD", "sector_rule"]) == ("Utilities", "nearest_before")

    before_all = sector_as_of(sectors, ["AAA"], "2019-01-01")
    assert before_all.loc[0, "sector_rule"] == "nearest_after"


def test_gics_missing_sector_column_names_file_and_column(tmp_path):
    (tmp_path / "sp500").mkdir()
    bad = tmp_path / "sp500" / "constituents_2020-01-01.csv"
    bad.write_text("Symbol,Name\nAAA,Alpha\n")
    with pytest.raises(SourceError) as err:
        GICSSectorReader(snapshot_dir=tmp_path).read()
    assert str(bad) in str(err.value) and "GICS Sector" in str(err.value)


def test_read_csv_checked_reports_all_missing_columns(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(SourceError) as err:
        read_csv_checked(path, ["a", "c", "d"])
    assert str(path) in str(err.value) and "c, d" in str(err.value)
    with pytest.raises(SourceError, match="not found"):
        read_csv_checked(tmp_path / "absent.csv", ["a"])


def test_gics_live_needs_dates():
    with pytest.raises(SourceError, match="dates"):
        GICSSectorReader(session=requests.Session()).read()


def test_wikipedia_revision_fetch_replayed():
    wiki = FIXTURES / "wikipedia"
    query = json.loads((wiki / "query_revisions_2019-11-30.json").read_text())
    parsed = json.loads((wiki / "parse_928000111.json").read_text())
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET,
            WIKIPEDIA_API_URL,
            json=query,
            match=[matchers.query_param_matcher(
                {"action": "query", "prop": "revisions", "titles": "List of S&P 500 companies", "rvlimit": "1",
                 "rvdir": "older", "rvstart": "2019-11-30T23:59:59Z", "rvprop": "ids|timestamp",
                 "format": "json", "formatversion": "2"})],
        )
        rsps.add(
            responses.GET,
            WIKIPEDIA_API_URL,
            json=parsed,
            match=[matchers.query_param_matcher(
                {"action": "parse", "oldid": "928000111", "prop": "text", "format": "json", "formatversion": "2"})],
        )
        reader = GICSSectorReader(session=requests.Session(), dates=["2019-11-30"])
        df = reader.read()
    assert list(df.columns) == ["as_of", "ticker", "name", "sector"]
    assert df["ticker"].tolist() == ["AAA", "BBB.B", "GGG"]  # first table only
    assert df.set_index("ticker").loc["GGG", "sector"] == "Health Care"
    assert (df["as_of"] == pd.Timestamp("2019-11-30")).all()
    (entry,) = reader.manifest
    assert entry["revid"] == 928000111 and entry["revision_timestamp"] == "2019-11-29T18:04:11Z"
    assert entry["origin"].endswith("oldid=928000111") and entry["rows"] == 3
    # usable directly by sector_as_of
    assert sector_as_of(df, ["BBB.B"], "2019-12-01").loc[0, "sector_rule"] == "latest_at_or_before"


def test_wikipedia_http_error_is_source_error():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, WIKIPEDIA_API_URL, status=500)
        with pytest.raises(SourceError, match="Wikipedia"):
            GICSSectorReader(session=requests.Session()).read_as_of(["2019-11-30"])
