"""Event grounding over every recorded Supreme Court case: a cited case's step takes its record's date."""

import datetime as dt

import pandas as pd

from anachron.tasks.legal.records import CaseRecords, open_case_records, stated_vote
from anachron.verify.grammar import hedged
from anachron.verify.pipeline import verify_claim
from anachron.words import HEDGE_SPECULATIVE

SCDB = pd.DataFrame([
    ("31-100", "QUILLFEATHER v. BRANNOCK", "2032-04-20", "2032-01-12"),
    ("31-200", "UNITED STATES v. OKLAVIA", "2032-06-25", "2032-03-02"),
    ("35-50", "UNITED STATES v. OKLAVIA", "2036-06-20", "2036-02-01"),
    ("33-10", "DARROWMERE v. UNIVERSITY OF OKLAVIA", "2034-06-10", "2033-12-04"),
], columns=["docket_key", "case_name", "decision_date", "argument_date"])
OYEZ = pd.DataFrame([
    ("31-200", "United States v. Oklavia", "2031-10-01", "2032-03-02", "2032-06-25", 4, 4),
    ("35-50", "United States v. Oklavia", "2035-10-01", "2036-02-01", "2036-06-20", 6, 3),
    ("33-10", "Darrowmere v. University of Oklavia", "2033-06-01", "2033-12-04", "2034-06-10", 4, 3),
], columns=["docket_key", "name", "granted_date", "argued_date", "decided_date", "majority_votes", "minority_votes"])

# the instance: Darrowmere v. University of Oklavia, cutoff the day before its decision
CTX = {"cutoff_date": "2034-06-09", "case_name": "Darrowmere v. University of Oklavia", "court": "scotus", "docket": "33-10",
       "petitioner": "Abigail Darrowmere", "respondent": "University of Oklavia", "decision_date": "2034-06-10",
       "outcome": "respondent", "petitioner_wins": 0, "facts": "", "question": "", "lower_court": ""}
CUTOFF = dt.date(2034, 6, 9)


def test_a_cited_case_decision_takes_its_record_date():
    g = CaseRecords(SCDB, OYEZ)
    fact = "The justices unanimously held in Quillfeather v. Brannock that the statute reaches private employers."
    v = g.check(fact, dict(CTX))
    assert v is not None and v.effective_date == dt.date(2032, 4, 20) and not v.outcome and "case record" in v.reason
    # an argument is dated at the argument
    v = g.check("Quillfeather v. Brannock was argued before the Court.", dict(CTX))
    assert v is not None and v.effective_date == dt.date(2032, 1, 12)


def test_the_vote_and_the_declared_date_choose_among_cases_of_one_name():
    g = CaseRecords(SCDB, OYEZ)
    fact = "The Court split 4-4 in United States v. Oklavia, leaving the injunction in place."
    assert g.check(fact, dict(CTX)).effective_date == dt.date(2032, 6, 25)
    fact6 = "A 6-3 Court ruled in United States v. Oklavia that the state may enforce the law."
    assert g.check(fact6, dict(CTX)).effective_date == dt.date(2036, 6, 20)
    # no vote: the record nearest the declared date
    bare = "The Court ruled in United States v. Oklavia that the state may enforce the law."
    assert g.check(bare, {**CTX, "declared_date": dt.date(2036, 5, 1)}).effective_date == dt.date(2036, 6, 20)
    out = verify_claim(fact, "2032-06-01", dt.date(2032, 6, 24), instance=dict(CTX), grounding=g)
    assert out["verdict"] == "leaked" and out["effective_date"] == "2032-06-25"


def test_a_vote_that_is_not_the_case_record_is_another_decision_of_the_name():
    g = CaseRecords(SCDB, OYEZ)
    own = "In Darrowmere v. University of Oklavia the Court ruled 4-3 for the university."
    assert g.check(own, dict(CTX)).outcome
    earlier = "In Darrowmere v. University of Oklavia the Court ruled 7-1 that the lower court had applied the wrong standard."
    v = g.check(earlier, dict(CTX))
    assert v is None or not v.outcome


def test_stated_votes_and_tables(tmp_path):
    assert stated_vote("a 5-4 majority") == (5, 4) and stated_vote("split 4 to 4") == (4, 4)
    assert stated_vote("unanimously") == (0, 0) and stated_vote("a 10-2 win") is None
    SCDB.to_parquet(tmp_path / "scdb.parquet")
    assert open_case_records({"scdb": tmp_path / "scdb.parquet"}).n_records == 4


def test_a_modal_in_a_subordinate_clause_does_not_hedge_the_ruling():
    fact = "The Court threw out the suit: the plaintiffs lacked standing because their injuries could not be traced to the plan."
    assert not hedged(fact, HEDGE_SPECULATIVE, [(10, 22)])
    assert hedged("The Court could throw out the suit.", HEDGE_SPECULATIVE, [(16, 25)])
    assert hedged("The Court threw out one claim and could dismiss the rest.", HEDGE_SPECULATIVE, [(10, 22)])


def test_a_lower_court_ruling_or_a_party_argument_is_no_step_of_the_court():
    g = CaseRecords(SCDB, OYEZ)
    assert g.check("The Fifth Circuit ruled in Quillfeather v. Brannock that the statute reaches private employers.", dict(CTX)) is None
    assert g.check("In Quillfeather v. Brannock the employer argued that the statute is narrow.", dict(CTX)) is None
    assert g.check("Quillfeather v. Brannock was argued before the Court.", dict(CTX)) is not None


def test_a_decision_to_come_is_no_decision():
    g = CaseRecords(SCDB, OYEZ)
    assert g.check("Quillfeather v. Brannock, argued in January, is due to be decided before the term ends.", dict(CTX)) is None
    assert g.check("The Court will rule in Quillfeather v. Brannock by June.", dict(CTX)) is None


def test_a_modal_in_what_the_court_held_is_no_hedge_but_one_in_a_prediction_is():
    assert not hedged("Justice Alito, writing for a 5-4 majority, held that courts may not approve the plan.", HEDGE_SPECULATIVE, [(29, 32)])
    assert hedged("The Solicitor General said that the Court will likely reverse.", HEDGE_SPECULATIVE, [(55, 62)])


def test_a_cited_holding_with_a_plan_in_its_content_is_still_a_decision():
    g = CaseRecords(SCDB, OYEZ)
    fact = "In Quillfeather v. Brannock, the Court held that the code does not allow a Chapter 11 plan to release third parties."
    assert g.check(fact, dict(CTX)).effective_date == dt.date(2032, 4, 20)


def test_the_stated_date_and_the_fuller_name_choose_the_record():
    g = CaseRecords(SCDB, OYEZ)
    # no vote, no declared date: the date the claim states
    v = g.check("United States v. Oklavia was decided for the state by the Supreme Court in Q2 2036.", dict(CTX))
    assert v.effective_date == dt.date(2036, 6, 20)
    # the record whose name the cite matches in more words
    cases = pd.concat([SCDB, pd.DataFrame([("38-1", "OKLAVIA HOUSE OF DELEGATES v. DARROWMERE", "2038-06-17", "2038-03-18")],
                                          columns=SCDB.columns)])
    g2 = CaseRecords(cases)
    v = g2.check("The Court dismissed the appeal in Oklavia House of Delegates v. Darrowmere.", dict(CTX))
    assert v.effective_date == dt.date(2038, 6, 17)


def test_a_scheduled_argument_is_no_argument_yet():
    g = CaseRecords(SCDB, OYEZ)
    assert g.check("The Court is scheduled to hear oral argument in Quillfeather v. Brannock next month.", dict(CTX)) is None


def test_an_acronym_names_the_side_it_abbreviates():
    from anachron.tasks.legal.grounding import _side_matches, acronym_of

    assert acronym_of("securities and exchange commission") == "sec"
    assert acronym_of("department of health and human services") == "dhhs"
    assert acronym_of("ostrander") == ""  # one word: no acronym
    side = ("securities and exchange commission", {"securities", "exchange"})
    assert _side_matches("SEC", side) and _side_matches("Securities and Exchange Commission", side)
    assert not _side_matches("FTC", side) and not _side_matches("SE", side)
