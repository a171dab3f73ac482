"""Realized vs prospective: the grammatical relations that make a date the period a forecast,
plan, target or option is about rather than the date of an event (docs/verification.md)."""

import datetime as dt

import pytest

from anachron.verify.dates import find_periods
from anachron.verify.grammar import expectation_complement, modifies_planned_noun, planned_subject
from anachron.verify.layers.rules import date_scopes
from anachron.verify.pipeline import verify_claim


def _scopes(fact):
    return date_scopes(fact, [(p.pos, p.pos + len(p.text)) for p in find_periods(fact)])


def _span(text, part):
    i = text.index(part)
    return i, i + len(part)


@pytest.mark.parametrize("text, part", [
    ("Halvorsen trimmed its full-year 2031 adjusted EPS guidance to $4.10-$4.20.", "full-year 2031"),
    ("Ostrander unveiled a 2031 capital spending budget of $2 billion.", "2031"),
    ("Reyes holds a $9 million player option for the 2031-32 season.", "2031-32"),
    ("The board approved a buyback target for fiscal 2031.", "fiscal 2031"),
])
def test_a_date_that_modifies_a_planning_noun(text, part):
    assert modifies_planned_noun(text, *_span(text, part))


@pytest.mark.parametrize("text, part", [
    ("Ostrander's 2031 revenue rose 4% to $3 billion.", "2031"),
    ("The 2031 season opened with a loss to the Pumas.", "2031"),
    ("Halvorsen reported 2031 sales that beat guidance.", "2031"),
])
def test_a_date_of_a_realized_noun_phrase(text, part):
    assert not modifies_planned_noun(text, *_span(text, part))


def test_a_planning_subject_and_its_predicate():
    assert planned_subject("Federation projections put the ")
    assert planned_subject("The league's revised projection puts the ")
    assert planned_subject("The consensus estimate calls for ")
    assert not planned_subject("The plan passed in ")  # the plan's passing happened
    assert not planned_subject("Analysts trimmed their estimates after the stock fell in ")


def test_the_complement_of_a_verb_of_expectation_or_commitment():
    assert expectation_complement("The weather office expected dry conditions to last through ")
    assert expectation_complement("Marlowe Air pledged to retire its oldest jets by ")
    assert expectation_complement("The ministry is aiming for ")
    assert not expectation_complement("Bookings rose faster than expected in ")
    assert not expectation_complement("Revenue came in as expected in ")
    assert not expectation_complement("Target Corp raised wages to $15 in ")  # a name, not the verb


@pytest.mark.parametrize("fact", [
    "Halvorsen trimmed its full-year 2031 adjusted EPS guidance to $4.10-$4.20 after weak third-quarter orders.",
    "Federation projections put the 2032-33 salary cap at about $140 million.",
    "The weather office expected dry conditions to last through February 2032.",
    "Marlowe Air pledged to retire its oldest jets by 2035.",
])
def test_a_prospective_date_does_not_date_the_claim(fact):
    assert "prospective" in _scopes(fact)
    out = verify_claim(fact, "2031-10-20", dt.date(2031, 11, 30))
    assert out["verdict"] == "clean", out["reason"]


def test_a_realized_later_period_still_leaks():
    # the same words, but the later period's results are what the claim reports
    fact = "Halvorsen reported full-year 2031 adjusted EPS of $4.15, above its guidance."
    out = verify_claim(fact, "2031-10-20", dt.date(2031, 11, 30))
    assert out["verdict"] == "leaked"
    fact = "The 2032-33 salary cap was set at $141 million."
    assert verify_claim(fact, "2031-10-20", dt.date(2031, 11, 30))["verdict"] == "leaked"


@pytest.mark.parametrize("fact", [
    "Okafor later signed with the Pumas.",
    "The merger went on to collapse under regulatory pressure.",
    "The airline would eventually ground its whole fleet.",
    "Halvorsen ended up selling the division to a rival.",
    "The regulator announced its decision later that month.",
])
def test_hindsight_with_no_earlier_date_is_after_the_answer_date(fact):
    out = verify_claim(fact, "2031-05-01", dt.date(2031, 11, 30))
    assert out["verdict"] == "leaked" and out["effective_date"] == "2031-12-01", out["reason"]
    assert "answer's date" in out["reason"]


@pytest.mark.parametrize("fact, declared", [
    ("Okafor was drafted in 2024 and later signed with the Pumas.", "2026-07-01"),  # told from 2024
    ("Halvorsen announced that the unit would eventually become a separate company.", "2031-05-01"),  # reported speech
    ("If confirmed, the nominee would eventually lead the agency.", "2031-05-01"),  # a condition
    ("The plant will later switch to solar power.", "2031-05-01"),  # the future, not hindsight
    ("The ruling can be appealed no later than June.", "2031-05-01"),
    ("The vote was pushed to a later date.", "2031-05-01"),
])
def test_what_is_not_hindsight(fact, declared):
    assert verify_claim(fact, declared, dt.date(2031, 11, 30))["verdict"] != "leaked"


@pytest.mark.parametrize("fact, declared, cutoff, leaked", [
    ("The following January, the port was closed by a strike.", None, "2031-07-12", True),  # the next January
    ("In March 2030 the plant opened; the following January it closed.", "2030-03-01", "2031-07-12", False),
    ("That summer the club signed three players.", "2031-05-01", "2031-11-30", True),  # summer 2032
    ("In 2027 he was drafted, and that summer he signed.", "2027-06-01", "2031-11-30", False),
    ("Okafor was moved to the Pumas at that season's trade deadline.", None, "2031-11-22", True),
])
def test_relative_months_and_seasons_count_from_the_answer_date(fact, declared, cutoff, leaked):
    out = verify_claim(fact, declared, dt.date.fromisoformat(cutoff))
    assert (out["verdict"] == "leaked") == leaked, out["reason"]


@pytest.mark.parametrize("fact", [
    "The club must decide on the option by the 2032 deadline.",
    "Okafor has to choose a team by June 2032.",
])
def test_obligations_are_prospective(fact):
    assert verify_claim(fact, "2031-10-24", dt.date(2031, 11, 30))["verdict"] == "clean"


def test_a_past_obligation_is_realized():
    assert verify_claim("Okafor had to sit out in March 2032.", "2031-10-24", dt.date(2031, 11, 30))["verdict"] == "leaked"


@pytest.mark.parametrize("fact", [
    "The statute takes effect November 1, 2032.",  # a schedule in the present
    "The court said it will issue its last opinions on Monday, June 29, 2032.",  # a weekday before the date
    "The trade cannot be completed until the moratorium lifts on July 6, 2032.",
    "Halvorsen is targeting a first-quarter 2032 close for the purchase.",  # the date in the verb's object
])
def test_schedules_abilities_and_targets_are_prospective(fact):
    assert verify_claim(fact, "2031-10-24", dt.date(2031, 11, 30))["verdict"] == "clean"


def test_hindsight_is_a_verb_phrase_not_the_subject_of_a_later_modal():
    fact = "The Court went on to overrule the doctrine, holding that judges must decide for themselves."
    assert verify_claim(fact, "2031-05-01", dt.date(2031, 11, 30))["verdict"] == "leaked"


def test_that_month_with_no_earlier_date_is_the_next_one():
    out = verify_claim("That December, Okafor hit a buzzer-beater to beat the Pumas.", None, dt.date(2031, 8, 4))
    assert out["verdict"] == "leaked" and out["effective_date"] == "2031-12-01"


@pytest.mark.parametrize("fact", [
    "The agency reported that June 2031 was the hottest June on record.",  # a conjunction, then a dated month
    "Analysts said that summer bookings rose.",  # "that" opens a clause, not a phrase
])
def test_that_as_a_conjunction_is_no_relative_date(fact):
    assert verify_claim(fact, "2031-07-01", dt.date(2031, 10, 16))["verdict"] == "clean"


@pytest.mark.parametrize("fact", [
    "The new act requires Halvorsen to sell its Corran unit by January 19, 2033.",  # an obligation's infinitive
    "Marlowe says its jet remains on track for first deliveries in July 2032.",
    "Marlowe's U.S. service is set to launch on November 12, 2032.",  # "U.S." ends no clause
    "Under the act the levy is reduced to zero starting in 2033.",  # the onset of a change
    "The rule has a compliance date of May 28, 2033.",  # a scheduled date
    "The U.S. goal: a 50% cut in emissions by 2040.",  # a planning noun introduces its content
])
def test_more_prospective_grammar(fact):
    assert verify_claim(fact, "2031-10-24", dt.date(2031, 11, 30))["verdict"] == "clean", fact


def test_a_day_an_event_is_set_for_is_prospective():
    assert verify_claim("The premier has called a snap election for June 8, 2032.", "2032-04-18", dt.date(2032, 4, 30))["verdict"] == "clean"
    # a period a figure covers is not a schedule
    assert verify_claim("Halvorsen reported record revenue for Q2 2032.", "2032-04-18", dt.date(2032, 4, 30))["verdict"] == "leaked"


# -- conditions, web addresses, relative time with a complement ---------------------------------

CUT = dt.date(2031, 7, 1)


@pytest.mark.parametrize("fact", [
    "This market resolves Yes if Korvath Dynamics announces the merger between August 1, 2031 and December 31, 2031.",
    "If no winner is declared by June 30, 2032, 11:59 PM ET, the question resolves to Other.",
    "The contract pays a bonus unless the team misses the 2032 playoffs.",
])
def test_a_date_inside_a_condition_is_hypothetical(fact):
    assert verify_claim(fact, None, CUT)["verdict"] != "leaked"


def test_a_date_before_the_condition_still_dates_the_fact():
    fact = "Korvath Dynamics reported record revenue in March 2032, even if margins fell."
    assert verify_claim(fact, None, CUT)["verdict"] == "leaked"


def test_a_date_in_a_web_address_names_a_page():
    fact = "Resolves to the outcome of the question at https://example.org/questions/411/merger-closes-before-july-2032/."
    assert verify_claim(fact, None, CUT)["verdict"] == "undated"
    assert verify_claim("Korvath Dynamics closed the merger in July 2032.", None, CUT)["verdict"] == "leaked"


def test_years_after_an_event_are_not_counted_from_an_earlier_date():
    # the discharge came 30 years before the application; the date is the application's
    fact = "On June 3, 2021, more than 30 years after he was discharged, Mr. Ostrander applied for benefits."
    out = verify_claim(fact, None, CUT)
    assert out["verdict"] == "clean" and out["effective_date"] == "2021-06-03"
    # an adverbial "N years later" still counts from the date before it
    assert verify_claim("He applied on June 3, 2030 and was approved two years later.", None, CUT)["verdict"] == "leaked"


def test_text_not_written_as_of_the_cutoff_has_no_hindsight():
    fact = "The officers subsequently arrested Ostrander, and two days later he was released."
    assert verify_claim(fact, None, CUT)["verdict"] == "leaked"  # an answer written as of the cutoff
    assert verify_claim(fact, None, CUT, as_of_cutoff=False)["verdict"] == "undated"  # a narrative of unknown date
    assert verify_claim("He was held until May 4, when the charges were dropped.", None, CUT, as_of_cutoff=False)["verdict"] == "undated"


@pytest.mark.parametrize("fact", [
    "This market may not resolve to No until the December 2031 report is issued.",
    "Once the September 2031 figures are published, revisions will not count.",
    "The question resolves when the leaderboard is checked on October 31, 2031.",
])
def test_a_temporal_clause_in_the_present_refers_to_the_future(fact):
    assert verify_claim(fact, None, CUT)["verdict"] != "leaked"


def test_a_temporal_clause_in_the_past_dates_the_fact():
    assert verify_claim("Once the September 2031 figures were published, the stock fell.", None, CUT)["verdict"] == "leaked"
    # an initial or a title does not end the sentence that holds the condition
    fact = "The market resolves Yes if Robert F. Kennedy Jr. announces a finding by October 31, 2031."
    assert verify_claim(fact, None, CUT)["verdict"] != "leaked"


@pytest.mark.parametrize("text", ["Arizona enacted H.B. 2031, which restricts ballot collection.",
                                  "The legislature passed Senate Bill 2032 in committee.",
                                  "The court docketed it as Case No. 2033."])
def test_a_number_that_names_a_bill_or_a_case_is_no_year(text):
    assert [p.text for p in find_periods(text)] == []
    assert verify_claim(text, None, CUT)["verdict"] == "undated"


def test_a_year_after_of_is_still_a_year_and_a_dotted_abbreviation_ends_no_sentence():
    from anachron.verify.citations import split_sentences

    assert [p.text for p in find_periods("the Voting Rights Act of 2032")] == ["2032"]
    assert split_sentences("Arizona passed H.B. 2031, which bans it. The U.S. Supreme Court heard it.") == [
        "Arizona passed H.B. 2031, which bans it.", "The U.S. Supreme Court heard it."]


def test_a_month_that_names_a_statistical_release_is_the_period_its_figures_cover():
    # the figures of "the July jobs report" are known once July has ended, whatever the declared date says
    fact = "The July jobs report showed unemployment climbing to 4.6%."
    out = verify_claim(fact, "2031-07-05", dt.date(2031, 7, 12))
    assert out["verdict"] == "leaked" and out["effective_date"] > "2031-07-12"
    # the June report, public on the declared date, is clean; a schedule of the July one is prospective
    assert verify_claim("The June jobs report showed payrolls up 150,000.", "2031-07-05", dt.date(2031, 7, 12))["verdict"] == "clean"
    assert verify_claim("The July jobs report will be published on August 2.", "2031-07-05", dt.date(2031, 7, 12))["verdict"] != "leaked"
    # a month name alone, without a preposition or a release, is no date ("May" the verb, a name)
    assert verify_claim("Unemployment May rise further.", None, dt.date(2031, 7, 12))["verdict"] == "undated"


def test_a_federal_agency_reports_on_the_government_fiscal_year():
    from anachron.verify.pipeline import FederalCalendar

    fact = "U.S. Customs and Border Protection reported a record 2.9 million encounters in fiscal year 2031."
    out = verify_claim(fact, "2031-06-15", dt.date(2031, 6, 20))
    assert out["verdict"] == "leaked" and out["effective_date"] > "2031-09-30"  # FY2031 ended September 30
    assert FederalCalendar().quarter_end(2031, 1) == dt.date(2030, 12, 31)
    # a company's fiscal year stays unknown without its calendar: no federal year is assumed
    assert verify_claim("Korvath Dynamics reported fiscal 2031 revenue of $6 billion.", "2031-06-15", dt.date(2031, 6, 20))["verdict"] != "leaked"


@pytest.mark.parametrize("fact", [
    "Korvath told investors that the 2032 sulfur cap should widen its refining margins.",
    "Ostrander turns 35 in July 2032.",
    "Korvath could report record revenue in Q3 2032.",
])
def test_a_modal_of_possibility_or_a_coming_birthday_is_prospective(fact):
    assert verify_claim(fact, "2031-10-24", dt.date(2031, 11, 30))["verdict"] != "leaked"


def test_a_past_possibility_still_dates_the_fact():
    assert verify_claim("Korvath may have reported record revenue in Q3 2032.", "2031-10-24", dt.date(2031, 11, 30))["verdict"] == "leaked"


def test_a_verb_of_scheduling_sets_its_object_for_a_time_to_come():
    fact = "The committee chair scheduled hearings for Judge Ostrander to begin March 20, 2032."
    assert verify_claim(fact, "2032-02-16", dt.date(2032, 3, 10))["verdict"] != "leaked"
    assert verify_claim("The committee held hearings on March 20, 2032.", "2032-02-16", dt.date(2032, 3, 10))["verdict"] == "leaked"


def test_a_reduced_relative_and_a_list_of_names_stay_in_their_clause():
    fact = "Ostrander is expected to captain Germany at the 2032 World Cup, co-hosted by Spain, Portugal and Morocco from late August."
    assert verify_claim(fact, "2032-04-29", dt.date(2032, 6, 29))["verdict"] != "leaked"
    # a new clause after the list still dates its own fact
    assert verify_claim("He will visit Paris, Berlin and Rome, and he signed the deal in May 2033.", "2032-04-29",
                        dt.date(2032, 6, 29))["verdict"] == "leaked"


@pytest.mark.parametrize("fact", [
    "La Nina is favored to develop during August-October 2032, the Climate Prediction Center said.",
    "The league has scheduled the 2033 championship final for July 19, 2033.",
    "The sequel is due November 21, 2032, after the first film's record opening.",
    "Negotiations can begin at 6 p.m. ET on November 20, 2032, with signings allowed from November 22.",
    "The postponed games have been rescheduled for July 23 to August 8, 2033.",
    "Korvath is targeting output of about 900,000 barrels a day by the end of 2034.",
    "The company was required to pay the fine by March 2033.",
])
def test_more_ways_of_stating_what_is_to_come(fact):
    assert verify_claim(fact, "2031-11-20", dt.date(2031, 11, 30))["verdict"] != "leaked", fact


def test_what_happened_on_those_days_still_dates_the_fact():
    for fact in ("The sequel opened on November 21, 2032 with $150 million.",
                 "Korvath produced 900,000 barrels a day in 2034.",
                 "Okafor was moved to the Pumas at the 2032 trade deadline."):
        assert verify_claim(fact, "2031-11-20", dt.date(2031, 11, 30))["verdict"] == "leaked", fact


def test_a_superlative_of_a_period_ranks_the_whole_period():
    fact = "The agency confirmed 2032 as the warmest year on record."
    out = verify_claim(fact, "2032-07-10", dt.date(2032, 7, 12))
    assert out["verdict"] == "leaked" and out["effective_date"] > "2032-12-01"
    # a forecast of the ranking is prospective; a date of the statement beside it is not ranked
    assert verify_claim("The agency says 2032 is on track to be the warmest year on record.", "2032-07-01",
                        dt.date(2032, 7, 12))["verdict"] != "leaked"
    assert verify_claim("Korvath had its best quarter ever, the company said in February 2032.", "2032-02-01",
                        dt.date(2032, 2, 5))["verdict"] != "leaked"


@pytest.mark.parametrize("fact", [
    "Korvath's board declared a quarterly dividend of $0.82 per share, payable December 31, 2031.",
    "The league projects the 2032-33 salary cap at $150 million.",
    "For 2032-33 the mid-level exception is projected at around $14 million.",
    "Boston sent Ostrander and a 2034 second-round pick to Denver.",
    "Negotiations with free agents open Dec. 20, 2031 at 6 p.m. ET.",
    "A federal judge has set the lawsuit for an expedited jury trial in spring 2032.",
    "The question resolves Yes if the leaderboard, as checked on December 31, 2031, shows it first.",
    "The Court has set Thursday, December 23, 2031 as an opinion day.",
    "NATO allies agreed to raise defense spending to 5% of GDP by 2035.",
    "Eligible users have until December 3, 2031 to register their claims.",
    "Ostrander awaits a ruling in Korvath v. Lindqvist, due in June 2032.",
])
def test_payments_projections_picks_and_set_days_are_to_come(fact):
    assert verify_claim(fact, "2031-11-20", dt.date(2031, 11, 30))["verdict"] != "leaked", fact


def test_the_same_kinds_of_fact_when_they_happened():
    for fact in ("The dividend was paid on December 31, 2031.",
                 "The league set a record for attendance in 2032.",
                 "The question resolved Yes on December 31, 2031.",
                 "Users had registered 2 million claims by December 3, 2031."):
        assert verify_claim(fact, "2031-11-20", dt.date(2031, 11, 30))["verdict"] == "leaked", fact


@pytest.mark.parametrize("fact", [
    "A decision is expected before the Court recesses at the end of June 2032.",
    "The decision is expected well before electors meet on December 14, 2032.",
])
def test_a_temporal_clause_with_a_scheduled_act_in_the_present_is_to_come(fact):
    assert verify_claim(fact, "2032-04-26", dt.date(2032, 5, 24))["verdict"] != "leaked", fact


def test_a_temporal_clause_in_the_past_still_dates():
    assert verify_claim("The Court recessed at the end of June 2032 after deciding every case.", "2032-04-26",
                        dt.date(2032, 5, 24))["verdict"] == "leaked"


def test_a_parenthesis_of_dates_stays_in_the_clause_of_the_noun_it_lists():
    fact = "The market will resolve on the decisions of the next three meetings in 2032 (September 16-17, October 28-29, and December 9-10)."
    assert verify_claim(fact, None, dt.date(2032, 10, 16))["verdict"] != "leaked"
    fact = "The Fed cut rates at its meetings in 2032 (September 17, October 29, and December 10)."
    assert verify_claim(fact, None, dt.date(2032, 10, 16))["verdict"] == "leaked"
