"""SEC EDGAR companyfacts: point-in-time revisions, as_of, snapshot fixture and replayed HTTP.

The fixture tests/fixtures/edgar/companyfacts/CIK0000000042.json is invented.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.edgar import (
    COLUMNS,
    COMPANYFACTS_URL,
    USER_AGENT_ENV,
    CompanyFactsReader,
    as_of,
    fetch,
    parse_companyfacts,
    restatement_links,
)

FIXTURES = Path(__file__).parent / "fixtures"
FACTS_FILE = FIXTURES / "edgar" / "companyfacts" / "CIK0000000042.json"
UA = "Anachron Test Suite tests@example.org"
Q1_10Q = "0000000042-22-000011"
K_2022 = "0000000042-23-000003"
KA_2022 = "0000000042-23-000019"
Q1_2023 = "0000000042-23-000012"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    monkeypatch.delenv(USER_AGENT_ENV, raising=False)


@pytest.fixture(scope="module")
def facts() -> pd.DataFrame:
    return CompanyFactsReader(snapshot_dir=FIXTURES).read()


def _period(df, concept, start, end):
    sel = df[(df["concept"] == concept) & (df["end"] == end)]
    sel = sel[sel["start"].isna()] if start is None else sel[sel["start"] == start]
    return sel.sort_values("revision").reset_index(drop=True)


def test_snapshot_rows_types_and_skips():
    reader = CompanyFactsReader(snapshot_dir=FIXTURES)
    df = reader.read()
    assert list(df.columns) == COLUMNS
    assert len(df) == 8
    assert reader.skipped_by_reason == {"bad_date": 1, "bad_value": 1, "duplicate_fact": 1}
    assert df["cik"].dtype == "int64" and df["val"].dtype == "float64" and df["revision"].dtype == "int64"
    assert str(df["fy"].dtype) == "Int64" and df["value_changed"].dtype == bool
    assert set(df["entity_name"]) == {"Example Widgets Corp"} and set(df["cik"]) == {42}
    assert set(df["taxonomy"]) == {"dei", "us-gaap"}
    assert set(df["unit"]) == {"USD", "shares", "USD/shares"}
    (entry,) = reader.manifest
    assert entry["origin"] == f"snapshot:{FACTS_FILE}" and entry["sha256"] == sha256_file(FACTS_FILE)
    assert entry["rows"] == 9 and entry["cik"] == 42  # parsed rows, before the duplicate is dropped


def test_fact_reported_twice_is_a_revision_not_an_overwrite(facts):
    q1 = _period(facts, "Revenues", "2022-01-01", "2022-03-31")
    assert q1["form"].tolist() == ["10-Q", "10-K/A"]
    assert q1["val"].tolist() == [1_000_000.0, 950_000.0]  # both reports kept
    assert q1["revision"].tolist() == [0, 1]
    assert q1["first_filed"].tolist() == ["2022-05-05", "2022-05-05"]
    assert q1["value_changed"].tolist() == [False, True]
    assert pd.isna(q1.loc[0, "restates"]) and q1.loc[1, "restates"] == Q1_10Q


def test_unchanged_comparative_is_a_revision_without_restatement(facts):
    fy = _period(facts, "Revenues", "2022-01-01", "2022-12-31")
    assert fy["accn"].tolist() == [K_2022, KA_2022] and fy["revision"].tolist() == [0, 1]
    assert not fy["value_changed"].any() and fy["restates"].isna().all()
    assets = _period(facts, "Assets", None, "2022-12-31")  # an instant: no start
    assert assets["val"].tolist() == [9_000_000.0, 9_100_000.0]
    assert assets.loc[1, "restates"] == K_2022 and assets.loc[1, "form"] == "10-Q"


def test_as_of_before_and_after_the_amendment(facts):
    def q1_value(day):
        snap = as_of(facts, day)
        return _period(snap, "Revenues", "2022-01-01", "2022-03-31")

    assert q1_value("2022-05-04").empty  # not yet filed
    assert q1_value("2022-05-05")["val"].tolist() == [1_000_000.0]  # filed that day: known
    before = q1_value("2023-07-31")
    assert before["val"].tolist() == [1_000_000.0] and before["accn"].tolist() == [Q1_10Q]
    after = q1_value(pd.Timestamp("2023-08-01"))
    assert after["val"].tolist() == [950_000.0] and after["revision"].tolist() == [1]
    snap = as_of(facts, "2030-01-01")
    assert not snap.duplicated(["cik", "taxonomy", "concept", "unit", "start", "end"]).any()
    assert len(snap) == 5  # one row per period: shares, Q1 and FY revenue, assets, EPS
    with pytest.raises(ValueError, match="not a date"):
        as_of(facts, "someday")


def test_restatement_links(facts):
    links = restatement_links(facts)
    assert sorted(links["accn"]) == sorted([KA_2022, Q1_2023])
    rev = links[links["concept"] == "Revenues"].iloc[0]
    assert rev["restates"] == Q1_10Q and rev["previous_val"] == 1_000_000.0 and rev["val"] == 950_000.0


def test_missing_key_names_file_and_key(tmp_path):
    obj = json.loads(FACTS_FILE.read_text())
    del obj["facts"]["us-gaap"]["Assets"]["units"]["USD"][0]["filed"]
    with pytest.raises(SourceError, match=r"broken\.json \(us-gaap:Assets\) unit USD: a fact lacks required key\(s\) filed"):
        parse_companyfacts(json.dumps(obj), "broken.json")
    with pytest.raises(SourceError, match=r"nofacts\.json: missing required key\(s\) facts"):
        parse_companyfacts(b'{"cik": 42, "entityName": "X"}', "nofacts.json")


def test_snapshot_unknown_cik_is_an_error():
    with pytest.raises(SourceError, match=r"CIK 43.*CIK0000000043\.json"):
        CompanyFactsReader([43], snapshot_dir=FIXTURES).read()
    assert len(CompanyFactsReader(["CIK0000000042"], snapshot_dir=FIXTURES).read()) == 8


def test_live_replayed_with_user_agent_matches_snapshot():
    url = COMPANYFACTS_URL.format(cik=42)
    assert url == "https://data.sec.gov/api/xbrl/companyfacts/CIK0000000042.json"
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET,
            url,
            body=FACTS_FILE.read_bytes(),
            content_type="application/json",
            match=[matchers.header_matcher({"User-Agent": UA})],
        )
        live, manifest = fetch(ciks=[42], session=requests.Session(), user_agent=UA, min_interval=0)
    pd.testing.assert_frame_equal(live, CompanyFactsReader(snapshot_dir=FIXTURES).read())
    assert manifest["sources"][0]["origin"] == url
    assert manifest["sources"][0]["sha256"] == sha256_file(FACTS_FILE)
    assert manifest["value_changing_revisions"] == 2 and manifest["revisions"] == 3 and manifest["rows"] == 8
    assert UA not in json.dumps(manifest)  # the contact is not recorded


def test_live_user_agent_from_environment(monkeypatch):
    monkeypatch.setenv(USER_AGENT_ENV, UA)
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, COMPANYFACTS_URL.format(cik=42), body=FACTS_FILE.read_bytes(),
                 match=[matchers.header_matcher({"User-Agent": UA})])
        assert len(CompanyFactsReader([42], session=requests.Session(), min_interval=0).read()) == 8


def test_live_without_contact_user_agent_fails_before_any_request():
    with responses.RequestsMock() as rsps:  # any request would fail: none is registered
        with pytest.raises(SourceError, match=USER_AGENT_ENV):
            CompanyFactsReader([42], session=requests.Session()).read()
        with pytest.raises(SourceError, match="contact e-mail"):
            CompanyFactsReader([42], session=requests.Session(), user_agent="anachron").read()
        assert len(rsps.calls) == 0


def test_live_unknown_cik_and_refusal():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, COMPANYFACTS_URL.format(cik=99), status=404)
        with pytest.raises(SourceError, match="CIK 99.*404"):
            CompanyFactsReader([99], session=requests.Session(), user_agent=UA, min_interval=0).read()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, COMPANYFACTS_URL.format(cik=42), status=403)
        with pytest.raises(SourceError, match="User-Agent"):
            CompanyFactsReader([42], session=requests.Session(), user_agent=UA, min_interval=0).read()


def test_bad_cik_rejected():
    with pytest.raises(ValueError, match="CIK"):
        CompanyFactsReader(["AAPL"])
