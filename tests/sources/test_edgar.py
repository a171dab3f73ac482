"""SEC EDGAR companyfacts: point-in-time revisions, as_of, snapshot fixture and replayed HTTP.

The fixture tests/fixtures/edgar/companyfacts/CIK0000000042.json is invented.
"""

from __future__ import annotations

import json

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
    derive_q4,
    fetch,
    parse_companyfacts,
    restatement_links,
)

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
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
    with pytest.raises(SourceError, match=r"broken\.json \(us-gaap:Assets\) unit USD: a fact: missing required key\(s\) filed"):
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


# -- derived fourth quarters -------------------------------------------------------------------


def _doc(facts: dict) -> dict:
    """A companyfacts document of CIK 77 with ``facts`` as us-gaap concepts -> {unit: [facts]}."""
    return {"cik": 77, "entityName": "Quartz Corp", "facts": {"us-gaap": {c: {"label": c, "units": u} for c, u in facts.items()}}}


def _f(start, end, val, form, filed, accn, fp="FY", fy=2021):
    out = {"end": end, "val": val, "accn": accn, "fy": fy, "fp": fp, "form": form, "filed": filed}
    if start:
        out["start"] = start
    return out


K21, Q3, Q3A = "0000000077-22-000005", "0000000077-21-000031", "0000000077-21-000040"
REVENUE_2021 = [
    _f("2020-01-01", "2020-12-31", 800.0, "10-K", "2022-02-10", K21, fy=2021),  # comparative: no Q4 derived
    _f("2021-01-01", "2021-12-31", 1000.0, "10-K", "2022-02-10", K21),
    _f("2021-01-01", "2021-09-30", 700.0, "10-Q", "2021-10-28", Q3, fp="Q3"),
    _f("2021-07-01", "2021-09-30", 260.0, "10-Q", "2021-10-28", Q3, fp="Q3"),
]


def _read(tmp_path, facts: dict, **kw) -> tuple[pd.DataFrame, dict]:
    folder = tmp_path / "edgar" / "companyfacts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "CIK0000000077.json").write_text(json.dumps(_doc(facts)))
    return fetch(snapshot_dir=tmp_path, **kw)


def test_q4_is_fiscal_year_minus_nine_months_and_marked_derived(tmp_path):
    df, manifest = _read(tmp_path, {"Revenues": {"USD": REVENUE_2021}})
    q4 = df[df["derived"]]
    assert len(q4) == 1 and manifest["derived_q4"] == 1
    row = q4.iloc[0]
    assert (row["start"], row["end"], row["val"]) == ("2021-10-01", "2021-12-31", 300.0)
    # dated to the 10-K: the quarter is known only once the year is
    assert (row["form"], row["accn"], row["filed"], row["fp"], row["fy"]) == ("10-K", K21, "2022-02-10", "Q4", 2021)
    assert not df.loc[~df["derived"], "derived"].any() and len(df) == len(REVENUE_2021) + 1


def test_nine_months_as_known_when_the_10k_was_filed(tmp_path):
    amended = _f("2021-01-01", "2021-09-30", 720.0, "10-Q/A", "2021-12-01", Q3A, fp="Q3")
    late = _f("2021-01-01", "2021-09-30", 750.0, "10-Q/A", "2022-06-01", "0000000077-22-000090", fp="Q3")
    df, _ = _read(tmp_path, {"Revenues": {"USD": REVENUE_2021 + [amended, late]}})
    assert df.loc[df["derived"], "val"].tolist() == [280.0]  # 1000 - 720: the amendment after the 10-K is not known yet


def test_reported_q4_wins_over_derivation(tmp_path):
    reported = _f("2021-10-01", "2021-12-31", 301.0, "10-K", "2022-02-10", K21)
    df, manifest = _read(tmp_path, {"Revenues": {"USD": REVENUE_2021 + [reported]}})
    assert not df["derived"].any() and manifest["derived_q4"] == 0
    q4 = df[(df["start"] == "2021-10-01") & (df["end"] == "2021-12-31")]
    assert q4["val"].tolist() == [301.0]


def test_no_q4_for_instants_per_share_or_share_counts(tmp_path):
    instant = [_f(None, "2021-12-31", 5000.0, "10-K", "2022-02-10", K21), _f(None, "2021-09-30", 4800.0, "10-Q", "2021-10-28", Q3, fp="Q3")]
    eps = [_f("2021-01-01", "2021-12-31", 2.5, "10-K", "2022-02-10", K21), _f("2021-01-01", "2021-09-30", 1.8, "10-Q", "2021-10-28", Q3, fp="Q3")]
    shares = [_f("2021-01-01", "2021-12-31", 1e6, "10-K", "2022-02-10", K21), _f("2021-01-01", "2021-09-30", 1e6, "10-Q", "2021-10-28", Q3, fp="Q3")]
    df, _ = _read(tmp_path, {"Assets": {"USD": instant}, "EarningsPerShareDiluted": {"USD/shares": eps},
                             "WeightedAverageNumberOfDilutedSharesOutstanding": {"shares": shares}})
    assert not df["derived"].any()


def test_no_q4_without_a_nine_month_period_or_when_disabled(tmp_path):
    only_quarters = [r for r in REVENUE_2021 if r["start"] != "2021-01-01" or r["end"] != "2021-09-30"]
    df, _ = _read(tmp_path, {"Revenues": {"USD": only_quarters}})
    assert not df["derived"].any()
    df, manifest = _read(tmp_path, {"Revenues": {"USD": REVENUE_2021}}, derive_q4=False)
    assert not df["derived"].any() and manifest["derived_q4"] == 0


def test_derive_q4_on_a_hand_made_frame_keeps_columns():
    facts = parse_companyfacts(_doc({"NetIncomeLoss": {"USD": REVENUE_2021}}), "hand-made")
    out = derive_q4(facts)
    assert list(out.columns) == COLUMNS[:15] + ["derived"] and out["derived"].all()
    assert out[["concept", "val"]].values.tolist() == [["NetIncomeLoss", 300.0]]
    assert derive_q4(facts.iloc[0:0]).empty
