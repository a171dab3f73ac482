"""NBA contracts from prosportstransactions notes: note parser, snapshot import, replayed pages.

Every fixture (tests/fixtures/snapshots/nba, tests/fixtures/prosports) is invented: the
players do not exist; the notes imitate the site's wording.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import requests
import responses
from responses import matchers

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.player_names import normalize_name
from anachron.sources.prosports import NBASigningsReader, fetch
from anachron.sources.prosports.layout import SEARCH_URL
from anachron.sources.prosports.notes import CONTRACT, parse_money, parse_note
from anachron.sources.prosports.pages import parse_search_page
from anachron.sources.prosports.players import display_name, player_keys
from anachron.sources.signings import SIGNING_COLUMNS

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots"
PAGES = FIXTURES / "prosports"


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


@pytest.fixture(scope="module")
def snapshot_result():
    return fetch(snapshot_dir=SNAPSHOTS)


def _row(table: pd.DataFrame, player: str, year: str) -> pd.Series:
    sel = table[(table["player"] == player) & (table["signing_date"].fillna("").str.startswith(year))]
    assert len(sel) == 1, f"expected one {player} {year} row, got {len(sel)}"
    return sel.iloc[0]


# -- the note parser ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "note, years, total, status, re_signing",
    [
        ("signed unrestricted free agent to a 4-year $136.5M contract", 4, 136_500_000, "unrestricted", False),
        ("re-signed restricted free agent to a 3-year, $10M contract", 3, 10_000_000, "restricted", True),
        ("signed free agent to a 1-year, $898K contract", 1, 898_000, None, False),
        ("signed free agent to a 2-year, $3,250,000 contract", 2, 3_250_000, None, False),
        ("signed unrestricted free agent to a reported 3-year, $21M contract", 3, 21_000_000, "unrestricted", False),
        ("re-signed unrestricted free agent to a 3-year #42M contract", 3, 42_000_000, "unrestricted", True),
        (
            "signed unrestricted free agent to a 2-year $17M contract through 2022-23 (second year is player option)",
            2,
            17_000_000,
            "unrestricted",
            False,
        ),
        (
            "signed restricted free agent to a 4-year $66M contract (Jazz declined to match Magic offer sheet)",
            4,
            66_000_000,
            "restricted",
            False,
        ),
    ],
)
def test_contract_notes_are_parsed(note, years, total, status, re_signing):
    p = parse_note(note)
    assert p.kind == CONTRACT and p.is_contract
    assert p.years == years and p.total_value == pytest.approx(total)
    assert p.status == status and p.re_signing is re_signing
    assert p.value_rule == "exact" and not p.sign_and_trade


@pytest.mark.parametrize(
    "note, total",
    [
        ("signed unrestricted free agent to a 4-year $60-62M contract", 60_000_000),  # a range: lower bound
        ("re-signed unrestricted free agent to a 4-year $64M / $69M contract", 64_000_000),  # base / with bonuses
        ("signed free agent to a 2-year $2/4M contract", 2_000_000),
        ("re-signed unrestricted free agent to a 3-year $120.6M / 4-year $162M contract (player option)", 120_600_000),
    ],
)
def test_contract_with_several_figures_takes_the_first(note, total):
    p = parse_note(note)
    assert p.is_contract and p.total_value == pytest.approx(total)
    assert p.value_rule == "first of several figures"


@pytest.mark.parametrize(
    "note, reason",
    [
        ("signed free agent to a two way contract", "two_way"),
        ("signed second round pick to a two-way contract", "two_way"),
        ("re-signed restricted free agent to a 1-year, $1.5M two way contract", "two_way"),
        ("signed free agent for the remainder of the season", "rest_of_season"),
        ("re-signed to a 1-year rest-of-season contract", "rest_of_season"),
        ("signed free agent for the remainder of the season / to a 2-year $3.6M contract", "rest_of_season"),
        ("signed free agent to a 10-day contract", "ten_day"),
        ("re-signed to a second 10-day contract", "ten_day"),
        ("team tendered qualifying offer, making player a restricted free agent", "qualifying_offer"),
        ("team declined to tender qualifying offer, making player an unrestricted free agent", "qualifying_offer"),
        ("waived", "waived"),
        ("waived (team bought out contract)", "waived"),
        ("released", "released"),
        ("claimed off waivers from Nets", "claimed_off_waivers"),
        ("team exercised 1-year $7.3M contract option through 2020-21", "contract_option"),
        ("player declined contract option, making him an unrestricted free agent", "contract_option"),
        ("team guaranteed contract through 2021-22", "guarantee"),
        ("player became an unrestricted free agent", "free_agent_status"),
        ("team renounced free agent exception rights", "free_agent_status"),
        ("signed free agent to an Exhibit 10 contract", "exhibit_or_camp"),
        ("signed second round pick to a 3-year, $4.5M contract", "draft_pick"),
        ("re-signed to a 4-year $91.2M contract extension", "extension"),
        ("signed with Real Betis (Spain)", "other_league"),
        ("retired", "retired"),
        ("signed free agent", "no_years"),
        ("signed free agent to a multi-year contract", "no_years"),
        ("signed unrestricted free agent to a 2-year minimum contract", "no_amount"),
        ("fined $10,000 by NBA for a flagrant foul", "not_a_contract"),
        ("", "not_a_contract"),
        (None, "not_a_contract"),
    ],
)
def test_non_contract_notes_get_their_reason(note, reason):
    p = parse_note(note)
    assert p.kind == reason and not p.is_contract


def test_sign_and_trade_note():
    p = parse_note("re-signed unrestricted free agent to a 3-year, $51M contract (sign-and-trade with Jazz)")
    assert p.is_contract and p.sign_and_trade and p.re_signing
    assert p.sign_and_trade_team == "Jazz"
    q = parse_note("signed unrestricted free agent to a 4-year $117M contract (signed and traded from Hornets)")
    assert q.is_contract and q.sign_and_trade and not q.re_signing


def test_status_is_read_from_any_note():
    assert parse_note("player became an unrestricted free agent").status == "unrestricted"
    assert parse_note("team tendered qualifying offer, making player a restricted free agent").status == "restricted"
    assert parse_note("waived").status is None


def test_parse_money_units():
    assert parse_money("$136.5M") == (136_500_000.0, False)
    assert parse_money("$950K") == (950_000.0, False)
    assert parse_money("$1,620,564") == (1_620_564.0, False)
    assert parse_money("$19.2-19.5M")[0] == pytest.approx(19_200_000.0)
    assert parse_money("no money here") is None


def test_names():
    assert display_name("(Robert) Bobby Tenley") == "Bobby Tenley"
    assert display_name("Edwin Adeyemi / Eddie Adeyemi") == "Eddie Adeyemi"
    assert display_name("Chris Lanham (b. 1991-02-11)") == "Chris Lanham"
    assert normalize_name("Tomáš Dvořáček Jr.") == "tomas dvoracek"
    assert normalize_name("D'Angelo Ruiz") == "dangelo ruiz"
    assert player_keys("Edwin Adeyemi / Eddie Adeyemi") == {"edwin adeyemi", "eddie adeyemi"}


# -- snapshot import ------------------------------------------------------------------------


def test_snapshot_table_shape_and_types(snapshot_result):
    table, manifest = snapshot_result
    assert list(table.columns) == SIGNING_COLUMNS
    assert (table["league"] == "NBA").all()
    assert str(table["team_change"].dtype) == "boolean" and table["sign_and_trade"].dtype == bool
    dated = table["signing_date"].dropna()
    assert dated.str.match(r"^\d{4}-\d{2}-\d{2}$").all()
    assert (table["aav"] == table["total_value"] / table["years"].astype(float)).all()
    json.dumps(manifest)  # serialisable
    transactions = SNAPSHOTS / "nba" / "prosports_transactions_fixture.csv"
    rec = next(s for s in manifest["sources"] if s.get("kind") == "transactions")
    assert rec["origin"] == f"snapshot:{transactions}" and rec["sha256"] == sha256_file(transactions)
    assert rec["rows"] == len(pd.read_csv(transactions))


def test_team_change_from_earlier_rows(snapshot_result):
    table, _ = snapshot_result
    r = _row(table, "Marcus Vellano", "2020")
    assert (r["team"], r["previous_team"], bool(r["team_change"])) == ("Kings", "Hornets", True)
    assert r["years"] == 4 and r["aav"] == pytest.approx(72_500_000 / 4)
    assert r["status"] == "unrestricted" and not r["re_signing"] and not r["sign_and_trade"]
    assert r["origin"].endswith("prosports_transactions_fixture.csv#row=4")
    first = _row(table, "Marcus Vellano", "2018")
    assert first["previous_team"] is None and pd.isna(first["team_change"])  # no earlier row: unknown


def test_re_signing_without_move(snapshot_result):
    table, _ = snapshot_result
    r = _row(table, "Tobias Lindqvist", "2019")
    assert r["re_signing"] and not r["team_change"] and r["status"] == "restricted"


def test_status_from_an_earlier_note(snapshot_result):
    table, _ = snapshot_result
    r = _row(table, "Luka Devereaux", "2019")  # "signed free agent ..." after Knicks declined the offer
    assert r["status"] == "unrestricted" and (r["previous_team"], r["team"]) == ("Knicks", "Hawks")


def test_sign_and_trades(snapshot_result):
    table, manifest = snapshot_result
    stated = _row(table, "Ricky Baptiste", "2019")
    assert stated["sign_and_trade"] and (stated["previous_team"], stated["team"]) == ("Grizzlies", "Jazz")
    assert stated["team_change"]
    next_row = _row(table, "Jalen Whitcombe", "2020")  # next transaction with the Hornets within 90 days
    assert next_row["sign_and_trade"] and (next_row["previous_team"], next_row["team"]) == ("Celtics", "Hornets")
    roster = _row(table, "Chris Donnelly-Park", "2019")  # played the next season for Memphis only
    assert roster["sign_and_trade"] and (roster["previous_team"], roster["team"]) == ("Pacers", "Grizzlies")
    stayed = _row(table, "Sam Okoro", "2019")
    assert not stayed["sign_and_trade"] and not stayed["team_change"]
    assert manifest["sign_and_trades"]["inferred_from_rosters"] == 1


def test_skipped_notes_counted_by_reason(snapshot_result):
    _, manifest = snapshot_result
    skipped = manifest["skipped_by_reason"]
    for reason, n in {
        "two_way": 1,
        "ten_day": 2,
        "rest_of_season": 1,
        "qualifying_offer": 3,
        "waived": 1,
        "released": 1,
        "claimed_off_waivers": 1,
        "contract_option": 1,
        "extension": 1,
        "draft_pick": 1,
        "other_league": 1,
        "retired": 1,
        "no_years": 1,
        "no_amount": 1,
        "not_a_contract": 1,
        "no_player": 1,
        "no_contract_value": 1,
    }.items():
        assert skipped.get(reason) == n, (reason, skipped.get(reason))


def test_duplicates_removed_and_counted(snapshot_result):
    table, manifest = snapshot_result
    assert manifest["duplicates"] == {"duplicate_row": 1, "duplicate_player_year": 1, "merged_contract_list": 1}
    assert manifest["skipped_by_reason"]["duplicate_row"] == 1
    assert manifest["skipped_by_reason"]["duplicate_player_year"] == 2
    keys = table.assign(y=table["signing_date"].str[:4]).dropna(subset=["y"])
    assert not keys.duplicated(["player", "y"]).any()
    anton = table[table["player"] == "Anton Petrescu"]
    assert len(anton) == 1 and anton.iloc[0]["team"] == "Suns"  # the later Heat deal of 2019 is the duplicate


def test_contract_list_merges_and_adds(snapshot_result):
    table, _ = snapshot_result
    ned = _row(table, "Ned Castellanos", "2022")  # listed in both: one row, the announcement date
    assert ned["signing_date"] == "2022-07-01" and ned["date_rule"] == "announcement date (contract list)"
    assert ned["team"] == "Lakers" and ned["previous_team"] == "Spurs" and "actual_contracts_2022.csv" in ned["origin"]
    snt = _row(table, "Marcus Vellano", "2023")  # teams from season rosters; sign-and-trade from the link
    assert (snt["previous_team"], snt["team"], bool(snt["team_change"])) == ("Kings", "Hornets", True)
    assert snt["sign_and_trade"] and snt["aav"] == pytest.approx(20_000_000)
    traded = _row(table, "Tobias Lindqvist", "2023")  # two teams last season, one of them signed him
    assert traded["team"] == "Mavericks" and traded["previous_team"] is None and pd.isna(traded["team_change"])
    undated = table[table["player"] == "Paulo Ferreira"].iloc[0]
    assert undated["signing_date"] is None and undated["date_rule"] == "missing"


def test_a_contract_list_dated_after_the_signing_keeps_the_signing_date(tmp_path):
    shutil.copytree(SNAPSHOTS / "nba", tmp_path / "nba")
    lst = tmp_path / "nba" / "actual_contracts_2022.csv"
    df = pd.read_csv(lst)
    df.loc[df["player"] == "Ned Castellanos", "date"] = "2022-07-09"  # a later report of the July 6 signing
    df.to_csv(lst, index=False)
    table, _ = fetch(snapshot_dir=tmp_path)
    ned = _row(table, "Ned Castellanos", "2022")
    assert (ned["signing_date"], ned["date_rule"]) == ("2022-07-06", "transaction date")
    assert "contract list dated later (2022-07-09)" in ned["note"]


def test_missing_column_names_file_and_column(tmp_path):
    (tmp_path / "nba").mkdir()
    df = pd.read_csv(SNAPSHOTS / "nba" / "prosports_transactions_fixture.csv")
    bad = tmp_path / "nba" / "prosports_transactions_bad.csv"
    df.drop(columns=["notes"]).to_csv(bad, index=False)
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path)
    assert str(bad) in str(err.value) and "notes" in str(err.value)


def test_contract_list_missing_column(tmp_path):
    shutil.copytree(SNAPSHOTS / "nba", tmp_path / "nba")
    lst = tmp_path / "nba" / "actual_contracts_2023.csv"
    pd.read_csv(lst).drop(columns=["Total Value"]).to_csv(lst, index=False)
    with pytest.raises(SourceError) as err:
        fetch(snapshot_dir=tmp_path)
    assert str(lst) in str(err.value) and "Total Value" in str(err.value)


def test_missing_snapshot_files(tmp_path):
    with pytest.raises(SourceError, match="prosports_transactions"):
        fetch(snapshot_dir=tmp_path)


def test_without_contract_lists_and_rosters():
    table, manifest = fetch(snapshot_dir=SNAPSHOTS, use_contract_lists=False, use_season_rosters=False)
    assert not table["origin"].str.contains("actual_contracts").any()
    assert _row(table, "Ned Castellanos", "2022")["signing_date"] == "2022-07-06"
    assert not _row(table, "Chris Donnelly-Park", "2019")["sign_and_trade"]
    assert manifest["sign_and_trades"]["inferred_from_rosters"] == 0


# -- live pages (replayed) -------------------------------------------------------------------


def _page_params(start: int) -> dict[str, str]:
    return {
        "Player": "",
        "Team": "",
        "BeginDate": "2021-07-01",
        "EndDate": "2021-09-30",
        "PlayerMovementChkBx": "yes",
        "Submit": "Search",
        "start": str(start),
    }


@responses.activate
def test_live_pages_follow_pagination_and_parse():
    for start, name in ((0, "search_page1.html"), (25, "search_page2.html")):
        responses.add(
            responses.GET,
            SEARCH_URL,
            body=(PAGES / name).read_bytes(),
            status=200,
            content_type="text/html",
            match=[matchers.query_param_matcher(_page_params(start))],
        )
    table, manifest = fetch(session=requests.Session(), start="2021-07-01", end="2021-09-30")
    assert len(responses.calls) == 2
    assert [s["page"] for s in manifest["sources"]] == [1, 2]
    assert manifest["sources"][0]["origin"].startswith(SEARCH_URL) and "start=0" in manifest["sources"][0]["origin"]
    assert [s["rows"] for s in manifest["sources"]] == [6, 3]  # "• A • B" is two players
    wes = _row(table, "Wes Hollander", "2021")
    assert (wes["previous_team"], wes["team"], bool(wes["team_change"])) == ("Pacers", "Suns", True)
    assert wes["aav"] == pytest.approx(82_000_000 / 4) and wes["origin"].startswith(SEARCH_URL)
    idris = _row(table, "Idris Kamara", "2021")
    assert idris["sign_and_trade"] and (idris["previous_team"], idris["team"]) == ("Pelicans", "Knicks")
    assert idris["status"] == "restricted"
    arlo = _row(table, "Arlo Fitch", "2021")  # waived by the Kings, signed again by them
    assert arlo["previous_team"] == "Kings" and not arlo["team_change"]
    assert manifest["skipped_by_reason"]["waived"] == 2 and manifest["skipped_by_reason"]["two_way"] == 1
    assert manifest["skipped_by_reason"]["rest_of_season"] == 1


def test_parse_search_page_reports_pages_and_next():
    rows, n_pages, next_url = parse_search_page((PAGES / "search_page1.html").read_bytes(), SEARCH_URL + "?start=0")
    assert n_pages == 2 and next_url is not None and next_url.endswith("start=25")
    assert next_url.startswith("https://www.prosportstransactions.com/basketball/Search/SearchResults.php")
    assert rows.loc[rows["player"] == "Arlo Fitch", "notes"].item() == "waived"


@responses.activate
def test_live_challenge_page_is_a_clear_error():
    responses.add(responses.GET, SEARCH_URL, body=(PAGES / "challenge.html").read_bytes(), status=200)
    with pytest.raises(SourceError, match="no transactions table"):
        NBASigningsReader(start="2021-07-01", end="2021-09-30", session=requests.Session()).read()


@responses.activate
def test_live_http_error_is_a_source_error():
    responses.add(responses.GET, SEARCH_URL, status=503)
    with pytest.raises(SourceError, match="snapshot_dir"):
        fetch(session=requests.Session(), start="2021-07-01", end="2021-09-30")


def test_bad_dates_rejected():
    with pytest.raises(ValueError):
        NBASigningsReader(start="2022-01-01", end="2021-01-01")


def test_same_day_trade_rows_left_team_first():
    from anachron.sources.prosports.contracts import contracts_from_transactions

    # A live trade lists the player twice on one day: acquired by the Heat, relinquished by
    # the Raptors. Whatever the row order, the team he joined is his team afterwards.
    tx = pd.DataFrame(
        [
            ("2021-08-06", "Heat", "Nolan Briggs", "trade with Raptors", "acquired", "p1"),
            ("2021-08-06", "Raptors", "Nolan Briggs", "trade with Heat", "relinquished", "p1"),
            (
                "2022-07-08",
                "Bulls",
                "Nolan Briggs",
                "signed unrestricted free agent to a 2-year $8M contract",
                "acquired",
                "p2",
            ),
        ],
        columns=["date", "team", "player", "notes", "role", "origin"],
    )
    signings, skipped = contracts_from_transactions(tx)
    assert len(signings) == 1 and signings.iloc[0]["previous_team"] == "Heat"
    assert skipped["not_a_contract"] == 2
