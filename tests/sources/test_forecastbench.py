"""ForecastBench question/resolution sets: snapshot fixtures and replayed HTTP.

Fixtures under tests/fixtures/forecastbench are invented (questions, ids, values).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import requests
import responses

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.forecastbench import (
    BASE_URL,
    COLUMNS,
    ForecastBenchReader,
    fetch,
    parse_question_set,
    parse_resolution_set,
    resolution_set_name,
)

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
FB = FIXTURES / "forecastbench"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


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
