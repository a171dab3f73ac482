"""SCDB case-centred release: snapshot CSV, replayed release zip, outcome codes, bad rows.

tests/fixtures/snapshots/scdb/SCDB_2099_01_caseCentered_Citation.csv is invented.
"""

from __future__ import annotations

import io
import zipfile

import pytest
import requests
import responses

from anachron.io import sha256_bytes
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.scdb import SCDBCaseReader, fetch
from anachron.sources.scdb.case_csv import SCDB_COLUMNS
from anachron.sources.scdb.layout import SCDB_URL_TEMPLATE

from conftest import TESTS

SNAPSHOTS = TESTS / "fixtures" / "snapshots"
CSV = SNAPSHOTS / "scdb" / "SCDB_2099_01_caseCentered_Citation.csv"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


def test_snapshot_columns_types_and_dates():
    df, manifest = fetch(snapshot_dir=SNAPSHOTS, terms=[2019, 2020])
    assert list(df.columns) == SCDB_COLUMNS
    assert str(df["party_winning"].dtype) == "Int64" and str(df["decision_type"].dtype) == "Int64"
    alder = df.set_index("docket_key").loc["18-9001"]
    assert alder["decision_date"] == "2020-06-14"  # M/D/YYYY -> ISO
    assert alder["argument_date"] == "2020-03-02"
    assert alder["party_winning"] == 1 and alder["case_id"] == "2019-001" and alder["us_cite"] == "999 U.S. 101"
    orig = df.set_index("docket_key").loc["144-orig"]
    assert orig["docket"] == "No. 144, Orig." and orig["term"] == 2020
    rec = manifest["sources"][0]
    assert rec["origin"] == f"snapshot:{CSV}" and rec["rows"] == len(df)


def test_party_winning_unclear_and_missing_are_kept_and_counted():
    df, manifest = fetch(snapshot_dir=SNAPSHOTS, terms=[2019, 2020])
    by = df.set_index("docket_key")["party_winning"]
    assert by["18-9003"] == 2  # unclear: kept in the table, the task excludes it
    assert by.isna()["19-9004"]  # not coded
    assert manifest["outcome_counts"] == {"petitioner_won": 2, "petitioner_lost": 1, "unclear": 1, "missing": 1}


def test_bad_rows_and_duplicates_are_dropped_and_counted():
    df, manifest = fetch(snapshot_dir=SNAPSHOTS, terms=[2019, 2020])
    assert manifest["skipped_by_reason"] == {
        "bad_term": 1,
        "missing_docket": 1,
        "bad_decision_date": 1,
        "invalid_party_winning": 1,
        "duplicate_term_docket": 1,
    }
    assert len(df) == 5
    # the first of the repeated (term, docket) rows is kept
    assert df.set_index("docket_key").loc["18-9002", "case_id"] == "2019-002"
    assert "13-9999" not in set(df["docket_key"])  # other terms filtered out, not counted as bad


def test_missing_column_names_file_and_column(tmp_path):
    folder = tmp_path / "scdb"
    folder.mkdir()
    text = CSV.read_text().replace('"partyWinning"', '"partyWon"')
    bad = folder / "SCDB_2099_01_caseCentered_Citation.csv"
    bad.write_text(text)
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path)
    assert str(bad) in str(err.value) and "partyWinning" in str(err.value)


def test_no_rows_for_the_terms_is_an_error():
    with pytest.raises(SourceError, match="no case in terms"):
        fetch(snapshot_dir=SNAPSHOTS, terms=[1990])


def _zip(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, data)
    return buf.getvalue()


def test_live_release_zip_replayed_cp1252(monkeypatch):
    url = SCDB_URL_TEMPLATE.format(release="2099_01")
    # older SCDB releases are Windows-1252: a name with an accent must survive
    data = CSV.read_text().replace("CEDAR v. DOGWOOD COUNTY", "CÉDAR v. DOGWOOD COUNTY").encode("cp1252")
    body = _zip("SCDB_2099_01_caseCentered_Citation.csv", data)
    assert url == "http://scdb.wustl.edu/_brickFiles/2099_01/SCDB_2099_01_caseCentered_Citation.csv.zip"
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, url, body=body, content_type="application/zip")
        df, manifest = fetch(session=requests.Session(), release="2099_01", terms=[2019, 2020])
    assert len(df) == 5
    assert df.set_index("case_id").loc["2019-002", "case_name"] == "CÉDAR v. DOGWOOD COUNTY"
    rec = manifest["sources"][0]
    assert rec["origin"] == url and rec["sha256"] == sha256_bytes(body) and rec["zip_member"].endswith(".csv")


def test_live_not_a_zip_or_http_error_is_a_source_error():
    url = SCDB_URL_TEMPLATE.format(release="2099_01")
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, url, body=b"<html>moved</html>")
        with pytest.raises(SourceError, match="not a zip"):
            SCDBCaseReader([2019], release="2099_01", session=requests.Session()).read()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, url, status=404)
        with pytest.raises(SourceError, match="snapshot_dir"):
            SCDBCaseReader([2019], release="2099_01", session=requests.Session()).read()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, url, body=_zip("readme.txt", b"hello"))
        with pytest.raises(SourceError, match="no .csv"):
            SCDBCaseReader([2019], release="2099_01", session=requests.Session()).read()
