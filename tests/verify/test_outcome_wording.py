"""The instance's own outcome in any wording, with precision, for the salary
contract and the legal ruling: the generic mechanisms (money with its precision, contract
length, teams by city, verbs of signing; decision signals, who decided, case-name variants,
ties to the case) and the hard clean claims next to them. Names and wordings are invented."""

from __future__ import annotations

import datetime as dt

import pytest

from anachron.names import team_key, teams_named
from anachron.tasks.legal.grounding import DecisionGrounding, case_aliases, case_mentions, states_ruling
from anachron.tasks.salary.grounding import ContractGrounding, contract_years, money_amounts, other_people, states_contract
from anachron.verify.categorize import categorize
from anachron.tasks.registry import get_task

# -- salary: mechanisms -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,value,half,approx,per_year",
    [
        ("a deal worth $25.5M", 25_500_000, 50_000, False, False),
        ("US$ 25.5 million in all", 25_500_000, 50_000, False, False),
        ("some 40 million dollars", 40_000_000, 500_000, True, False),
        ("a minimum of $950K", 950_000, 500, False, False),
        ("worth 120 million over four years", 120_000_000, 500_000, False, False),
        ("$31.2 million a season", 31_200_000, 50_000, False, True),
        ("an AAV of $9.75M", 9_750_000, 5_000, False, True),
        ("about $18,000,000 per year", 18_000_000, 0.5, True, True),
        ("$14 million/yr", 14_000_000, 500_000, False, True),
    ],
)
def test_money_amounts_keep_their_precision(text, value, half, approx, per_year):
    (a,) = money_amounts(text)
    assert (a.value, a.half_unit, a.approx, a.per_year) == (pytest.approx(value), pytest.approx(half), approx, per_year)


@pytest.mark.parametrize("text", ["a 3-year deal", "born in 1994", "scored 31 points", "a 3m jump", "ranked 12th"])
def test_numbers_that_are_not_dollar_amounts(text):
    assert money_amounts(text) == []


@pytest.mark.parametrize(
    "text,years",
    [
        ("a five-year extension", {5}), ("a 2-year pact", {2}), ("spread over three seasons", {3}),
        ("for 4 yrs", {4}), ("the 31-year-old guard", set()), ("his 2020-21 season", set()),
    ],
)
def test_contract_years(text, years):
    assert contract_years(text) == years


def test_teams_by_city_member_and_full_name():
    assert teams_named("Sacramento landed him", "NBA") == {"SAC"}
    assert teams_named("he became a Laker", "NBA") == {"LAL"}
    assert teams_named("a deal with Los Angeles", "NBA") == {"LAL", "LAC"}  # a shared city names both
    assert teams_named("Tampa Bay signed him", "NHL") == {"TBL"}
    assert team_key("NBA", "Golden State Warriors") == "GSW" and team_key("NHL", "Vegas Golden Knights") == "VGK"
    assert teams_named("the Houston Rockets", "MLB") == set()  # a league without a table names nothing


# -- salary: the contract in any wording ---------------------------------------------------

ROOKIE = {
    "cutoff_date": "2021-07-31", "player": "Odell Prentiss", "league": "NBA", "team": "Kings",
    "previous_team": "Magic", "signing_date": "2021-08-01", "aav": 11_000_000.0,
    "total_value": 44_000_000.0, "years": 4,
}


@pytest.mark.parametrize(
    "fact",
    [
        "Prentiss put pen to paper on a 4-year pact with Sacramento.",          # city + length, no amount
        "Sacramento will pay Prentiss $11 million per season.",                   # a plain future: terms agreed
        "Prentiss took $44M over four years to join the Kings.",                  # total over stated years
        "Prentiss came to terms with the Kings.",
        "The Kings handed Prentiss a four-year contract worth $43 million.",      # reported figure, corroborated
        "Prentiss's deal with Sacramento averages $11M annually.",
        "He signed with Sacramento for four years.",                               # only "he", no other person
        "Prentiss became a Sacramento King in August.",
        "Prentiss made his Kings debut in October.",                              # presupposes the signing
        "Prentiss is averaging 14.2 points for the Kings.",                         # playing for the new team now
        "Prentiss missed 30 games in his first season with Sacramento.",            # his time there
        "Sacramento acquired Prentiss in a sign-and-trade with Orlando.",
        "Prentiss reached an agreement with Sacramento on a four-year, $44 million deal.",
    ],
)
def test_the_contract_stated_in_other_words_is_the_outcome(fact):
    v = ContractGrounding().check(fact, ROOKIE)
    assert v is not None and v.outcome and v.effective_date == dt.date(2021, 8, 1), fact
    assert categorize(fact, {"task": get_task("salary"), **ROOKIE})[0] == "A4"  # the categoriser agrees


@pytest.mark.parametrize(
    "fact",
    [
        "Prentiss signed a three-year rookie deal with Orlando in 2017.",          # earlier contract, dated
        "Prentiss re-signed with the Magic for $11 million a year.",               # the previous team
        "The Kings met with Prentiss on the first night of free agency.",          # courtship
        "Sacramento was considered the favorite to land Prentiss.",
        "Prentiss could sign with the Kings for around $11 million a year.",      # hedged
        "The Kings signed Dashiell Moore to a four-year, $44 million contract.",  # another player
        "The Kings signed Prentiss's teammate Dashiell Moore.",                    # another person named
        "The salary cap rose to $112.4 million for the 2021-22 season.",           # league-wide figure
        "Prentiss averaged 16.8 points and 5.1 rebounds for Orlando.",             # statistics
        "Prentiss is averaging 16.8 points for Orlando.",                           # the previous team, now
        "Prentiss averaged 9 points against the Kings.",                            # the new team as opponent
        "Prentiss turned down a $10.2 million qualifying offer.",                 # precise, different amount
        "Prentiss originally signed with the Kings as an undrafted rookie.",       # an earlier stint
        "Prentiss agreed to a two-year deal with the Kings.",                       # another length
        "The Kings acquired Prentiss's draft rights.",                               # a draft, years before
        "Prentiss's previous contract paid him $11 million a year.",                  # the old deal, same size
    ],
)
def test_other_contracts_courtship_and_league_figures_are_not_the_outcome(fact):
    assert ContractGrounding().check(fact, ROOKIE) is None, fact


def test_amount_tolerance_needs_corroboration():
    # 2.3% off: a report's rounding when the length or the new team comes with it, not alone
    assert states_contract("Prentiss got $45 million over four years.", ROOKIE)
    assert states_contract("Prentiss got $45 million from Sacramento.", ROOKIE)
    assert states_contract("Prentiss's contract pays $45 million.", ROOKIE) is None
    assert states_contract("Prentiss's contract pays about $45 million.", ROOKIE)  # hedged: reporting tolerance


def test_a_re_signing_needs_words_of_staying():
    same = {**ROOKIE, "team": "Magic", "previous_team": "Magic"}
    assert states_contract("Prentiss re-signed with Orlando.", same)
    assert states_contract("Prentiss joined the Magic as a rookie.", same) is None  # years before: not news


def test_other_people_are_names_that_are_not_the_player_or_a_team():
    assert other_people("On July 3 the Orlando Magic signed Dashiell Moore.", ROOKIE) == ["Dashiell Moore"]
    assert other_people("Odell Prentiss's Sacramento Kings debut", ROOKIE) == []


# -- legal: names of the case ---------------------------------------------------------------

CASE = {
    "cutoff_date": "2022-06-20", "case_name": "Varnell Freight Lines, Inc. v. Okafor", "court": "Supreme Court of the United States",
    "lower_court": "United States Court of Appeals for the Eighth Circuit",
    "petitioner": "Varnell Freight Lines, Inc.", "respondent": "Chidi Okafor, et al.", "decision_date": "2022-06-21",
    "facts": "Okafor, a long-haul driver, sued Varnell Freight under the state wage law for unpaid loading time. "
             "The district court compelled arbitration; the Eighth Circuit reversed, holding the transportation-worker "
             "exemption applied.",
    "question": "Does the transportation-worker exemption of the Federal Arbitration Act cover drivers who load trucks?",
}


def test_case_aliases_drop_suffixes_and_keep_short_names():
    aliases = case_aliases(CASE)
    assert "varnell freight lines" in aliases and "varnell" in aliases and "chidi okafor" in aliases and "okafor" in aliases


@pytest.mark.parametrize(
    "fact,this,other",
    [
        ("In Varnell Freight Lines v. Okafor, ...", True, False),           # without "Inc."
        ("In Varnell Freight Lines, Inc. v. Okafor et al., ...", True, False),
        ("Okafor v. Varnell, decided ...", True, False),                       # sides swapped, short name
        ("In Varnell v. Ruiz, ...", False, True),                               # a party's other case
        ("In Okafor v. United States, ...", False, True),
        ("In re Varnell Freight Lines, ...", False, True),
    ],
)
def test_case_cites(fact, this, other):
    cites, _, other_case = case_mentions(fact, CASE)
    assert (bool(cites), other_case) == (this, other)


# -- legal: the ruling in any wording -----------------------------------------------------


@pytest.mark.parametrize(
    "fact",
    [
        "By a 6-3 vote the justices held that the exemption covers drivers who load trucks.",
        "A unanimous Court sided with the driver.",
        "Justice Gorsuch wrote for the majority; Alito dissented.",
        "Kagan was the only justice in dissent.",
        "The Eighth Circuit's judgment was affirmed.",                             # passive, the court under review
        "The Court affirmed the Eighth Circuit.",
        "The Supreme Court ruled against Varnell.",
        "Varnell lost at the Supreme Court.",
        "The high court sent the arbitration dispute back to the Eighth Circuit.",
        "Okafor v. Varnell came out 7-2 for the drivers.",
        "The justices split 5-4, with the majority reading the exemption broadly.",
        "The Court held that loading drivers fall within the transportation-worker exemption.",  # subject matter
        "The Court affirmed.",
        "The petitioner lost, 6-3.",
    ],
)
def test_the_ruling_in_other_words_is_the_outcome(fact):
    v = DecisionGrounding().check(fact, CASE)
    assert v is not None and v.outcome and v.effective_date == dt.date(2022, 6, 21), fact
    assert categorize(fact, {"task": get_task("legal"), **CASE})[0] == "A4"


@pytest.mark.parametrize(
    "fact",
    [
        "The Supreme Court granted certiorari in Varnell Freight Lines v. Okafor in December 2021.",  # procedure
        "The case was argued on April 25, 2022.",
        "The Eighth Circuit reversed the order compelling arbitration.",             # the decision under review
        "The district court compelled arbitration in 2020.",
        "An arbitrator ruled for Varnell on the overtime claims.",                   # not a court
        "The state labor board found that Varnell owed back pay.",                    # an agency
        "A jury found for Okafor on the wage claim.",
        "In Varnell v. Ruiz, the Court held that trucking firms may classify drivers as contractors.",  # precedent, same party
        "In Varnell Freight Lines v. Okafor (2009), the Court upheld a different arbitration clause.",  # same name, years before
        "The Supreme Court has long held that arbitration clauses are enforced as written.",  # doctrine
        "In 2019 the Court sided with a railroad in a similar exemption dispute.",    # dated before the cutoff
        "The Court ruled 8-0 in Sorensen that seamen are transportation workers.",     # another case by short name
        "The Court has a 6-3 conservative majority.",                                # make-up, not a vote
        "The justices will decide whether the exemption covers loaders.",             # prediction
        "The Supreme Court rejected a challenge by Varnell to a port-security fee.",   # a party's other dispute
        "The Irish Supreme Court ruled against a trucking union.",                    # a foreign court
        "The Eighth Circuit's panel split 2-1.",                                     # not the Court's size
    ],
)
def test_history_precedents_and_procedure_are_not_the_outcome(fact):
    assert DecisionGrounding().check(fact, CASE) is None, fact


def test_appellate_case_the_court_of_appeals_decides():
    ctx = {**CASE, "court": "United States Court of Appeals for the Eighth Circuit", "case_name": "Okafor v. Varnell Freight Lines"}
    assert states_ruling("The Eighth Circuit reversed in Okafor v. Varnell Freight Lines.", ctx)
    assert states_ruling("In Okafor v. Varnell Freight Lines, the district court compelled arbitration.", ctx) is None


def test_a_state_party_inside_a_state_courts_name_is_that_court():
    ctx = {**CASE, "case_name": "Braddock v. Idaho", "petitioner": "Lyle Braddock", "respondent": "Idaho",
           "lower_court": "Supreme Court of Idaho", "facts": "Braddock was convicted of arson.", "question": "Was the search lawful?"}
    assert states_ruling("In Braddock v. Idaho, the Supreme Court of Idaho ruled against Lyle Braddock.", ctx) is None
    assert states_ruling("The Idaho Supreme Court upheld the conviction.", ctx) is None
    assert states_ruling("The Supreme Court reversed the Idaho Supreme Court.", ctx)  # the court below, reviewed


def test_a_generic_party_written_as_the_case_lists_it_ties_the_ruling_to_the_case():
    ctx = {**CASE, "case_name": "Quill v. United States", "petitioner": "Ada Quill", "respondent": "United States of America",
           "facts": "", "question": ""}
    assert states_ruling("The justices sided with the United States of America.", ctx)
    assert states_ruling("The United States Supreme Court heard the appeal.", ctx) is None  # no ruling, no party
    assert states_ruling("The justices sided with the United States in a dispute over import duties.", ctx) is None


def test_a_ruling_inside_a_condition_decides_nothing():
    from anachron.tasks.legal.grounding import DecisionGrounding

    ctx = {"cutoff_date": "2031-05-10", "case_name": "Ostrander v. Lindqvist", "court": "Supreme Court of the United States",
           "docket": "30-1436", "petitioner": "Ostrander", "respondent": "Lindqvist", "decision_date": "2031-05-11",
           "outcome": "petitioner", "petitioner_wins": 1, "facts": "", "lower_court": "United States Court of Appeals for the Fifth Circuit",
           "question": ""}
    fact = "The Fifth Circuit held that it lacked jurisdiction over Ostrander's claim, a view that binds courts there unless the Supreme Court reverses."
    assert DecisionGrounding().check(fact, ctx) is None
    assert DecisionGrounding().check("The Supreme Court reversed the Fifth Circuit in Ostrander v. Lindqvist.", ctx) is not None
