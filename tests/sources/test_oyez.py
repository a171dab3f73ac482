"""Oyez cases: snapshot documents, replayed live API, dates in the Court's time zone, winners.

The case documents under tests/fixtures/snapshots/oyez/cases are invented, in the shape of
``GET https://api.oyez.org/cases/{term}/{docket}``.
"""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.dockets import normalize_docket
from anachron.sources.html_text import html_to_text
from anachron.sources.oyez import OyezCaseReader, fetch
from anachron.sources.oyez.layout import OYEZ_API
from anachron.sources.oyez.table import CASE_COLUMNS
from anachron.sources.oyez.timeline import local_date, timeline_dates
from anachron.sources.oyez.winning_party import decide_outcome, match_winning_party

from conftest import TESTS

SNAPSHOTS = TESTS / "fixtures" / "snapshots"
CASES = SNAPSHOTS / "oyez" / "cases"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


def _utc(iso: str) -> int:
    return int(dt.datetime.fromisoformat(iso).replace(tzinfo=dt.timezone.utc).timestamp())


# -- dates ------------------------------------------------------------------------------------


def test_local_date_uses_the_courts_time_zone_not_utc():
    # 22:30 EDT on June 14 is already June 15 in UTC: the decision is dated June 14.
    ts = _utc("2020-06-15T02:30:00")
    assert dt.datetime.fromtimestamp(ts, dt.timezone.utc).date().isoformat() == "2020-06-15"
    assert local_date(ts) == "2020-06-14"
    # winter (EST, UTC-5): 04:30 UTC on Jan 14 is 23:30 on Jan 13 in Washington
    assert local_date(_utc("2020-01-14T04:30:00")) == "2020-01-13"
    # 05:30 UTC is 00:30 local: the same day in both
    assert local_date(_utc("2020-01-14T05:30:00")) == "2020-01-14"
    assert local_date(None) is None and local_date("x") is None and local_date(True) is None


def test_timeline_dates_first_date_per_event_and_null_entries():
    timeline = [
        None,
        {"event": "Granted", "dates": [_utc("2019-10-04T04:00:00")]},
        {"event": "Argued", "dates": [_utc("2020-03-03T14:00:00"), _utc("2020-03-02T14:00:00")]},
        {"event": "Decided", "dates": [_utc("2020-06-15T02:30:00")]},
        {"event": "Reargued", "dates": [_utc("2020-10-05T14:00:00")]},
    ]
    assert timeline_dates(timeline) == {
        "granted_date": "2019-10-04",
        "argued_date": "2020-03-02",
        "decided_date": "2020-06-14",
    }
    assert timeline_dates(None) == {"granted_date": None, "argued_date": None, "decided_date": None}


# -- text and names ---------------------------------------------------------------------------


def test_html_to_text_paragraphs_breaks_and_entities():
    html = "<p>Alder leased a warehouse from Birch &amp; Sons.</p>\n<p>The lease had a<br>renewal   clause; <em>refused</em>.</p>"
    assert html_to_text(html) == "Alder leased a warehouse from Birch & Sons.\n\nThe lease had a\nrenewal clause; refused."
    assert html_to_text(None) == "" and html_to_text("") == "" and html_to_text(float("nan")) == ""


@pytest.mark.parametrize(
    "raw,key",
    [
        ("17-1268", "17-1268"),
        (" 18-9001 ", "18-9001"),
        ("126 Orig", "126-orig"),
        ("141-orig", "141-orig"),
        ("No. 142, Orig.", "142-orig"),
        ("126, ORIG.", "126-orig"),
        ("22O141", "141-orig"),
        ("", None),
        (None, None),
    ],
)
def test_normalize_docket(raw, key):
    assert normalize_docket(raw) == key


@pytest.mark.parametrize(
    "winner,side",
    [
        ("Alder", "petitioner"),  # short name from the case name
        ("Birch Holdings", "respondent"),
        ("Birch Holdings, Inc. et al.", "respondent"),
        ("FWC", None),  # acronym of neither side here
        ("dismissal", None),
        ("", None),
        (None, None),
    ],
)
def test_match_winning_party(winner, side):
    assert match_winning_party(winner, "Avery Q. Alder", "Birch Holdings, Inc., et al.", "Alder v. Birch Holdings, Inc.") == side


def test_match_winning_party_acronym_and_initials():
    assert match_winning_party("FWC", "Federal Widget Commission", "Gale Grove", "Federal Widget Commission v. Gale") == "petitioner"
    assert match_winning_party("V.L.", "V.L.", "E.L., et al.", "V.L. v. E.L.") == "petitioner"
    # a name in both parties is ambiguous
    assert match_winning_party("Grove", "Grove Farms", "Grove Bank", "Grove Farms v. Grove Bank") is None


def test_decide_outcome_notes():
    args = ("Jo Juniper", "Kapok Corp.", "Juniper v. Kapok")
    assert decide_outcome(None, *args) == (None, "no_decision", None)
    assert decide_outcome([{"winning_party": None}], *args)[1] == "no_winning_party"
    assert decide_outcome([{"winning_party": "Dismissal"}], *args)[1] == "dismissed"
    assert decide_outcome([{"winning_party": "Juniper"}, {"winning_party": "Juniper"}], *args) == ("petitioner", "matched", "Juniper")
    assert decide_outcome([{"winning_party": "Juniper"}, {"winning_party": "Kapok"}], *args)[1] == "conflicting_decisions"
    assert decide_outcome([{"winning_party": "Someone Else"}], *args)[1] == "unmatched_winner"
    # consolidated cases written "A; B": the names that match must agree
    assert decide_outcome([{"winning_party": "Kapok; Other Respondent"}], *args)[0] == "respondent"


# -- snapshot ---------------------------------------------------------------------------------


def test_snapshot_read_columns_dates_and_outcomes():
    df, manifest = fetch(snapshot_dir=SNAPSHOTS, terms=[2018, 2019, 2020])
    assert list(df.columns) == CASE_COLUMNS
    assert len(df) == 8
    assert df["term"].dtype == "Int64"
    alder = df[(df["term"] == 2019) & (df["docket"] == "18-9001")].iloc[0]
    assert alder["decided_date"] == "2020-06-14"  # local day, not 2020-06-15 (UTC)
    assert alder["argued_date"] == "2020-03-02" and alder["granted_date"] == "2019-10-04"
    assert alder["oyez_outcome"] == "petitioner" and alder["oyez_outcome_note"] == "matched"
    assert alder["petitioner"] == "Avery Q. Alder" and alder["respondent"] == "Birch Holdings, Inc., et al."
    assert alder["facts"].startswith("Avery Alder leased a warehouse from Birch Holdings & Sons.\n\n")
    assert alder["question"] == "Does a renewal clause bind a successor landlord?"
    assert alder["citation"] == "999 U.S. 101"
    assert alder["lower_court"] == "United States Court of Appeals for the Ninth Circuit"
    cedar = df[df["docket"] == "18-9002"].iloc[0]
    assert cedar["decided_date"] == "2020-01-13" and cedar["oyez_outcome"] == "respondent"
    notes = df.set_index("docket_key")["oyez_outcome_note"]
    assert notes["18-9003"] == "dismissed" and notes["19-9005"] == "no_decision"
    assert notes["19-9006"] == "conflicting_decisions" and notes["19-9004"] == "matched"
    assert df.set_index("docket_key").loc["144-orig", "first_party_label"] == "Plaintiff"
    # the same docket in two terms (reargued) stays two rows here; the legal task deduplicates
    assert (df["docket_key"] == "18-9001").sum() == 2
    rec = manifest["sources"][0]
    assert rec["origin"].startswith("snapshot:") and rec["rows"] == 8 and rec["files"] == 8
    assert rec["timezone"] == "America/New_York"
    assert manifest["skipped_by_reason"] == {}


def test_snapshot_term_filter_and_env_variable(monkeypatch):
    monkeypatch.setenv(SNAPSHOT_ENV, str(SNAPSHOTS))
    df, _ = fetch(terms=[2020])
    assert set(df["term"]) == {2020} and len(df) == 4


def test_snapshot_missing_key_names_file_and_key(tmp_path):
    folder = tmp_path / "oyez" / "cases"
    folder.mkdir(parents=True)
    doc = json.loads((CASES / "2019.18-9002.json").read_text())
    del doc["docket_number"]
    bad = folder / "2019.18-9002.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path, terms=[2019])
    assert str(bad) in str(err.value) and "docket_number" in str(err.value)


def test_snapshot_rows_without_docket_are_counted(tmp_path):
    folder = tmp_path / "oyez" / "cases"
    folder.mkdir(parents=True)
    doc = json.loads((CASES / "2019.18-9002.json").read_text())
    (folder / "2019.18-9002.json").write_text(json.dumps(doc))
    doc["docket_number"] = None
    (folder / "2019.none.json").write_text(json.dumps(doc))
    df, manifest = fetch(snapshot_dir=tmp_path, terms=[2019])
    assert len(df) == 1 and manifest["skipped_by_reason"] == {"missing_docket": 1}


def test_snapshot_without_cases_is_an_error(tmp_path):
    (tmp_path / "oyez" / "cases").mkdir(parents=True)
    with pytest.raises(SourceError, match="oyez/cases"):
        fetch(snapshot_dir=tmp_path)


# -- live (replayed) ---------------------------------------------------------------------------


def test_live_list_then_case_documents_replayed():
    docs = {name: json.loads((CASES / name).read_text()) for name in ("2019.18-9001.json", "2019.18-9002.json")}
    listing = [
        {"ID": 1, "name": d["name"], "docket_number": d["docket_number"], "term": "2019", "href": d["href"]} for d in docs.values()
    ]
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET,
            f"{OYEZ_API}/cases",
            json=listing,
            match=[matchers.query_param_matcher({"filter": "term:2019", "per_page": "0"})],
        )
        for d in docs.values():
            rsps.add(responses.GET, d["href"], json=d)
        df, manifest = fetch(session=requests.Session(), terms=[2019])
    assert list(df["docket"]) == ["18-9001", "18-9002"]
    assert df.iloc[0]["decided_date"] == "2020-06-14"
    rec = manifest["sources"][0]
    assert rec["origin"].startswith(OYEZ_API) and rec["requests"] == 3 and rec["rows"] == 2


def test_live_http_error_points_at_snapshot():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{OYEZ_API}/cases", status=503)
        with pytest.raises(SourceError, match="snapshot_dir"):
            OyezCaseReader([2019], session=requests.Session()).read()


def test_reader_needs_a_term():
    with pytest.raises(ValueError):
        OyezCaseReader([])


def test_snapshot_sha_changes_with_content(tmp_path):
    folder = tmp_path / "oyez" / "cases"
    folder.mkdir(parents=True)
    src = CASES / "2019.18-9002.json"
    (folder / src.name).write_bytes(src.read_bytes())
    _, m1 = fetch(snapshot_dir=tmp_path, terms=[2019])
    (folder / src.name).write_text(src.read_text().replace("Cedar was fined", "Cedar was fined twice"))
    _, m2 = fetch(snapshot_dir=tmp_path, terms=[2019])
    assert m1["sources"][0]["sha256"] != m2["sources"][0]["sha256"]
    assert sha256_file(src)  # the fixture itself is untouched
    assert isinstance(pd.Timestamp(m1["sources"][0]["fetched_at"]), pd.Timestamp)
