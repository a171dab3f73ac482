"""The salary task: instance building, prompts, prediction parsing and Perf.

Signings are invented (players and contracts do not exist).
"""

from __future__ import annotations

import json

import jsonschema
import pandas as pd
import pytest

from anachron.llm.structured import parse_output
from anachron.sources import prosports, spotrac
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.signings import SIGNING_COLUMNS, finish_signings
from anachron.tasks.base import INSTANCE_COLUMNS
from anachron.tasks.salary import (
    CONFIG_SCHEMA,
    SalaryTask,
    build_salary_instances,
    parse_amount,
    salary_perf,
)

from conftest import TESTS

SNAPSHOTS = TESTS / "fixtures" / "snapshots"
KC = {"tiny": "2024-06-30"}


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


def signing(
    player, date, team, prev, aav, *, league="NBA", years=2, status="unrestricted", snt=False, rule=None, change="auto"
):
    return {
        "league": league,
        "player": player,
        "signing_date": date,
        "team": team,
        "previous_team": prev,
        "team_change": (pd.NA if prev is None or team is None else prev != team) if isinstance(change, str) else change,
        "years": years,
        "total_value": aav * years,
        "aav": aav,
        "status": status,
        "sign_and_trade": snt,
        "re_signing": pd.NA if prev is None or team is None else prev == team,
        "date_rule": rule or ("free-agency opening fallback" if league == "NHL" else "transaction date"),
        "origin": f"test:{player}",
        "note": "invented",
    }


@pytest.fixture
def tables():
    nba = finish_signings(
        pd.DataFrame(
            [
                signing("Wes Hollander", "2021-08-03", "Suns", "Pacers", 20_500_000, years=4),
                signing(
                    "Idris Kamara",
                    "2021-08-07",
                    "Knicks",
                    "Pelicans",
                    12_000_000,
                    years=3,
                    status="restricted",
                    snt=True,
                ),
                signing("Tobias Lindqvist", "2019-07-08", "Magic", "Magic", 8_200_000, years=3),
                signing("Arlo Fitch", "2022-07-06", "Kings", "Heat", 1_900_000, years=1),
                signing("Marcus Vellano", "2018-07-02", "Kings", "Hornets", 9_000_000),
                signing("Paulo Ferreira", None, "Jazz", "Nets", 5_000_000),
                signing("Omar Haddad", "2023-06-30", None, "Suns", 6_000_000, change=pd.NA),
                signing("Kofi Mensah-Blake", "2019-07-01", "Bulls", "Raptors", 10_000_000, years=3),
                signing("Kofi Mensah-Blake", "2019-12-01", "Hawks", "Bulls", 4_000_000, years=1),
            ],
            columns=SIGNING_COLUMNS,
        )
    )
    nhl = finish_signings(
        pd.DataFrame(
            [
                signing("Viktor Lahtinen", "2021-07-01", "SEA", "BOS", 5_500_000, league="NHL", years=4),
                signing("Cole Brandvold", "2022-07-01", "NSH", "TBL", 3_000_000, league="NHL", years=4),
                signing("Mats Ekdahl", "2023-07-01", "EDM", "EDM", 4_500_000, league="NHL"),
                signing("Eli Fournier", "2024-07-01", "MTL", "OTT", 750_000, league="NHL"),
                signing("Noah Kessler", "2025-07-01", "LAK", "NJD", 7_000_000, league="NHL", years=5),
                signing("Wes Hollander", "2021-07-01", "DAL", "CHI", 4_000_000, league="NHL"),  # same name-year as eval
            ],
            columns=SIGNING_COLUMNS,
        )
    )
    return {"nba": nba, "nhl": nhl}


def _by_player(instances: pd.DataFrame) -> dict[str, pd.Series]:
    return {json.loads(r["inputs"])["player"]: r for _, r in instances.iterrows()}


def test_instances_and_exclusions(tables):
    inst, excl = build_salary_instances(tables, {}, knowledge_cutoffs=KC)
    assert list(inst.columns) == INSTANCE_COLUMNS and (inst["task"] == "salary").all()
    assert inst["instance_id"].is_unique
    rows = _by_player(inst)
    assert {p: r["split"] for p, r in rows.items()} == {
        "Wes Hollander": "eval",
        "Idris Kamara": "eval",  # a sign-and-trade moves the player
        "Kofi Mensah-Blake": "eval",
        "Viktor Lahtinen": "train",
        "Cole Brandvold": "train",  # exactly $3M: at the threshold
        "Noah Kessler": "control",  # cutoff 2025-06-30 after the only knowledge cutoff
    }
    reasons = {(r["player"], r["reason"]) for _, r in excl.iterrows()}
    assert reasons == {
        ("Tobias Lindqvist", "no_team_change"),
        ("Arlo Fitch", "below_min_aav"),
        ("Marcus Vellano", "outside_eval_years"),
        ("Paulo Ferreira", "no_signing_date"),
        ("Omar Haddad", "team_change_unknown"),
        ("Kofi Mensah-Blake", "duplicate_player_year"),
        ("Mats Ekdahl", "no_team_change"),
        ("Eli Fournier", "below_min_aav"),
        ("Wes Hollander", "overlap_with_eval"),
    }
    assert set(excl.columns) >= {"reason", "detail"}


def test_cutoff_is_day_before_the_window_and_payloads(tables):
    inst, _ = build_salary_instances(tables, {}, knowledge_cutoffs=KC)
    wes = _by_player(inst)["Wes Hollander"]
    assert wes["cutoff_date"] == "2021-08-01"  # signed Aug 3; the 2021 NBA window opened Aug 2
    assert json.loads(wes["inputs"]) == {
        "sport": "basketball",
        "league": "NBA",
        "year": 2021,
        "player": "Wes Hollander",
        "status": "unrestricted",
    }
    label = json.loads(wes["label"])
    assert label["aav"] == 20_500_000 and label["total_value"] == 82_000_000 and label["years"] == 4
    assert (label["team"], label["previous_team"], label["signing_date"]) == ("Suns", "Pacers", "2021-08-03")
    assert (label["cutoff_rule"], label["window_opens"]) == ("negotiating window", "2021-08-02")
    prov = json.loads(wes["provenance"])
    assert prov["source"] == "nba" and prov["origin"] == "test:Wes Hollander"
    viktor = _by_player(inst)["Viktor Lahtinen"]
    assert viktor["cutoff_date"] == "2021-07-27"  # no date: the 2021 NHL market opened July 28
    assert json.loads(viktor["label"])["date_rule"] == "free-agency opening fallback"
    assert json.loads(viktor["inputs"])["sport"] == "ice hockey"


def test_no_train_eval_overlap(tables):
    inst, _ = build_salary_instances(tables, {}, knowledge_cutoffs=KC)
    py = inst.assign(
        p=inst["inputs"].map(lambda s: json.loads(s)["player"]), y=inst["inputs"].map(lambda s: json.loads(s)["year"])
    )
    train = set(zip(py.loc[py["split"] == "train", "p"], py.loc[py["split"] == "train", "y"]))
    ev = set(zip(py.loc[py["split"] == "eval", "p"], py.loc[py["split"] == "eval", "y"]))
    assert not train & ev


def test_config_options(tables):
    inst, excl = build_salary_instances(
        tables,
        {"eval_min_aav": 0, "include_sign_and_trades": False, "control_after_knowledge_cutoff": False},
        knowledge_cutoffs=KC,
    )
    rows = _by_player(inst)
    assert rows["Arlo Fitch"]["split"] == "eval" and "Idris Kamara" not in rows
    assert rows["Noah Kessler"]["split"] == "train"
    assert ("Idris Kamara", "sign_and_trade_excluded") in set(zip(excl["player"], excl["reason"]))
    inst, _ = build_salary_instances(
        tables, {"require_team_change": False, "eval_start_year": 2018}, knowledge_cutoffs={}
    )
    rows = _by_player(inst)
    assert rows["Tobias Lindqvist"]["split"] == "eval" and rows["Marcus Vellano"]["split"] == "eval"
    assert rows["Mats Ekdahl"]["split"] == "train" and "control" not in set(inst["split"])


def test_eval_needs_a_recorded_date(tables):
    tables["nba"].loc[tables["nba"]["player"] == "Wes Hollander", "date_rule"] = "free-agency opening fallback"
    _, excl = build_salary_instances(tables, {}, knowledge_cutoffs=KC)
    assert ("Wes Hollander", "undated_signing") in set(zip(excl["player"], excl["reason"]))


def test_unconfigured_league_and_bad_config(tables):
    tables["nfl"] = finish_signings(
        pd.DataFrame([signing("Dev Carter", "2022-03-16", "Jets", "Bills", 9e6, league="NFL")])
    )
    tables["xfl"] = finish_signings(
        pd.DataFrame([signing("Bo Rains", "2022-03-16", "Hawks", "Vipers", 9e6, league="XFL")])
    )
    inst, excl = build_salary_instances(tables, {}, knowledge_cutoffs=KC)
    assert ("Dev Carter", "no_negotiating_window") in set(zip(excl["player"], excl["reason"]))
    windows = {"negotiating_windows": {"NFL": {"2022": "2022-03-14"}}}
    inst, excl = build_salary_instances(tables, windows, knowledge_cutoffs=KC)
    carter = _by_player(inst)["Dev Carter"]
    assert carter["split"] == "train" and carter["cutoff_date"] == "2022-03-13"
    assert ("Bo Rains", "league_not_configured") in set(zip(excl["player"], excl["reason"]))
    with pytest.raises(ValueError, match="unknown key"):
        build_salary_instances(tables, {"nba_threshold": 1}, knowledge_cutoffs=KC)
    with pytest.raises(ValueError, match="also a training league"):
        build_salary_instances(tables, {"train_min_aav": {"NBA": 1}}, knowledge_cutoffs=KC)


def test_missing_table_column(tables):
    with pytest.raises(SourceError, match="aav"):
        build_salary_instances({"nba": tables["nba"].drop(columns=["aav"])}, {}, knowledge_cutoffs=KC)


def test_deterministic_and_seeded_order(tables):
    a, _ = build_salary_instances(tables, {"seed": 1}, knowledge_cutoffs=KC)
    b, _ = build_salary_instances({k: v.iloc[::-1] for k, v in tables.items()}, {"seed": 1}, knowledge_cutoffs=KC)
    pd.testing.assert_frame_equal(a, b)
    c, _ = build_salary_instances(tables, {"seed": 2}, knowledge_cutoffs=KC)
    assert set(c["instance_id"]) == set(a["instance_id"])


def test_config_schema():
    jsonschema.Draft202012Validator.check_schema(CONFIG_SCHEMA)
    assert CONFIG_SCHEMA["additionalProperties"] is False
    for name, prop in CONFIG_SCHEMA["properties"].items():
        assert "default" in prop and "description" in prop, name
    defaults = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}
    jsonschema.validate(defaults, CONFIG_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"eval_min_aav": -1}, CONFIG_SCHEMA)


def test_from_fixture_sources():
    nba, _ = prosports.fetch(snapshot_dir=SNAPSHOTS)
    nhl, _ = spotrac.fetch(snapshot_dir=SNAPSHOTS)
    inst, excl = build_salary_instances({"nba": nba, "nhl": nhl}, {}, knowledge_cutoffs=KC)
    rows = _by_player(inst)
    assert rows["Ricky Baptiste"]["split"] == "eval" and rows["Ricky Baptiste"]["cutoff_date"] == "2019-06-29"
    assert rows["Cole Brandvold"]["split"] == "train"  # its garbled AAV was recomputed to $3M
    assert rows["Noah Kessler"]["split"] == "control"
    assert "Tobias Lindqvist" not in rows and "Mats Ekdahl" not in rows
    assert inst["cutoff_date"].str.match(r"^\d{4}-\d{2}-\d{2}$").all()


# -- the Task interface -------------------------------------------------------------------------


@pytest.fixture
def row(tables):
    inst, _ = build_salary_instances(tables, {}, knowledge_cutoffs=KC)
    return _by_player(inst)["Idris Kamara"]


def test_messages(row):
    task = SalaryTask()
    system, user = task.messages(row)
    assert system["role"] == "system" and user["role"] == "user"
    assert row["cutoff_date"] in system["content"] and "average annual value" in system["content"]
    for text in ("basketball", "NBA", "2021", "Idris Kamara", "restricted free agent", row["cutoff_date"]):
        assert text in user["content"]
    for leak in ("Knicks", "Pelicans", "12000000", "12,000,000"):  # the outcome stays out of the prompt
        assert leak not in user["content"] and leak not in system["content"]


@pytest.mark.parametrize(
    "raw, value",
    [
        (25_500_000, 25_500_000.0),
        (25500000.0, 25_500_000.0),
        ("25500000", 25_500_000.0),
        ("25,500,000", 25_500_000.0),
        ("$25.5M", 25_500_000.0),
        ("$25.5 million", 25_500_000.0),
        (" 950K ", 950_000.0),
        ("$12,000,000 USD", 12_000_000.0),
        ("$25.5M/yr", 25_500_000.0),
    ],
)
def test_validate_prediction_accepts(row, raw, value):
    assert SalaryTask().validate_prediction(row, raw) == pytest.approx(value)


@pytest.mark.parametrize(
    "raw",
    [
        0,
        -5_000_000,
        "-$3M",
        "about twelve million",
        True,
        None,
        float("nan"),
        float("inf"),
        [1],
        {"aav": 1},
        "12M or 14M",
    ],
)
def test_validate_prediction_rejects(row, raw):
    with pytest.raises(ValueError):
        SalaryTask().validate_prediction(row, raw)


def test_perf(row):
    task = SalaryTask()
    assert task.perf(row, 12_000_000) == 1.0
    assert task.perf(row, 9_000_000) == pytest.approx(0.75)
    assert task.perf(row, 15_000_000) == pytest.approx(0.75)
    assert task.perf(row, 30_000_000) == 0.0  # clipped at 0
    assert salary_perf(1, 2) == 0.5
    with pytest.raises(ValueError):
        salary_perf(1, 0)


def test_schema_and_parse_through_shared_parser(row):
    task = SalaryTask()
    assert task.prediction_schema(row)["type"] == "number"
    text = '{"evidence": [{"id": 1, "fact": "x signed", "source_date": "2021-07-01"}], "reasoning": "[1]", "predicted_salary": "$11M"}'
    out = parse_output(text, lambda p: task.validate_prediction(row, p), task.prediction_aliases)
    assert out.status == "ok" and out.prediction == 11_000_000
    bad = parse_output(
        '{"evidence": [], "reasoning": "", "prediction": -1}', lambda p: task.validate_prediction(row, p)
    )
    assert bad.status == "invalid_prediction"


def test_grounding_context_and_entities(row):
    task = SalaryTask()
    ctx = task.grounding_context(row)
    assert ctx == {
        "cutoff_date": "2021-08-01",
        "player": "Idris Kamara",
        "league": "NBA",
        "team": "Knicks",
        "previous_team": "Pelicans",
        "signing_date": "2021-08-07",
        "aav": 12_000_000.0,
        "total_value": 36_000_000.0,
        "years": 3,
    }
    assert task.entities(row)["players"] == ["Idris Kamara"]


def test_parse_amount_direct():
    assert parse_amount("1.2B") == 1.2e9
    with pytest.raises(ValueError):
        parse_amount("")
