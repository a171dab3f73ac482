"""Grounded checks on the wordings real completions use: lower-court history vs the Supreme
Court's ruling, a player's earlier contract vs the one being predicted, index changes named by
the index provider, a quoted forecast question with its answer. Names are invented."""

import datetime as dt

import pandas as pd
import pytest

from anachron.names import mentioned_tickers
from anachron.tasks.forecast.grounding import ResolutionGrounding
from anachron.tasks.legal.grounding import DecisionGrounding
from anachron.tasks.salary.grounding import ContractGrounding
from anachron.verify.layers.grounded import IndexChangeGrounding

# -- legal: who ruled ---------------------------------------------------------------------

CASE = {
    "cutoff_date": "2021-03-01", "case_name": "Pellham v. Ostrava County", "petitioner": "Dara Pellham",
    "respondent": "Ostrava County", "decision_date": "2021-03-02",
}


@pytest.mark.parametrize(
    "fact",
    [
        "Before the appeal reached the Supreme Court, the Tenth Circuit had ruled against Dara Pellham in Pellham v. Ostrava County.",
        "In Pellham v. Ostrava County, the Oregon Supreme Court ruled against Dara Pellham.",
        "In Pellham v. Ostrava County, the Supreme Court of Nevada held for Ostrava County.",
        "The state appellate court held for Ostrava County in Pellham v. Ostrava County.",
        "The court of appeals affirmed the dismissal in Pellham v. Ostrava County.",
        "In Pellham v. Ostrava County, the trial court ruled for the county before certiorari was granted by the Supreme Court.",
    ],
)
def test_lower_court_rulings_are_history(fact):
    assert DecisionGrounding().check(fact, CASE) is None


@pytest.mark.parametrize(
    "fact",
    [
        "The Supreme Court reversed the judgment of the Tenth Circuit in Pellham v. Ostrava County.",
        "Pellham v. Ostrava County was decided in favor of Dara Pellham by the U.S. Supreme Court.",
        "In Pellham v. Ostrava County, the Court ruled in favor of Dara Pellham.",
        "The Justices sided with Ostrava County in a Supreme Court ruling.",
        "The Ninth Circuit ruled for the county, but the Supreme Court reversed in Pellham v. Ostrava County.",
    ],
)
def test_the_supreme_courts_own_ruling_is_the_outcome(fact):
    v = DecisionGrounding().check(fact, CASE)
    assert v is not None and v.outcome and v.effective_date == dt.date(2021, 3, 2)


# -- salary: which contract ---------------------------------------------------------------

PLAYER = {
    "cutoff_date": "2022-07-05", "player": "Tomas Varga Jr.", "league": "NBA", "team": "Pacers",
    "previous_team": "Hornets", "signing_date": "2022-07-06", "aav": 9_000_000.0,
    "total_value": 27_000_000.0, "years": 3,
}


@pytest.mark.parametrize(
    "fact",
    [
        "On July 3, 2018, the Hornets signed Tomas Varga to a 4-year deal worth $9M per year.",  # dated years earlier
        "Tomas Varga signed a 3-year, $27 million contract with the Hornets.",                # the old team
        "It was reported that Tomas Varga inked a contract carrying an AAV of $9.35M.",       # precise and different
        "Varga agreed to a 2-year deal worth $9,000,000 per year in Q3 2019.",                # an earlier quarter
    ],
)
def test_an_earlier_contract_is_not_the_outcome(fact):
    assert ContractGrounding().check(fact, PLAYER) is None


@pytest.mark.parametrize(
    "fact",
    [
        "Tomas Varga signed a 3-year, $27 million contract with the Pacers.",
        "The Pacers signed Varga to a 3-year deal worth $9M per year.",          # surname without "Jr."
        "On July 6, 2022, Tomas Varga Jr. agreed to a deal worth about $28 million.",  # hedged amount
        "It was reported that Tomas Varga inked a contract carrying an AAV of $9.0M.",
    ],
)
def test_the_new_contract_is_the_outcome(fact):
    v = ContractGrounding().check(fact, PLAYER)
    assert v is not None and v.outcome and v.effective_date == dt.date(2022, 7, 6)


def test_nhl_team_abbreviations():
    ctx = {**PLAYER, "league": "NHL", "team": "WPG", "previous_team": "SJS"}
    assert ContractGrounding().check("Tomas Varga signed a 3-year, $27 million contract with the SJS.", ctx) is None
    assert ContractGrounding().check("The Jets signed Tomas Varga to a 3-year deal worth $9M per year.", ctx) is not None


# -- index changes ------------------------------------------------------------------------

CHANGES = pd.DataFrame(
    {
        "date": pd.to_datetime(["2021-05-10", "2023-02-01", "2024-08-15"]),
        "add": ["KRL", "R", "KRLX"],
        "remove": ["OLDC", "", "KRL"],
    }
)
NAMES = {"KRL": ["Korvel Systems Inc."], "KRLX": ["Korvel Systems Inc."], "R": ["Rundle Energy"]}


@pytest.mark.parametrize(
    "fact, day",
    [
        ("S&P Dow Jones Indices added R to the S&P 500 index.", "2023-02-01"),           # one-letter ticker
        ("S&P Dow Jones Indices added Rundle Energy to the S&P 500.", "2023-02-01"),
        ("The index committee removed KRL from the S&P 500.", "2024-08-15"),
        ("On May 10, 2021, Korvel Systems (KRL) was added to the S&P 500.", "2021-05-10"),  # symbol beats name
        ("Korvel Systems (KRLX) was added to the S&P 500.", "2024-08-15"),
    ],
)
def test_index_changes_by_the_index_provider_and_ticker_changes(fact, day):
    v = IndexChangeGrounding(CHANGES, NAMES).check(fact, {})
    assert v is not None and v.effective_date.isoformat() == day


def test_index_forward_word_is_lower_case_will_only():
    g = IndexChangeGrounding(CHANGES, NAMES)
    assert g.check("Rundle Energy will be added to the S&P 500.", {}) is None
    names = {**NAMES, "R": ["Will Rundle Energy"]}
    assert IndexChangeGrounding(CHANGES, names).check("Will Rundle Energy joined the S&P 500.", {}) is not None


# -- forecast: the quoted question ---------------------------------------------------------

QUESTION = {
    "question": "Will the average price of Grade A eggs in Ruritania have increased by 2025-06-30 as compared to 2025-03-31?",
    "resolution_date": "2025-06-30", "resolved_to": 1.0, "cutoff_date": "2025-04-01",
}


@pytest.mark.parametrize(
    "fact",
    [
        'The answer to "Will the average price of Grade A eggs in Ruritania have increased by 2025-06-30 as compared to 2025-03-31?" turned out to be yes.',
        'The answer to "Will the average price of Grade A eggs in Ruritania have incr..." was no.',
        "On June 30, 2025, the question \u201cWill the average price of Grade A eggs in Ruritania have increased\u2026\u201d resolved NO.",
    ],
)
def test_a_quoted_question_with_its_answer_is_the_outcome(fact):
    v = ResolutionGrounding().check(fact, QUESTION)
    assert v is not None and v.outcome and v.effective_date == dt.date(2025, 6, 30)


@pytest.mark.parametrize(
    "fact",
    [
        'Forecasters asked "Will the average price of Grade A eggs in Ruritania have increased by 2025-06-30?" and many said it will.',
        'The question "Will the average price of Grade A eggs in Ruritania have increased by 2025-06-30?" is no longer open to new forecasts.',
        'The answer to "Will the average price of milk in Ruritania have increased by 2025-06-30?" turned out to be yes.',
    ],
)
def test_quoting_without_an_answer_or_another_question_is_not_the_outcome(fact):
    assert ResolutionGrounding().check(fact, QUESTION) is None


# -- company names --------------------------------------------------------------------------

def test_company_names_starting_with_a_digit():
    assert mentioned_tickers("7Seas Holdings ended the period at $12.10 a share.", ["SVN", "ABC"],
                             ["7Seas Holdings Inc.", "Abacus Corp"]) == ["SVN"]
