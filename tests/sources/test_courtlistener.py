"""CourtListener v4: replayed search pages (cursor + 429), clusters/opinions, a PDF via pdfplumber.

The JSON recordings under tests/fixtures/courtlistener are invented, in the v4 shapes; the
opinion PDF is generated here (:func:`minimal_pdf`, plain PDF 1.4 with the Helvetica
base font) so that no binary file is kept in the repository.
"""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.http import retry_after_seconds, throttle_body_seconds, throttle_wait_seconds
from anachron.sources.courtlistener import fetch
from anachron.sources.courtlistener.client import CourtListenerClient
from anachron.sources.courtlistener.disposition import classify_disposition, disposition_outcome
from anachron.sources.courtlistener.layout import API_BASE, STORAGE_BASE
from anachron.sources.courtlistener.opinion_text import (
    TEXT_SOURCES,
    background_excerpt,
    extract_pdf_text,
    stored_opinion_text,
)
from anachron.sources.courtlistener.parties import caption_parties, split_case_name
from anachron.sources.courtlistener.precedential import PRECEDENTIAL_STATUSES, normalize_precedential_status
from anachron.sources.courtlistener.reader import NO_TOKEN_NOTE
from anachron.sources.courtlistener.table import COLUMNS

from conftest import TESTS
from pdf_fixture import minimal_pdf

FIXTURES = TESTS / "fixtures"
RECORDINGS = FIXTURES / "courtlistener"
SNAPSHOTS = FIXTURES / "snapshots"
TOKEN = "test-token-0123456789abcdef"


def opinion_pdf() -> bytes:
    """14 pages: a caption and facts, filler, the disposition on page 3, a marker on page 13."""
    caption = [
        "UNITED STATES COURT OF APPEALS",
        "FOR THE NINTH CIRCUIT",
        "MAPLE ROWE,",
        "Plaintiff-Appellant,",
        "v.",
        "QUINCE LOGISTICS, INC.,",
        "Defendant-Appellee.",
        "No. 20-55001",
        "Rowe drove for Quince Logistics for six years.",
        "The district court granted summary judgment to Quince.",
    ]
    pages = [caption, ["Rowe argues that the contract was ambiguous."] * 5]
    pages.append(["For these reasons, we REVERSE the judgment and REMAND for trial.", "REVERSED AND REMANDED."])
    pages += [[f"Page {n} discussion of the record."] for n in range(4, 13)]
    pages.append(["MARKER ON PAGE THIRTEEN"])
    pages.append(["MARKER ON PAGE FOURTEEN"])
    return minimal_pdf(pages)


def _rec(name: str) -> dict:
    return json.loads((RECORDINGS / name).read_text())


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    monkeypatch.delenv("COURTLISTENER_TOKEN", raising=False)
    monkeypatch.delenv("MY_CL_TOKEN", raising=False)


# -- PDF through pdfplumber -------------------------------------------------------------------


def test_pdf_fixture_first_twelve_pages_only():
    text = extract_pdf_text(opinion_pdf())
    assert "MAPLE ROWE," in text and "Plaintiff-Appellant," in text
    assert "REVERSED AND REMANDED." in text
    assert "Page 12 discussion" in text
    assert "THIRTEEN" not in text and "FOURTEEN" not in text


def test_pdf_text_is_capped_and_page_count_configurable():
    data = opinion_pdf()
    assert len(extract_pdf_text(data, max_chars=120)) == 120
    two = extract_pdf_text(data, max_pages=2)
    assert "Rowe argues" in two and "REVERSED" not in two
    long = minimal_pdf([["x" * 90] * 40] * 12)
    assert len(extract_pdf_text(long)) == 8000  # the default cap


def test_not_a_pdf_is_a_value_error():
    with pytest.raises(ValueError, match="not a readable PDF"):
        extract_pdf_text(b"<html>not a pdf</html>")


# -- disposition and parties -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,disposition",
    [
        ("For the foregoing reasons, we AFFIRM.", "affirmed"),
        ("The judgment of the district court is affirmed.", "affirmed"),
        ("AFFIRMED.", "affirmed"),
        ("We therefore reverse and remand.", "reversed"),
        ("REVERSED AND REMANDED.", "reversed"),
        ("The order is VACATED and the case REMANDED.", "vacated"),
        ("The petition for review is DENIED.", "denied"),
        ("PETITION GRANTED; order vacated.", "granted"),
        ("We affirm in part, reverse in part, and remand.", "mixed"),
        ("We affirm the conviction. The sentence is vacated.", "mixed"),
        ("The appeal is DISMISSED for lack of jurisdiction.", "dismissed"),
        ("The district court reversed the agency and the Board appealed.", None),
        ("", None),
        (None, None),
    ],
)
def test_classify_disposition(text, disposition):
    assert classify_disposition(text)[0] == disposition


def test_disposition_outcome_mapping():
    assert disposition_outcome("reversed") == "petitioner" and disposition_outcome("vacated") == "petitioner"
    assert disposition_outcome("affirmed") == "respondent" and disposition_outcome("denied") == "respondent"
    assert disposition_outcome("mixed") is None and disposition_outcome("dismissed") is None and disposition_outcome(None) is None


def test_caption_parties_and_case_name_split():
    text = extract_pdf_text(opinion_pdf())
    assert caption_parties(text) == ("MAPLE ROWE", "QUINCE LOGISTICS, INC")
    assert caption_parties("SORREL, Plaintiff-Appellant, v. TAMARIND BANK, Defendant-Appellee.") == ("SORREL", "TAMARIND BANK")
    assert caption_parties("no roles here") == (None, None)
    assert split_case_name("Sorrel v. Tamarind Bank, et al.") == ("Sorrel", "Tamarind Bank")
    assert split_case_name("In re Sorrel") == (None, None)


def test_background_excerpt_drops_outcome_sentences():
    text = "Rowe drove for Quince. The district court found for Quince. We reverse. Rowe sued in 2019. The judgment is vacated."
    out = background_excerpt(text, 1000)
    assert out == "Rowe drove for Quince. The district court found for Quince. Rowe sued in 2019."
    assert background_excerpt(text, 30) == "Rowe drove for Quince."


def test_retry_after_parsing():
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now=lambda: 1445412480.0) == pytest.approx(30.0)


# -- live, replayed -----------------------------------------------------------------------------


def _register_full_sequence(rsps: responses.RequestsMock) -> None:
    search = f"{API_BASE}/search/"
    first_params = {
        "type": "o",
        "court": "ca2 ca9 cafc",
        "order_by": "citeCount desc",
        "filed_after": "2017-01-01",
        "filed_before": "2024-12-31",
    }
    auth = matchers.header_matcher({"Authorization": f"Token {TOKEN}"})
    # the first search call is rate limited, the retry succeeds
    rsps.add(responses.GET, search, status=429, headers={"Retry-After": "7"}, json={"detail": "Request was throttled."},
             match=[matchers.query_param_matcher(first_params), auth])
    rsps.add(responses.GET, search, json=_rec("search_page1.json"), match=[matchers.query_param_matcher(first_params), auth])
    # page 2 through the cursor in page 1's "next" URL (query carried by the URL itself)
    rsps.add(responses.GET, search, json=_rec("search_page2.json"),
             match=[matchers.query_param_matcher({"cursor": "cz0xMjM0", "type": "o"}), auth])
    for cid in (501, 502, 503):
        rsps.add(responses.GET, f"{API_BASE}/clusters/{cid}/", json=_rec(f"cluster_{cid}.json"), match=[auth])
    for oid in (6001, 6002, 6003):
        rsps.add(responses.GET, f"{API_BASE}/opinions/{oid}/", json=_rec(f"opinion_{oid}.json"), match=[auth])
    # the PDF comes from the storage host, without the token
    rsps.add(responses.GET, f"{STORAGE_BASE}/pdf/2021/05/03/maple_rowe_v._quince_logistics_inc.pdf", body=opinion_pdf(),
             content_type="application/pdf")


def test_live_cursor_pages_429_backoff_clusters_opinions_and_pdf(monkeypatch, caplog):
    monkeypatch.setenv("COURTLISTENER_TOKEN", TOKEN)
    slept: list[float] = []
    caplog.set_level(logging.DEBUG)
    with responses.RequestsMock() as rsps:
        _register_full_sequence(rsps)
        df, manifest = fetch(session=requests.Session(), courts=["ca2", "ca9", "cafc"], sleep=slept.append, max_cases=10)
        pdf_call = [c for c in rsps.calls if c.request.url.startswith(STORAGE_BASE)][0]
        assert "Authorization" not in pdf_call.request.headers
    assert slept == [7.0]
    stats = manifest["stats"]
    assert stats["retries_429"] == 1 and stats["pages"] == 2 and stats["waited_s"] == 7.0
    assert list(df.columns) == COLUMNS and len(df) == 3
    rows = df.set_index("cluster_id")
    maple = rows.loc[501]
    assert maple["text_source"] == "pdf" and "MARKER ON PAGE THIRTEEN" not in maple["text"]
    assert maple["disposition"] == "reversed" and maple["outcome"] == "petitioner" and maple["disposition_source"] == "text"
    assert (maple["appellant"], maple["appellee"], maple["party_source"]) == ("MAPLE ROWE", "QUINCE LOGISTICS, INC", "caption_roles")
    assert maple["court"] == "ca9" and maple["date_filed"] == "2021-05-03" and maple["cite_count"] == 412
    assert maple["download_url"] == f"{STORAGE_BASE}/pdf/2021/05/03/maple_rowe_v._quince_logistics_inc.pdf"
    sorrel = rows.loc[502]  # no PDF: the stored plain text; disposition from the cluster field
    assert sorrel["text_source"] == "plain_text" and sorrel["disposition"] == "affirmed"
    assert sorrel["disposition_source"] == "cluster" and sorrel["outcome"] == "respondent"
    umber = rows.loc[503]
    assert umber["disposition"] == "mixed" and pd.isna(umber["outcome"])
    assert manifest["dispositions"] == {"reversed": 1, "affirmed": 1, "mixed": 1}
    # the token never reaches the manifest or the logs
    assert TOKEN not in json.dumps(manifest, default=str)
    assert TOKEN not in caplog.text
    assert "waiting 7.0 s" in caplog.text


def test_live_max_cases_stops_before_the_next_page(monkeypatch):
    monkeypatch.setenv("COURTLISTENER_TOKEN", TOKEN)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _register_full_sequence(rsps)
        df, manifest = fetch(session=requests.Session(), courts=["ca2", "ca9", "cafc"], sleep=lambda s: None, max_cases=2)
        assert not any("cursor=" in c.request.url for c in rsps.calls)
    assert len(df) == 2 and manifest["stats"]["pages"] == 1


def test_token_env_name_comes_from_config(monkeypatch):
    monkeypatch.setenv("MY_CL_TOKEN", TOKEN)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _register_full_sequence(rsps)
        df, _ = fetch(session=requests.Session(), courts=["ca2", "ca9", "cafc"], sleep=lambda s: None, token_env="MY_CL_TOKEN")
    assert len(df) == 3


def test_without_token_empty_table_and_note():
    df, manifest = fetch(courts=["ca9"])
    assert df.empty and list(df.columns) == COLUMNS
    assert manifest["sources"] == [] and manifest["note"].startswith(NO_TOKEN_NOTE)
    assert "COURTLISTENER_TOKEN" in manifest["note"]


def test_rejected_token_is_a_clear_error_without_the_token(monkeypatch):
    monkeypatch.setenv("COURTLISTENER_TOKEN", TOKEN)
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{API_BASE}/search/", status=401, json={"detail": "Invalid token."})
        with pytest.raises(SourceError) as err:
            fetch(session=requests.Session(), sleep=lambda s: None)
    assert "token_env" in str(err.value) and TOKEN not in str(err.value)


def test_persistent_429_gives_up_after_max_retries():
    slept: list[float] = []
    client = CourtListenerClient(TOKEN, session=requests.Session(), sleep=slept.append, max_retries=2, backoff=1.5)
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{API_BASE}/clusters/9/", status=429)  # no Retry-After: exponential back-off
        with pytest.raises(SourceError, match="HTTP 429 after 3 attempt"):
            client.cluster(9)
    assert slept == [1.5, 3.0]
    assert TOKEN not in repr(client)


def test_server_error_is_retried_then_succeeds():
    slept: list[float] = []
    client = CourtListenerClient(TOKEN, session=requests.Session(), sleep=slept.append, backoff=2.0)
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{API_BASE}/clusters/502/", status=502)
        rsps.add(responses.GET, f"{API_BASE}/clusters/502/", json=_rec("cluster_502.json"))
        assert client.cluster(502)["disposition"] == "Affirmed"
    assert slept == [2.0] and client.stats["retries_other"] == 1


# -- snapshot listings ------------------------------------------------------------------------


def test_snapshot_listings_have_no_disposition():
    df, manifest = fetch(snapshot_dir=SNAPSHOTS)
    assert list(df.columns) == COLUMNS
    assert sorted(df["court"]) == ["ca2", "ca9", "cafc"]
    assert df["disposition"].isna().all() and df["outcome"].isna().all() and (df["origin"] == "snapshot").all()
    maple = df[df["court"] == "ca9"].iloc[0]
    assert (maple["appellant"], maple["appellee"], maple["party_source"]) == ("Maple Rowe", "Quince Logistics", "case_name_order")
    assert manifest["skipped_by_reason"] == {"bad_date_filed": 1, "duplicate_court_docket": 1}
    assert manifest["filtered_out"] == {"outside_date_range": 1, "other_court": 1}
    assert manifest["sources"][0]["origin"].startswith("snapshot:")


def test_snapshot_missing_column_names_file_and_column(tmp_path):
    folder = tmp_path / "courts"
    folder.mkdir()
    src = SNAPSHOTS / "courts" / "federal_appellate_opinion_listings.csv"
    bad = folder / src.name
    bad.write_text(src.read_text().replace("date_filed", "filed_on", 1))
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path)
    assert str(bad) in str(err.value) and "date_filed" in str(err.value)


# -- throttling stated in the body (Django REST framework) -------------------------------------


def test_throttle_wait_from_body_header_or_both():
    drf = '{"detail": "Request was throttled. Expected available in 42 seconds."}'
    assert throttle_body_seconds(drf) == 42.0
    assert throttle_body_seconds(b"Request was throttled. Expected available in 2 minutes.") == 120.0
    assert throttle_body_seconds('{"detail": "Request was throttled."}') is None and throttle_body_seconds(None) is None
    assert throttle_wait_seconds({"Retry-After": "5"}, drf) == 42.0  # the longer of the two
    assert throttle_wait_seconds({"Retry-After": "90"}, drf) == 90.0
    assert throttle_wait_seconds({}, "Expected available in 3 seconds") == 3.0
    assert throttle_wait_seconds({}, "busy") is None


def test_429_waits_at_least_what_the_body_says():
    slept: list[float] = []
    client = CourtListenerClient(TOKEN, session=requests.Session(), sleep=slept.append, backoff=1.0)
    with responses.RequestsMock() as rsps:
        # no Retry-After header: only the DRF message says how long the throttle lasts
        rsps.add(responses.GET, f"{API_BASE}/clusters/502/", status=429,
                 json={"detail": "Request was throttled. Expected available in 37 seconds."})
        rsps.add(responses.GET, f"{API_BASE}/clusters/502/", status=429, headers={"Retry-After": "3"},
                 json={"detail": "Request was throttled. Expected available in 11 seconds."})
        rsps.add(responses.GET, f"{API_BASE}/clusters/502/", json=_rec("cluster_502.json"))
        assert client.cluster(502)["id"] == 502
    assert slept == [37.0, 11.0]  # not the 1 s / 2 s back-off, not the shorter Retry-After
    assert client.stats["retries_429"] == 2 and client.stats["waited_s"] == 48.0


def test_429_asking_longer_than_max_wait_fails_without_retrying_early():
    slept: list[float] = []
    client = CourtListenerClient(TOKEN, session=requests.Session(), sleep=slept.append, max_wait=600)
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{API_BASE}/clusters/9/", status=429,
                 json={"detail": "Request was throttled. Expected available in 3600 seconds."})
        with pytest.raises(SourceError, match="asks to wait 3600 s"):
            client.cluster(9)
        assert len(rsps.calls) == 1
    assert slept == []


# -- text preference and precedential status ----------------------------------------------------


def test_stored_text_prefers_html_with_citations_then_html_then_plain_text():
    op = {
        "html_with_citations": '<p>The judgment is <a href="/c/1/">AFFIRMED</a> &amp; so ordered.</p>',
        "html": "<p>html version</p>",
        "plain_text": "plain version",
    }
    text, field = stored_opinion_text(op)
    assert field == "html_with_citations" and "<" not in text
    assert text == "The judgment is AFFIRMED & so ordered."
    assert stored_opinion_text({**op, "html_with_citations": "  <p> </p> "}) == ("html version", "html")
    assert stored_opinion_text({"html_with_citations": "", "html": None, "plain_text": "plain version"}) == ("plain version", "plain_text")
    assert stored_opinion_text({"plain_text": "x" * 50}, max_chars=10) == ("x" * 10, "plain_text")
    assert stored_opinion_text({"plain_text": "   "}) == ("", "none")
    assert TEXT_SOURCES[-1] == "pdf"


def test_live_html_with_citations_is_used_instead_of_the_pdf(monkeypatch):
    monkeypatch.setenv("COURTLISTENER_TOKEN", TOKEN)
    opinion = {**_rec("opinion_6001.json"), "plain_text": "Stored plain text; we reverse.",
               "html_with_citations": "<div><p>MAPLE ROWE, Plaintiff-Appellant,</p><p>v.</p>"
                                      "<p>QUINCE LOGISTICS, INC., Defendant-Appellee.</p><p>AFFIRMED.</p></div>"}
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _register_full_sequence(rsps)
        rsps.replace(responses.GET, f"{API_BASE}/opinions/6001/", json=opinion)
        df, _ = fetch(session=requests.Session(), courts=["ca2", "ca9", "cafc"], sleep=lambda s: None)
        assert not any(c.request.url.startswith(STORAGE_BASE) for c in rsps.calls)  # no PDF download
    maple = df.set_index("cluster_id").loc[501]
    assert maple["text_source"] == "html_with_citations" and maple["disposition"] == "affirmed"
    assert "<p>" not in maple["text"] and "plain text" not in maple["text"]


@pytest.mark.parametrize(
    "raw, status",
    [
        ("Published", "Published"), ("published", "Published"), ("Precedential", "Published"),
        ("Unpublished", "Unpublished"), ("Non-Precedential", "Unpublished"), ("non_precedential", "Unpublished"),
        ("Errata", "Errata"), ("Separate", "Separate"), ("Separate Opinion", "Separate"),
        ("In-chambers", "In-chambers"), ("in chambers", "In-chambers"),
        ("Relating-to", "Relating-to"), ("Relating-to orders", "Relating-to"),
        ("Unknown", "Unknown"), ("Unknown Status", "Unknown"), (" UNPUBLISHED ", "Unpublished"),
    ],
)
def test_precedential_status_spellings(raw, status):
    assert normalize_precedential_status(raw) == (status, True)


def test_precedential_status_missing_or_unrecognised():
    assert normalize_precedential_status(None) == (None, True)
    assert normalize_precedential_status("  ") == (None, True)
    assert normalize_precedential_status("Sealed") == (None, False)
    assert PRECEDENTIAL_STATUSES[0] == "Published"


def test_unknown_status_logged_and_counted_in_the_manifest(tmp_path, caplog):
    folder = tmp_path / "courts"
    folder.mkdir()
    (folder / "federal_appellate_opinion_listings.csv").write_text(
        "court,case_name,date_filed,docket_number,precedential_status,download_url\n"
        "ca9,Alder v. Birch,2019-04-01,19-1,published,\n"
        "ca9,Cedar v. Dogwood,2019-04-02,19-2,Non-Precedential,\n"
        "ca9,Elm v. Fir,2019-04-03,19-3,Sealed,\n"
        "ca9,Gum v. Hazel,2019-04-04,19-4,Sealed,\n"
        "ca9,Ivy v. Juniper,2019-04-05,19-5,,\n"
    )
    caplog.set_level(logging.WARNING)
    df, manifest = fetch(snapshot_dir=tmp_path, courts=["ca9"])
    assert list(df["precedential_status"].fillna("-")) == ["Published", "Unpublished", "-", "-", "-"]
    assert manifest["unknown_precedential_status"] == {"Sealed": 2}
    assert caplog.text.count("unrecognised precedential status 'Sealed'") == 1
