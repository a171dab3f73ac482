"""NHL free-agent signings (Spotrac): snapshot import, AAV checks, replayed HTML pages.

Fixtures (tests/fixtures/snapshots/nhl, tests/fixtures/spotrac) are invented players.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import requests
import responses

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.signings import SIGNING_COLUMNS
from anachron.sources.spotrac import NHLSigningsReader, fetch
from anachron.sources.spotrac.aav import check_aav
from anachron.sources.spotrac.contracts import DATE_RULE_FALLBACK, fa_opening_date
from anachron.sources.spotrac.layout import URL_TEMPLATE
from anachron.sources.spotrac.pages import parse_free_agent_table

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots"
SNAPSHOT_FILE = SNAPSHOTS / "nhl" / "spotrac_signed_free_agents_fixture.csv"
PAGE = FIXTURES / "spotrac" / "nhl_free_agents_2024.html"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


def _row(table: pd.DataFrame, player: str) -> pd.Series:
    sel = table[table["player"] == player]
    assert len(sel) == 1, f"expected one {player} row, got {len(sel)}"
    return sel.iloc[0]


def test_check_aav_rules():
    assert check_aav(5_500_000, 22_000_000, 4) == (5_500_000.0, None, None)
    assert check_aav(5_450_000, 22_000_000, 4)[0] == 5_450_000.0  # within 5%: the listed value stands
    assert check_aav(206, 4_000_000, 2) == (2_000_000.0, None, "aav_recomputed")
    assert check_aav(206, 4_000_000, 2, mode="drop") == (None, "implausible_aav", None)
    assert check_aav(None, 4_000_000, 2) == (2_000_000.0, None, "aav_recomputed")
    assert check_aav(2_000_000, 8_000_000, 2) == (None, "aav_inconsistent", None)
    assert check_aav(0, 0, 0) == (None, "no_contract_value", None)
    assert check_aav(705, 70_000, 1) == (None, "implausible_aav", None)  # value / years is no salary either
    with pytest.raises(ValueError):
        check_aav(1, 1, 1, mode="guess")


def test_fa_opening_date():
    assert fa_opening_date(2021) == "2021-07-01"
    assert fa_opening_date(2020, {2020: "2020-10-09"}) == "2020-10-09"
    assert fa_opening_date(2020, {"2020": "2020-10-09"}) == "2020-10-09"


def test_snapshot_import():
    table, manifest = fetch(snapshot_dir=SNAPSHOTS)
    assert list(table.columns) == SIGNING_COLUMNS and (table["league"] == "NHL").all()
    json.dumps(manifest)
    rec = manifest["sources"][0]
    assert rec["origin"] == f"snapshot:{SNAPSHOT_FILE}" and rec["sha256"] == sha256_file(SNAPSHOT_FILE)
    # No dates in the snapshot: July 1 of the free-agency year, recorded as the fallback rule.
    assert (table["date_rule"] == DATE_RULE_FALLBACK).all()
    v = _row(table, "Viktor Lahtinen")
    assert v["signing_date"] == "2021-07-01" and (v["previous_team"], v["team"]) == ("BOS", "SEA")
    assert v["team_change"] and not v["re_signing"] and v["status"] == "unrestricted"
    assert v["aav"] == 5_500_000 and v["years"] == 4 and v["total_value"] == 22_000_000
    stay = _row(table, "Mats Ekdahl")
    assert not stay["team_change"] and stay["re_signing"]


def test_implausible_aav_recomputed_with_reason():
    table, manifest = fetch(snapshot_dir=SNAPSHOTS)
    cole = _row(table, "Cole Brandvold")
    assert cole["aav"] == pytest.approx(3_000_000) and "implausible" in cole["note"]
    assert manifest["repaired_by_reason"] == {"aav_recomputed": 1}
    assert manifest["skipped_by_reason"] == {"aav_inconsistent": 1, "duplicate_row": 2, "no_contract_value": 1}
    assert "Ryan Tolliver" not in set(table["player"]) and "Jordan Pelletier" not in set(table["player"])


def test_implausible_aav_dropped_with_reason():
    table, manifest = fetch(snapshot_dir=SNAPSHOTS, implausible_aav="drop")
    assert "Cole Brandvold" not in set(table["player"])
    assert manifest["skipped_by_reason"]["implausible_aav"] == 1
    assert manifest["repaired_by_reason"] == {}


def test_duplicate_listings_counted():
    table, manifest = fetch(snapshot_dir=SNAPSHOTS)
    assert (table["player"] == "Viktor Lahtinen").sum() == 1
    assert manifest["skipped_by_reason"]["duplicate_row"] == 2  # listed under two positions / twice


def test_years_filter_and_date_overrides():
    table, _ = fetch(snapshot_dir=SNAPSHOTS, years=[2021, 2022], fa_opening_dates={2022: "2022-07-13"})
    assert set(table["player"]) == {"Viktor Lahtinen", "Cole Brandvold"}
    assert _row(table, "Cole Brandvold")["signing_date"] == "2022-07-13"


def test_missing_column_names_file_and_column(tmp_path):
    (tmp_path / "nhl").mkdir()
    bad = tmp_path / "nhl" / "spotrac_signed_free_agents_bad.csv"
    pd.read_csv(SNAPSHOT_FILE).drop(columns=["aav"]).to_csv(bad, index=False)
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path)
    assert str(bad) in str(err.value) and "aav" in str(err.value)
    pd.read_csv(SNAPSHOT_FILE).drop(columns=["player_name"]).to_csv(bad, index=False)
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path)
    assert str(bad) in str(err.value) and "player_name" in str(err.value)


def test_parse_free_agent_table():
    rows = parse_free_agent_table(PAGE.read_bytes(), 2024, "u")
    assert len(rows) == 5
    oskar = rows[rows["player"] == "Oskar Varga"].iloc[0]  # the link text, not the hidden sort span
    assert (oskar["previous_team"], oskar["team"], oskar["status_code"]) == ("TOR", "SJS", "UFA")
    assert oskar["value"] == 32_500_000 and oskar["aav"] == 6_500_000 and oskar["years"] == 5
    assert pd.isna(rows.loc[rows["player"] == "Ben Achterberg", "team"].item())  # not signed yet


@responses.activate
def test_live_page_replayed():
    url = URL_TEMPLATE.format(year=2024)
    responses.add(responses.GET, url, body=PAGE.read_bytes(), status=200, content_type="text/html")
    table, manifest = fetch(session=requests.Session(), years=[2024])
    assert len(responses.calls) == 1 and manifest["sources"][0]["origin"] == url
    assert manifest["sources"][0]["rows"] == 5
    assert set(table["player"]) == {"Oskar Varga", "Liam Castellano", "Theo Marchand", "Kasper Rydell"}
    assert manifest["skipped_by_reason"] == {"unsigned": 1}
    kasper = _row(table, "Kasper Rydell")  # "$406" listed: garbled, recomputed
    assert kasper["aav"] == pytest.approx(4_000_000) and manifest["repaired_by_reason"] == {"aav_recomputed": 1}
    theo = _row(table, "Theo Marchand")
    assert theo["status"] == "restricted" and theo["signing_date"] == "2024-07-01"
    assert not _row(table, "Liam Castellano")["team_change"]


@responses.activate
def test_live_page_without_table():
    url = URL_TEMPLATE.format(year=2024)
    responses.add(responses.GET, url, body=b"<html><body>Access denied</body></html>", status=200)
    with pytest.raises(SourceError, match="no free-agent table"):
        NHLSigningsReader(years=[2024], session=requests.Session()).read()


@responses.activate
def test_live_http_error():
    url = URL_TEMPLATE.format(year=2024)
    responses.add(responses.GET, url, status=404)
    with pytest.raises(SourceError, match="Spotrac NHL free agents 2024"):
        fetch(session=requests.Session(), years=[2024])


def test_bad_mode():
    with pytest.raises(ValueError):
        NHLSigningsReader(implausible_aav="maybe")


def test_source_config_schemas_match_fetch():
    import inspect

    import jsonschema

    from anachron.sources import prosports, spotrac

    for module, reader in ((prosports, prosports.NBASigningsReader), (spotrac, spotrac.NHLSigningsReader)):
        schema = module.CONFIG_SCHEMA
        jsonschema.Draft202012Validator.check_schema(schema)
        defaults = {k: v["default"] for k, v in schema["properties"].items()}
        jsonschema.validate(defaults, schema)
        params = set(inspect.signature(reader).parameters) - {"session", "snapshot_dir"}
        assert set(schema["properties"]) == params
        for name, prop in schema["properties"].items():
            assert "description" in prop, name
    table, _ = spotrac.fetch(
        snapshot_dir=SNAPSHOTS, **{k: v["default"] for k, v in spotrac.CONFIG_SCHEMA["properties"].items()}
    )
    assert len(table) == 6
