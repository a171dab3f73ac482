"""ForecastBench question/resolution sets: snapshot fixtures and replayed HTTP.

Fixtures under tests/fixtures/forecastbench and tests/fixtures/alfred (hand-written ALFRED
answers) are invented (questions, ids, values).
"""

from __future__ import annotations

import json
import logging
import types

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.forecastbench import (
    ALFRED_URL,
    BASE_URL,
    COLUMNS,
    KEY_ENV,
    LABEL_COLUMNS,
    AlfredClient,
    AlfredError,
    ForecastBenchReader,
    Release,
    fetch,
    first_release_label,
    parse_question_set,
    parse_resolution_set,
    resolution_set_name,
)
from anachron.sources.forecastbench.alfred import value_on

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
FB = FIXTURES / "forecastbench"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    monkeypatch.delenv(KEY_ENV, raising=False)  # a FRED key in the developer's shell would relabel live reads


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return ForecastBenchReader(snapshot_dir=FIXTURES).read()


def _row(df: pd.DataFrame, qid: str, resolution_date: str) -> pd.Series:
    sel = df[(df["question_id"] == qid) & (df["resolution_date"] == resolution_date)]
    assert len(sel) == 1, sel
    return sel.iloc[0]


def test_snapshot_join_columns_counts_and_manifest():
    reader = ForecastBenchReader(snapshot_dir=FIXTURES)
    df = reader.read()
    assert list(df.columns) == COLUMNS
    # set 2023-05-07: manifold, metaculus, polymarket, fred x3, yfinance x2; set 2025-02-09: 3 rows
    assert len(df) == 11
    assert df["resolved"].dtype == bool and df["resolved_to"].dtype == "float64"
    assert reader.skipped_by_reason == {
        "combination_question": 1,  # list-valued combination_of
        "combination_resolution": 2,  # list ids with a direction
        "duplicate_question": 2,  # the human set repeats two llm questions
        "duplicate_resolution": 1,  # ZZZQ 2023-05-14 twice
        "question_without_resolution": 1,  # infer 777
        "resolution_without_question": 1,  # ghost-question
    }
    assert reader.unused_files == ["2024-01-14_resolution_set.json"]
    kinds = {(e["file"], e["kind"]) for e in reader.manifest}
    assert kinds == {
        ("2023-05-07-human.json", "question_set"),
        ("2023-05-07-llm.json", "question_set"),
        ("2023-05-07_resolution_set.json", "resolution_set"),
        ("2025-02-09-llm.json", "question_set"),
        ("2025-02-09_resolution_set.json", "resolution_set"),
    }
    entry = next(e for e in reader.manifest if e["file"] == "2023-05-07_resolution_set.json")
    path = FB / "2023-05-07_resolution_set.json"
    assert entry["origin"] == f"snapshot:{path}" and entry["sha256"] == sha256_file(path)
    assert entry["rows"] == 10  # 12 rows less the 2 combinations (duplicates are dropped at the join)
    # every row of the table has exactly one question per (due date, source, id, resolution date)
    assert not df.duplicated(["forecast_due_date", "source", "question_id", "resolution_date"]).any()


def test_resolution_joined_to_its_question(table):
    r = _row(table, "FAKESERIES1", "2023-06-06")
    assert r["source"] == "fred" and r["question_type"] == "dataset"
    assert r["question"].startswith("Will the Invented Index have increased by {resolution_date}")
    assert r["freeze_date"] == "2023-04-28" and r["forecast_due_date"] == "2023-05-07"
    assert r["resolved"] and r["resolved_to"] == 0.0
    assert r["resolution_set"] == "2023-05-07_resolution_set.json"
    assert r["question_set"] == "2023-05-07-human.json"  # first file by name keeps the question
    assert r["freeze_value"] == "101.5" and r["url"] == "https://example.org/series/FAKESERIES1"
    m = _row(table, "90001", "2024-06-01")
    assert m["question_type"] == "market" and not m["resolved"] and m["resolved_to"] == pytest.approx(0.37)
    assert m["market_resolution_criteria"].startswith("Resolves **Yes**")
    p = _row(table, "0xfeedbeef", "2023-12-31")
    assert pd.isna(p["market_resolution_criteria"])  # "N/A" -> missing
    assert set(table.loc[table["question_id"] == "FAKESERIES1", "resolution_date"]) == {"2023-05-14", "2023-06-06", "2024-05-06"}


def test_question_sets_select_files():
    df = ForecastBenchReader(["2025-02-09-llm.json"], snapshot_dir=FIXTURES).read()
    assert set(df["question_set"]) == {"2025-02-09-llm.json"} and len(df) == 3
    assert set(df["freeze_date"]) == {"2025-01-31"}


def test_freeze_datetime_with_offset_gives_utc_date():
    qs = {
        "forecast_due_date": "2030-01-10",
        "questions": [
            {"id": "x", "source": "manifold", "question": "Q?", "resolution_criteria": "", "background": None,
             "freeze_datetime": "2030-01-01T22:30:00-05:00", "url": "https://example.org/x"}
        ],
    }
    df = parse_question_set(qs, "2030-01-10-llm.json")
    assert df.loc[0, "freeze_date"] == "2030-01-02"  # 03:30 UTC on the 2nd
    assert df.loc[0, "background"] == "" and df.loc[0, "question_type"] == "market"


def test_missing_key_names_file_and_key(tmp_path):
    (tmp_path / "forecastbench").mkdir()
    qs = json.loads((FB / "2025-02-09-llm.json").read_text())
    del qs["questions"][1]["freeze_datetime"]
    (tmp_path / "forecastbench" / "2025-02-09-llm.json").write_text(json.dumps(qs))
    with pytest.raises(SourceError, match=r"2025-02-09-llm\.json \(questions\[1\]\).*freeze_datetime"):
        ForecastBenchReader(snapshot_dir=tmp_path).read()
    with pytest.raises(SourceError, match=r"2031-01-01_resolution_set\.json.*resolutions"):
        parse_resolution_set(json.dumps({"forecast_due_date": "2031-01-01"}), "2031-01-01_resolution_set.json")
    with pytest.raises(SourceError, match=r"bad\.json: not valid JSON"):
        parse_question_set(b"{not json", "bad.json")


def test_bad_values_are_counted_not_raised():
    from collections import Counter

    counts: Counter = Counter()
    rs = {
        "forecast_due_date": "2030-01-10",
        "resolutions": [
            {"id": "a", "source": "fred", "resolution_date": "not a date", "resolved_to": 1.0, "resolved": True},
            {"id": "b", "source": "fred", "resolution_date": "2030-02-01", "resolved_to": None, "resolved": True},
            {"id": "c", "source": "fred", "resolution_date": "2030-02-01", "resolved_to": 1, "resolved": True},
        ],
    }
    df = parse_resolution_set(rs, "x_resolution_set.json", counts)
    assert counts == Counter({"bad_resolution_date": 1, "bad_resolved_to": 1})
    assert df["question_id"].tolist() == ["c"] and df["resolved_to"].tolist() == [1.0]


def test_question_set_name_rules():
    assert resolution_set_name("2024-07-21-human.json") == "2024-07-21_resolution_set.json"
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        ForecastBenchReader(["latest-llm.json"])


def _register(rsps, names, *, missing_resolution=()):
    for name in names:
        rsps.add(responses.GET, f"{BASE_URL}/question_sets/{name}", body=(FB / name).read_bytes(), content_type="text/plain")
        rname = resolution_set_name(name)
        if rname in missing_resolution:
            rsps.add(responses.GET, f"{BASE_URL}/resolution_sets/{rname}", status=404, body="404: Not Found")
        else:
            rsps.add(responses.GET, f"{BASE_URL}/resolution_sets/{rname}", body=(FB / rname).read_bytes(), content_type="text/plain")


def test_live_replayed_matches_snapshot():
    names = ["2023-05-07-llm.json", "2025-02-09-llm.json"]
    with responses.RequestsMock() as rsps:
        _register(rsps, names)
        reader = ForecastBenchReader(names, session=requests.Session())
        live = reader.read()
    assert BASE_URL == "https://raw.githubusercontent.com/forecastingresearch/forecastbench-datasets/main/datasets"
    snap = ForecastBenchReader(names, snapshot_dir=FIXTURES).read()
    pd.testing.assert_frame_equal(live, snap)
    origins = {e["origin"] for e in reader.manifest}
    assert f"{BASE_URL}/question_sets/2023-05-07-llm.json" in origins
    assert f"{BASE_URL}/resolution_sets/2025-02-09_resolution_set.json" in origins
    expected = sha256_file(FB / "2023-05-07-llm.json")
    assert any(e["sha256"] == expected for e in reader.manifest)


def test_live_missing_resolution_set_is_counted():
    names = ["2023-05-07-llm.json", "2025-02-09-llm.json"]
    with responses.RequestsMock() as rsps:
        _register(rsps, names, missing_resolution={"2025-02-09_resolution_set.json"})
        df, manifest = fetch(session=requests.Session(), question_sets=names, horizons="all")
    assert set(df["forecast_due_date"]) == {"2023-05-07"}
    assert manifest["skipped_by_reason"]["no_resolution_set"] == 2
    assert manifest["rows"] == len(df) and manifest["question_sets"] == ["2023-05-07-llm.json"]


def test_live_http_error_points_at_snapshot():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{BASE_URL}/question_sets/2023-05-07-llm.json", status=500)
        with pytest.raises(SourceError, match=r"question set 2023-05-07-llm\.json.*snapshot_dir"):
            ForecastBenchReader(["2023-05-07-llm.json"], session=requests.Session()).read()


def test_empty_join_is_an_error():
    with responses.RequestsMock() as rsps:
        _register(rsps, ["2025-02-09-llm.json"], missing_resolution={"2025-02-09_resolution_set.json"})
        with pytest.raises(SourceError, match="no question of 2025-02-09-llm.json has a resolution"):
            ForecastBenchReader(["2025-02-09-llm.json"], session=requests.Session()).read()


def test_snapshot_from_environment(monkeypatch):
    monkeypatch.setenv(SNAPSHOT_ENV, str(FIXTURES))
    df, manifest = fetch()
    assert len(df) == 11 and all(e["origin"].startswith("snapshot:") for e in manifest["sources"])
    json.dumps(manifest)  # serialisable


# -- labels as first published (vintage columns, ALFRED re-resolution) ------------------------

ALFRED = FIXTURES / "alfred"
KEY = "test-fred-key-8c1f"
AS_OF = "2024-06-30"
ROUND = "2023-08-20-llm.json"
ROUND_RES = "2023-08-20_resolution_set.json"


def _q(qid, source, dates):
    text = "Will {qid} have increased by {resolution_date} as compared to its value on {forecast_due_date}?"
    return {"id": qid, "source": source, "question": text.replace("{qid}", qid), "resolution_criteria": "Invented.",
            "background": None, "freeze_datetime": "2023-08-11T00:00:00+00:00", "freeze_datetime_value": "3.5",
            "url": f"https://example.org/{qid}", "resolution_dates": dates, "combination_of": "N/A"}


def _r(qid, source, day, y, resolved=True):
    return {"id": qid, "source": source, "direction": None, "resolution_date": day, "resolved_to": y, "resolved": resolved}


#: An invented round: FAKEUNRATE (monthly, revised), two fred series whose lookups fail, a
#: dbnomics series (no vintages) and a market. ForecastBench's labels are those of the series as revised.
ROUND_QUESTIONS = {
    "forecast_due_date": "2023-08-20",
    "question_set": ROUND,
    "questions": [
        _q("FAKEUNRATE", "fred", ["2023-08-27", "2023-09-19", "2024-02-16", "2025-08-19"]),
        _q("FAKEDOWN", "fred", ["2023-08-27"]),
        _q("NOSUCHSERIES", "fred", ["2023-08-27"]),
        _q("meteofake_TEMP.07005.D", "dbnomics", ["2023-08-27"]),
        {**_q("MktA", "manifold", "N/A"), "question": "Will the Invented Cup be won by Team A?"},
    ],
}
ROUND_RESOLUTIONS = {
    "forecast_due_date": "2023-08-20",
    "question_set": ROUND,
    "resolutions": [
        _r("FAKEUNRATE", "fred", "2023-08-27", 0.0),
        _r("FAKEUNRATE", "fred", "2023-09-19", 1.0),  # revised: Sep 3.8 > Aug 3.7; first release: 3.8 = 3.8
        _r("FAKEUNRATE", "fred", "2024-02-16", 1.0),
        _r("FAKEUNRATE", "fred", "2025-08-19", 0.0, resolved=False),
        _r("FAKEDOWN", "fred", "2023-08-27", 1.0),
        _r("NOSUCHSERIES", "fred", "2023-08-27", 0.0),
        _r("meteofake_TEMP.07005.D", "dbnomics", "2023-08-27", 1.0),
        _r("MktA", "manifold", "2023-10-01", 1.0),
    ],
}


def _round_snapshot(tmp_path):
    folder = tmp_path / "forecastbench"
    folder.mkdir()
    (folder / ROUND).write_text(json.dumps(ROUND_QUESTIONS))
    (folder / ROUND_RES).write_text(json.dumps(ROUND_RESOLUTIONS))
    return tmp_path


def _alfred_params(series_id, start, end):
    return {"series_id": series_id, "api_key": KEY, "file_type": "json", "output_type": "4", "realtime_start": "1776-07-04",
            "realtime_end": AS_OF, "observation_start": start, "observation_end": end}


def _register_round(rsps, *, alfred=True):
    rsps.add(responses.GET, f"{BASE_URL}/question_sets/{ROUND}", json=ROUND_QUESTIONS)
    rsps.add(responses.GET, f"{BASE_URL}/resolution_sets/{ROUND_RES}", json=ROUND_RESOLUTIONS)
    if not alfred:
        return
    rsps.add(responses.GET, ALFRED_URL, status=500, body="Internal Server Error",
             match=[matchers.query_param_matcher(_alfred_params("FAKEDOWN", "2021-08-19", "2023-08-27"))])
    rsps.add(responses.GET, ALFRED_URL, body=(ALFRED / "FAKEUNRATE.json").read_bytes(), content_type="application/json",
             match=[matchers.query_param_matcher(_alfred_params("FAKEUNRATE", "2021-08-19", "2024-02-16"))])
    rsps.add(responses.GET, ALFRED_URL, status=400, body=(ALFRED / "rejected.json").read_bytes(),
             match=[matchers.query_param_matcher(_alfred_params("NOSUCHSERIES", "2021-08-19", "2023-08-27"))])


def _live_round(**kw):
    return ForecastBenchReader([ROUND], session=requests.Session(), as_of=AS_OF, min_interval=0, **kw)


def test_snapshot_flags_revisable_series(tmp_path):
    df, manifest = fetch(snapshot_dir=_round_snapshot(tmp_path))
    assert list(df.columns) == COLUMNS and COLUMNS[-2:] == LABEL_COLUMNS == ["label_vintage", "revised_value"]
    assert df["revised_value"].dtype == bool
    flags = {(r.question_id, r.resolution_date): (r.revised_value, r.label_vintage) for r in df.itertuples()}
    for key in [("FAKEUNRATE", d) for d in ("2023-08-27", "2023-09-19", "2024-02-16", "2025-08-19")] + [
        ("FAKEDOWN", "2023-08-27"), ("NOSUCHSERIES", "2023-08-27"), ("meteofake_TEMP.07005.D", "2023-08-27")
    ]:
        assert flags[key] == (True, "as_revised"), key
    assert flags[("MktA", "2023-10-01")] == (False, "as_published_by_forecastbench")
    assert df.loc[df["question_id"] == "FAKEUNRATE", "resolved_to"].tolist() == [0.0, 1.0, 1.0, 0.0]  # ForecastBench's
    assert manifest["first_release_rows"] == 0 and manifest["first_release_flips"] == 0
    assert manifest["revised_value_rows"] == 7 and manifest["first_release_as_of"] is None
    assert manifest["first_release_note"].startswith("snapshot")
    # the shared fixtures: fred rows flagged, yfinance and markets not
    table = ForecastBenchReader(snapshot_dir=FIXTURES).read()
    assert set(table.loc[table["revised_value"], "source"]) == {"fred"}
    assert set(table.loc[~table["revised_value"], "label_vintage"]) == {"as_published_by_forecastbench"}


def test_live_with_key_relabels_fred_on_first_releases(monkeypatch, caplog):
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    with responses.RequestsMock() as rsps:
        _register_round(rsps)
        reader = _live_round()
        df, manifest = reader.fetch()
        assert [c.request.url.split("?")[0] for c in rsps.calls].count(ALFRED_URL) == 3  # one request per series
    row = {(r.question_id, r.resolution_date): r for r in df.itertuples()}
    first = row[("FAKEUNRATE", "2023-08-27")]
    assert (first.resolved_to, first.revised_value) == (0.0, False)
    assert first.label_vintage == "first_release:due=2023-09-01,resolution=2023-09-01"  # Aug obs both days: a tie
    flipped = row[("FAKEUNRATE", "2023-09-19")]
    assert flipped.resolved_to == 0.0  # ForecastBench: 1.0 on the revised 3.7; first published 3.8 -> 3.8
    assert flipped.label_vintage == "first_release:due=2023-09-01,resolution=2023-10-06" and not flipped.revised_value
    later = row[("FAKEUNRATE", "2024-02-16")]
    assert (later.resolved_to, later.label_vintage) == (1.0, "first_release:due=2023-09-01,resolution=2024-03-08")
    unresolved = row[("FAKEUNRATE", "2025-08-19")]
    assert (unresolved.resolved, unresolved.revised_value, unresolved.label_vintage) == (False, True, "as_revised")
    for qid in ("FAKEDOWN", "NOSUCHSERIES", "meteofake_TEMP.07005.D"):  # fallbacks and dbnomics keep ForecastBench's label
        r = row[(qid, "2023-08-27")]
        assert (r.revised_value, r.label_vintage) == (True, "as_revised")
    assert row[("FAKEDOWN", "2023-08-27")].resolved_to == 1.0 and row[("NOSUCHSERIES", "2023-08-27")].resolved_to == 0.0
    assert (row[("MktA", "2023-10-01")].revised_value, row[("MktA", "2023-10-01")].label_vintage) == (False, "as_published_by_forecastbench")
    assert manifest["first_release_flips"] == 1 and manifest["first_release_rows"] == 3
    assert manifest["first_release_fallbacks"] == {"alfred_http_error": 1, "alfred_rejected": 1}
    assert manifest["revised_value_rows"] == 4 and manifest["first_release_as_of"] == AS_OF
    assert manifest["skipped_by_reason"] == {}  # a fallback is not a skipped row
    alfred = [e for e in manifest["sources"] if e.get("kind") == "alfred_first_release"]
    assert [(e["series_id"], e["rows"]) for e in alfred] == [("FAKEUNRATE", 8)]  # the "." observation dropped
    assert alfred[0]["origin"].startswith(ALFRED_URL + "?series_id=FAKEUNRATE&") and "realtime_end=2024-06-30" in alfred[0]["origin"]
    assert alfred[0]["sha256"] == sha256_file(ALFRED / "FAKEUNRATE.json")
    # the key never leaves the request: not in the manifest, the table or the log
    assert KEY not in json.dumps(manifest) and KEY not in df.to_csv()
    assert not any(KEY in rec.getMessage() for rec in caplog.records)
    assert any("FAKEDOWN" in rec.getMessage() and "***" in rec.getMessage() for rec in caplog.records)


def test_live_without_key_or_with_key_env_null_asks_nothing(monkeypatch):
    with responses.RequestsMock() as rsps:  # an ALFRED request would be refused by the mock
        _register_round(rsps, alfred=False)
        df, manifest = fetch(session=requests.Session(), question_sets=[ROUND])
    assert manifest["first_release_rows"] == 0 and manifest["first_release_fallbacks"] == {}
    assert f"environment variable {KEY_ENV} is unset" in manifest["first_release_note"]
    assert df.loc[df["source"] == "fred", "revised_value"].all()
    assert df.loc[df["question_id"] == "FAKEUNRATE", "resolved_to"].tolist() == [0.0, 1.0, 1.0, 0.0]
    monkeypatch.setenv(KEY_ENV, KEY)
    with responses.RequestsMock() as rsps:
        _register_round(rsps, alfred=False)
        df, manifest = fetch(session=requests.Session(), question_sets=[ROUND], fred_key_env=None, horizons="all")
    assert "fred_key_env is null" in manifest["first_release_note"] and df.loc[df["source"] == "fred", "revised_value"].all()
    monkeypatch.setenv("MY_FRED_KEY", KEY)  # the variable's name comes from the config
    with responses.RequestsMock() as rsps:
        _register_round(rsps)
        reader = _live_round(fred_key_env="MY_FRED_KEY")
        reader.read()
    assert reader.first_release["first_release_flips"] == 1


def test_alfred_goes_through_the_retrying_session(monkeypatch):
    """No session injected: the reader's own (make_session) retries a 503 from ALFRED."""
    monkeypatch.setenv(KEY_ENV, KEY)
    one = {**ROUND_QUESTIONS, "questions": ROUND_QUESTIONS["questions"][:1]}
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{BASE_URL}/question_sets/{ROUND}", json=one)
        rsps.add(responses.GET, f"{BASE_URL}/resolution_sets/{ROUND_RES}", json=ROUND_RESOLUTIONS)
        rsps.add(responses.GET, ALFRED_URL, status=503)
        rsps.add(responses.GET, ALFRED_URL, body=(ALFRED / "FAKEUNRATE.json").read_bytes())
        reader = ForecastBenchReader([ROUND], as_of=AS_OF, min_interval=0)
        df = reader.read()
        assert len(rsps.calls) == 4
    assert reader.first_release["first_release_flips"] == 1 and reader.first_release["first_release_fallbacks"] == {}
    assert (~df.loc[df["resolved"], "revised_value"]).all()


def test_first_release_rule_ties_and_missing_values():
    rel = [Release("2023-07-01", "2023-08-04", 3.5), Release("2023-08-01", "2023-09-01", 3.8), Release("2023-09-01", "2023-10-06", 3.9)]
    assert value_on(rel, "2023-08-01").value == 3.8 and value_on(rel, "2023-08-31").value == 3.8  # forward fill by date
    assert value_on(rel, "2023-06-30") is None
    assert first_release_label(rel, "2023-08-20", "2023-09-02") == (1.0, "first_release:due=2023-09-01,resolution=2023-10-06")
    assert first_release_label(rel, "2023-09-02", "2023-08-20")[0] == 0.0  # a fall
    assert first_release_label(rel, "2023-08-02", "2023-08-30")[0] == 0.0  # a tie is not an increase
    with pytest.raises(AlfredError) as err:
        first_release_label(rel, "2023-06-01", "2023-09-02")
    assert err.value.reason == "no_first_release_on_due_date"


def test_alfred_client_filters_on_as_of_and_reports_reasons():
    body = {"observations": [
        {"date": "2024-05-01", "realtime_start": "2024-06-07", "value": "4.0"},
        {"date": "2024-06-01", "realtime_start": "2024-07-05", "value": "4.4"},  # first published after as_of
        {"date": "2024-04-01", "realtime_start": "2024-05-03", "value": "3.9"},
    ]}
    seen = []

    def get(url, *, params, what, allow_status):
        seen.append((url, params, allow_status))
        return types.SimpleNamespace(status_code=200, content=json.dumps(body).encode())

    slept = []
    client = AlfredClient(get, KEY, as_of=AS_OF, min_interval=5, sleep=slept.append)
    releases, _ = client.first_releases("X", "2022-01-01", "2024-06-20")
    assert [r.date for r in releases] == ["2024-04-01", "2024-05-01"]  # sorted, the late one dropped
    assert first_release_label(releases, "2024-04-15", "2024-06-20") == (1.0, "first_release:due=2024-05-03,resolution=2024-06-07")
    client.first_releases("X", "2022-01-01", "2024-06-20")
    assert len(slept) == 1 and 0 < slept[0] <= 5  # requests spaced by min_interval
    assert seen[0][1]["api_key"] == KEY and seen[0][1]["output_type"] == "4" and seen[0][1]["realtime_end"] == AS_OF
    assert KEY not in client.origin("X", "2022-01-01", "2024-06-20")

    def bad(url, **_):
        return types.SimpleNamespace(status_code=200, content=b"<html>maintenance</html>")

    with pytest.raises(AlfredError) as err:
        AlfredClient(bad, KEY, as_of=AS_OF, min_interval=0).first_releases("X", "2022-01-01", "2024-06-20")
    assert err.value.reason == "alfred_bad_response"

    def down(url, **_):
        raise SourceError(f"could not fetch X from {url}?api_key={KEY}: 502")

    with pytest.raises(AlfredError) as err:
        AlfredClient(down, KEY, as_of=AS_OF, min_interval=0).first_releases("X", "2022-01-01", "2024-06-20")
    assert err.value.reason == "alfred_http_error" and KEY not in str(err.value) and "***" in str(err.value)
