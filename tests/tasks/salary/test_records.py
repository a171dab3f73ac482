"""Event grounding over every signing record: a contract a claim states takes its record's date."""

import datetime as dt

import pandas as pd

from anachron.tasks.salary.records import SigningRecords, open_signing_records
from anachron.tasks.salary.windows import window_table
from anachron.verify.pipeline import verify_claim

RECORDS = pd.DataFrame([
    # player, date, team, previous team, years, total, aav
    ("NBA", "Tobias Wrenfield", "2031-07-08", "Herons", "Herons", 2, 6_700_000.0, 3_350_000.0, "transaction date"),
    ("NBA", "Tobias Wrenfield", "2033-07-01", "Comets", "Herons", 3, 26_000_000.0, 8_666_667.0, "transaction date"),
    ("NBA", "Marlon Oduya", "2032-07-03", "Comets", "Falcons", 4, 80_000_000.0, 20_000_000.0, "transaction date"),
    ("NBA", "Ike Oduya", "2030-07-03", "Falcons", "Falcons", 1, 2_000_000.0, 2_000_000.0, "transaction date"),
], columns=["league", "player", "signing_date", "team", "previous_team", "years", "total_value", "aav", "date_rule"])

# the instance: Wrenfield's 2031 free agency, cutoff the day before his 2031 signing
CTX = {"cutoff_date": "2031-07-07", "player": "Tobias Wrenfield", "league": "NBA", "team": "Herons", "previous_team": "Herons",
       "signing_date": "2031-07-08", "aav": 3_350_000.0, "total_value": 6_700_000.0, "years": 2}
CUTOFF = dt.date(2031, 7, 7)


def _grounding(monkeypatch):
    # the test league's teams are unknown to the name tables: match team names as written
    import anachron.tasks.salary.grounding as g

    monkeypatch.setattr(g, "team_in", lambda text, team, league=None, skip="": str(team) in text)
    monkeypatch.setattr(g, "team_key", lambda league, team: str(team) if team else None)
    monkeypatch.setattr(g, "teams_named", lambda text, league, skip="": {t for t in ("Herons", "Comets", "Falcons") if t in text})
    # the test league's windows open on June 30, as the NBA's do since 2019
    return SigningRecords([RECORDS], window_table({"NBA": {y: f"{y}-06-30" for y in range(2030, 2034)}}))


def test_a_later_contract_of_the_player_takes_its_record_date(monkeypatch):
    g = _grounding(monkeypatch)
    fact = "Wrenfield agreed to a three-year, $26 million deal with the Comets."
    v = g.check(fact, dict(CTX))
    # signed July 1 and first public when the window opened, June 30
    assert v is not None and v.effective_date == dt.date(2033, 6, 30) and not v.outcome
    assert "signing record" in v.reason and "first public 2033-06-30" in v.reason
    out = verify_claim(fact, "2031-06-01", CUTOFF, instance=dict(CTX), grounding=g)
    assert out["verdict"] == "leaked" and out["layer"] == "grounded"


def test_the_instance_contract_is_the_outcome(monkeypatch):
    g = _grounding(monkeypatch)
    v = g.check("Wrenfield re-signed with the Herons on a two-year, $6.7 million contract.", dict(CTX))
    assert v is not None and v.outcome and v.effective_date == dt.date(2031, 7, 8)


def test_another_player_named_in_full_and_an_unmatched_claim(monkeypatch):
    g = _grounding(monkeypatch)
    v = g.check("Marlon Oduya signed a four-year, $80 million contract with the Comets.", dict(CTX))
    assert v is not None and v.effective_date == dt.date(2032, 6, 30)
    # a surname two players share, without the first name: no record is chosen
    assert g.check("Oduya signed a four-year, $80 million contract with the Comets.", dict(CTX)) is None
    # a contract no record holds (another amount, another team): left to the other layers
    assert g.check("Wrenfield signed a five-year, $150 million deal with the Falcons.", dict(CTX)) is None
    assert g.check("Wrenfield averaged 14 points last season.", dict(CTX)) is None


def test_without_tables_only_the_own_contract_is_checked(tmp_path):
    from anachron.tasks.salary.grounding import ContractGrounding

    assert isinstance(open_signing_records({}), ContractGrounding)
    RECORDS.to_parquet(tmp_path / "nba.parquet")
    g = open_signing_records({"nba": tmp_path / "nba.parquet"})
    assert isinstance(g, SigningRecords) and g.n_records == 4


def test_a_stated_length_must_be_the_record_and_a_record_straddling_the_cutoff_decides_nothing(monkeypatch):
    g = _grounding(monkeypatch)
    fact = "Wrenfield agreed to a three-year, $26 million deal with the Comets."
    # five years is not the three-year record, even when the per-year amount is close
    assert g.check("Wrenfield agreed to a five-year, $44 million deal with the Comets.", dict(CTX)) is None
    # cutoff on the window's first day, signed the day after: reported before the cutoff or not
    assert g.check(fact, {**CTX, "cutoff_date": "2033-06-30"}) is None
    # a cutoff before the window opened: the deal cannot have been public yet
    assert g.check(fact, {**CTX, "cutoff_date": "2033-06-25"}).effective_date == dt.date(2033, 6, 30)
    # signed on or before the cutoff: clean
    assert g.check(fact, {**CTX, "cutoff_date": "2033-07-01"}).effective_date <= dt.date(2033, 7, 1)


def test_a_record_outside_the_window_table_keeps_a_report_lead(monkeypatch):
    _grounding(monkeypatch)
    g = SigningRecords([RECORDS], window_table())  # no windows for the 2030s
    fact = "Wrenfield agreed to a three-year, $26 million deal with the Comets."
    assert g.check(fact, {**CTX, "cutoff_date": "2033-06-25"}) is None  # within 14 days before the signing
    assert g.check(fact, {**CTX, "cutoff_date": "2033-05-01"}).effective_date == dt.date(2033, 6, 17)
