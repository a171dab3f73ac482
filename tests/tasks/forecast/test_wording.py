"""The forecast task's own outcome in any wording: ResolutionGrounding with the wording helpers
(tasks/forecast/wording.py). Invented questions; every claim is written here."""

import datetime as dt

import pytest

from anachron.tasks.registry import get_task
from anachron.tasks.forecast.claims import outcome_rule
from anachron.tasks.forecast.grounding import ResolutionGrounding
from anachron.tasks.forecast.wording import (
    content,
    month_anchors,
    name_heads,
    names,
    question_sentence,
    rate_steps,
    read_question,
    restates,
    says_yes,
    stem,
)

RACE = {"question": "Will Dana Whitfield win the 2026 Arcadia gubernatorial election?",
        "cutoff_date": "2026-09-01", "resolution_date": "2026-11-03", "resolved_to": 0}
RATES = {"question": "Will the Central Bank of Freedonia lower its policy rate by 50 basis points at its March 2026 meeting?",
         "cutoff_date": "2026-03-01", "resolution_date": "2026-03-19", "resolved_to": 1}
ROCKET = {"question": "Will Orbital Dynamics launch its Skylark rocket before July 1, 2026?",
          "cutoff_date": "2026-02-01", "resolution_date": "2026-07-01", "resolved_to": 0}
YIELD = {"question": "Will the Freedonia 10-year bond yield have increased by 2026-05-10 as compared to its value on 2026-04-10?",
         "cutoff_date": "2026-04-10", "resolution_date": "2026-05-10", "resolved_to": 1}
CUP = {"question": "[Tournament] Will Ruritania win the 2030 Continental Cup?",
       "cutoff_date": "2030-05-01", "resolution_date": "2030-07-14", "resolved_to": 0}
TITLE = {"question": "Will Ana Ruiz repeat as Continental Chess Champion?",
         "cutoff_date": "2029-03-01", "resolution_date": "2029-11-20", "resolved_to": 0}
NOMINEE = {"question": "Will Tomas Berg be the Centrist Party Nominee for Governor in 2027?",
           "cutoff_date": "2027-03-01", "resolution_date": "2027-06-30", "resolved_to": 1}
PRICES = {"question": "Will inflation in Freedonia reach more than 6% in 2027?",
          "cutoff_date": "2027-04-01", "resolution_date": "2027-12-31", "resolved_to": 0}
MAYOR = {"question": "Will Priya Okafor win the Lakeshore Mayoral Election in 2027",
         "cutoff_date": "2027-09-15", "resolution_date": "2027-11-02", "resolved_to": 1}


@pytest.mark.parametrize(
    "ctx, fact",
    [
        (RACE, "Whitfield lost the Arcadia gubernatorial election."),            # the opposite kind of event
        (RACE, "Dana Whitfield was defeated in the Arcadia gubernatorial election."),  # passive defeat
        (RACE, "Whitfield did not win the Arcadia governor's race in November."),   # a month without its year
        (RATES, "Freedonia's central bank delivered a half-point cut in March."),   # a rate step in other units
        (RATES, "The Central Bank of Freedonia cut its policy rate by half a percentage point."),
        (ROCKET, "Orbital Dynamics did not launch the Skylark rocket before July 1, 2026."),
        (ROCKET, "Orbital Dynamics failed to launch Skylark by the July deadline."),
        (YIELD, "By May 10, 2026 the Freedonia 10-year yield was higher than a month earlier."),
        (CUP, "Ruritania was knocked out of the 2030 Continental Cup in the quarter-finals."),
        (CUP, "Ruritania did not end up winning the Continental Cup."),          # outcome words, a "[tag]" question
        (MAYOR, "Priya Okafor beat two rivals to become Lakeshore's mayor-elect."),  # every word of the event restated
        (TITLE, "Ana Ruiz lost her Continental Chess Champion title."),          # losing is the opposite of keeping
        (NOMINEE, "Berg secured the Centrist Party nomination for governor."),   # a question of names only
        (PRICES, "Freedonia's inflation stayed under 6% throughout 2027."),      # the percentage is shared
    ],
)
def test_the_resolution_in_other_words(ctx, fact):
    v = ResolutionGrounding().check(fact, ctx)
    assert v is not None and v.outcome and v.category == "A4"
    assert v.effective_date.isoformat() == ctx["resolution_date"]


@pytest.mark.parametrize(
    "ctx, fact",
    [
        (RACE, "Whitfield won the Arcadia gubernatorial primary in June 2026."),     # an earlier event, dated
        (RACE, "Whitfield won the Arcadia gubernatorial primary."),               # an earlier event: no election
        (RACE, "Whitfield trailed by six points in an August poll of the Arcadia gubernatorial election."),
        (RACE, "The Arcadia gubernatorial election is scheduled for November 3, 2026."),
        (RACE, "Whitfield previously won the Arcadia gubernatorial election in 2018."),
        (RACE, "Whitfield has never won a statewide election in Arcadia."),
        (RATES, "The Central Bank of Freedonia cut its policy rate by 25 basis points in January 2026."),
        (RATES, "The Central Bank of Freedonia cut rates by a quarter point in February."),  # month before the cutoff
        (RATES, "The Central Bank of Freedonia last cut its policy rate by 50 basis points in 2020."),
        (ROCKET, "Orbital Dynamics completed a static fire test of Skylark in January 2026."),
        (ROCKET, "Orbital Dynamics launched its smaller Finch rocket in 2025."),
        (ROCKET, "Orbital Dynamics has never launched an orbital rocket."),
        (ROCKET, "Orbital Dynamics plans to launch Skylark in the spring."),
        (YIELD, "The Freedonia 10-year bond yield rose 12 basis points in March 2026."),
        (YIELD, "The Freedonia 10-year bond yield rose over the past month."),       # looks back from the cutoff
        (CUP, "Ruritania has never won the Continental Cup."),                    # a state, not this edition
        (CUP, "Ruritania did not win the 2026 Continental Cup."),                 # another edition
        (MAYOR, "Priya Okafor won the Lakeshore mayoral primary."),               # the election's head word is missing
        (MAYOR, "The Lakeshore Mayoral Election was set for Nov. 2."),           # a date fixed in advance
        (TITLE, "Ana Ruiz won the Continental Chess Champion title in 2027."),
        (NOMINEE, "Berg sought the Centrist Party nomination for governor in 2019."),
        (NOMINEE, "Berg did not seek the Centrist Party nomination for governor in 2019."),
        (PRICES, "Freedonia's inflation peaked at 9% in 2022."),
    ],
)
def test_background_about_the_same_entities_is_not_the_resolution(ctx, fact):
    assert ResolutionGrounding().check(fact, ctx) is None


def test_a_restatement_whose_polarity_is_not_the_resolution_needs_a_date():
    # the mayor won: a claim that she lost, undated, is not taken for the resolution ...
    assert ResolutionGrounding().check("Priya Okafor lost the Lakeshore Mayoral Election.", MAYOR) is None
    # ... but dated at the horizon it speaks of the resolution, whatever it says
    v = ResolutionGrounding().check("Priya Okafor lost the Lakeshore Mayoral Election in November.", MAYOR)
    assert v is not None and v.outcome


def test_the_categoriser_uses_the_grounded_reading():
    ctx = {"task": get_task("forecast"), **RACE}
    assert outcome_rule("Whitfield lost the Arcadia gubernatorial election.", ctx) == "A4:forecast:outcome-restated"
    assert outcome_rule("Whitfield won the Arcadia gubernatorial primary.", ctx) is None


# -- the wording helpers ------------------------------------------------------------------

def test_question_sentence_and_names():
    q = question_sentence("[Tournament] Will Ruritania win the 2030 Continental Cup?  Resolves per the rules.")
    assert q == "Will Ruritania win the 2030 Continental Cup?"
    assert names(q) == {"ruritania", "continental", "cup"} and name_heads(q) == {"ruritania", "cup"}
    assert names("Fed cuts rates after its October 2026 meeting?") == {"fed"}    # months are times
    assert names("Will the U.S. Senate pass the bill?") == {"us", "senat"}


def test_stems_and_kinds_of_event():
    assert stem("nomination") == stem("nominee") == "nomin"
    assert stem("election") == stem("elected") == "elect"
    assert {"~down"} <= content("The bank cut rates") and {"~down"} <= content("rates were lowered")
    assert "~win" in content("she defeated him") and "~lose" in content("he was defeated")
    assert rate_steps("25 bps, a quarter-point, 0.25 percentage point") == {"#0.25pp"}
    assert rate_steps("a half-point move or 50 basis points") == {"#0.5pp"}


def test_polarity():
    q = read_question(RACE["question"])
    predicate = set(q.tokens - q.names)
    for claim, yes in [
        ("Whitfield won the race.", True),
        ("Whitfield did not win.", False),
        ("Whitfield lost the election.", False),
        ("Whitfield never lost the election.", True),
        ("Whitfield toured the state.", None),
    ]:
        assert says_yes(claim, predicate, content(claim)) is yes, claim
    assert restates(q, content("Dana Whitfield lost the Arcadia gubernatorial election."))
    assert not restates(q, content("Whitfield won the Arcadia gubernatorial primary."))


def test_month_anchors_take_the_year_of_the_resolution():
    (p,) = month_anchors("in October", dt.date(2026, 10, 29))
    assert (p.start, p.end) == (dt.date(2026, 10, 1), dt.date(2026, 10, 31))
    (p,) = month_anchors("in December", dt.date(2026, 3, 19))
    assert p.start == dt.date(2025, 12, 1)
    assert month_anchors("in October 2026", dt.date(2026, 10, 29)) == []     # dated: find_periods has it
