"""A claim's date as an interval: the formats dates are written in, dates without a
year, prospective dates, the plausibility rules by kind of fact, the ``ambiguous`` verdict and
``declared_only``, and bad input. Wordings are the tests' own."""

import datetime as dt
import json
import time

import pandas as pd
import pytest

from anachron.verify.dates import find_periods, find_yearless, normalize_declared
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.verify.layers.rules import date_content, date_scopes
from anachron.verify.pipeline import verify_claim, verify_run, verify_table

D = dt.date


# -- formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, kind, start, end",
    [
        ("Sept. 14, 2021", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("the 14th of September, 2021", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("Sep 14 '21", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("2021-09-14T16:00:00Z", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("9/14/21", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("14/09/2021", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("14.09.2021", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("2021/09/14", "day", D(2021, 9, 14), D(2021, 9, 14)),
        ("06/08/2021", "day_either", D(2021, 6, 8), D(2021, 8, 6)),
        ("Oct. 3-5, 2022", "days", D(2022, 10, 3), D(2022, 10, 5)),
        ("3-5 October 2022", "days", D(2022, 10, 3), D(2022, 10, 5)),
        ("Sep-2021", "month", D(2021, 9, 1), D(2021, 9, 30)),
        ("September '21", "month", D(2021, 9, 1), D(2021, 9, 30)),
        ("2Q21", "quarter", D(2021, 4, 1), D(2021, 6, 30)),
        ("4Q'18", "quarter", D(2018, 10, 1), D(2018, 12, 31)),
        ("Q2-2021", "quarter", D(2021, 4, 1), D(2021, 6, 30)),
        ("H2 2018", "half", D(2018, 7, 1), D(2018, 12, 31)),
        ("the second half of 2018", "half", D(2018, 7, 1), D(2018, 12, 31)),
        ("early 2021", "year_part", D(2021, 1, 1), D(2021, 4, 30)),
        ("mid-2021", "year_part", D(2021, 5, 1), D(2021, 8, 31)),
        ("late June 2021", "month_part", D(2021, 6, 21), D(2021, 6, 30)),
        ("the 2018-19 campaign", "season", D(2018, 7, 1), D(2019, 6, 30)),
        ("the 2018/2019 term", "season", D(2018, 7, 1), D(2019, 6, 30)),
        ("from 2014-2017", "years", D(2014, 1, 1), D(2017, 12, 31)),
        ("the first nine months of 2021", "months", D(2021, 1, 1), D(2021, 9, 30)),
        ("on 14.09.2021.", "day", D(2021, 9, 14), D(2021, 9, 14)),
    ],
)
def test_formats_people_and_models_write(text, kind, start, end):
    (p,) = find_periods(f"Kestrel noted {text} in passing")
    assert (p.kind, p.start, p.end) == (kind, start, end)


def test_fiscal_forms_are_marked_fiscal():
    for text in ("FY21", "FY'21", "FY 2021", "fiscal 2021", "FY2020-21"):
        (p,) = find_periods(f"Kestrel's {text} sales")
        assert p.kind == "fiscal_year" and p.fiscal and p.start.year == 2021, text
    (q,) = find_periods("Kestrel's Q4 FY21 sales")
    assert q.kind == "fiscal_quarter" and q.fiscal
    (full,) = find_periods("Kestrel's full-year 2021 sales")
    assert full.kind == "fiscal_year" and not full.fiscal


@pytest.mark.parametrize("text", ["a 1h 30 min drive", "a 3/4 majority", "version 2.10.3", "the 2021-02-30 filing", "No. 20-1199"])
def test_what_is_not_a_date(text):
    assert find_periods(text) == []


def test_declared_dates_carry_their_interval():
    assert normalize_declared("2Q21").latest == D(2021, 6, 30)
    season = normalize_declared("2018-19")
    assert (season.date, season.latest) == (D(2018, 7, 1), D(2019, 6, 30))
    either = normalize_declared("06/08/2021")
    assert (either.date, either.latest) == (D(2021, 6, 8), D(2021, 8, 6)) and "order" in either.rule
    assert normalize_declared("2021-09-14").latest == D(2021, 9, 14)


# -- dates without a year -------------------------------------------------------------------------


def test_dates_without_a_year_are_found_apart():
    found = find_yearless("Marrow Bay halted trading on Sept. 9 and again in late October, per the 2nd of November note.")
    assert [(y.month, y.day, y.third) for y in found] == [(9, 9, None), (10, None, "late"), (11, 2, None)]
    # a month alone needs a preposition or qualifier; "may" the verb and full dates are not
    assert find_yearless("Marrow Bay may recover. It did on March 4, 2021.") == []
    assert find_yearless("May Lindqvist resigned.") == []


def test_a_date_without_a_year_is_read_in_the_declared_year():
    # declared 2021-03-01, the text says it happened on March 9: the declared date is too early
    out = verify_claim("Pell Freight's chief executive resigned on March 9.", "2021-03-01", D(2021, 3, 5))
    assert out["verdict"] == "leaked" and out["effective_date"] == "2021-03-09" and out["layer"] == "rules"
    # read in the declared year, it is before the declared date: the declared date stands, on its word alone
    out = verify_claim("Pell Freight's chief executive resigned on March 9.", "2021-06-01", D(2021, 8, 1))
    assert out["verdict"] == "clean" and out["declared_only"]
    # across the new year: a source of January 4 writing "Dec. 30" means the December before
    c = date_content("Pell Freight opened a depot on Dec. 30.", declared=D(2022, 1, 4))
    assert c.earliest == D(2021, 12, 30) and c.on_declared


def test_a_date_without_a_year_takes_the_year_the_claim_names():
    c = date_content("In 2020 Pell Freight lost its largest client on June 2.", cutoff=D(2021, 1, 1))
    assert (c.earliest, c.latest) == (D(2020, 6, 2), D(2020, 6, 2)) and not c.on_declared
    # a year only a prospective clause names does not date the rest
    c = date_content("Pell Freight said on June 2 that it would close the depot in 2027.", declared=D(2021, 6, 5))
    assert c.earliest == D(2021, 6, 2)


def test_a_date_without_a_year_and_no_declared_date_reads_from_the_cutoff_year_on():
    cutoff = D(2022, 4, 10)
    # the cutoff year's reading is after the cutoff (and within half a year): every reading leaks
    out = verify_claim("Kestrel recalled its boilers on April 21.", None, cutoff)
    assert out["verdict"] == "leaked" and out["effective_date"] == "2022-04-21"
    # the cutoff year's reading is before the cutoff, next year's after: not decided
    out = verify_claim("Kestrel recalled its boilers on February 21.", None, cutoff)
    assert out["verdict"] == "ambiguous" and not out["leaked"] and out["effective_date"] == "2022-02-21"


def test_a_habit_in_the_present_tense_has_no_event_date():
    content = date_content("The regulator's annual review opens in early September.", cutoff=D(2022, 4, 10))
    assert content is None or content.earliest is None  # no date of the claim (a schedule's date is prospective)
    assert verify_claim("The board meets on the second Tuesday in June.", None, D(2022, 4, 10))["verdict"] == "undated"


# -- prospective dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fact",
    [
        "Marrow Bay would open its second terminal in August 2023, the port authority said.",
        "The merger vote is slated for June 3, 2022.",
        "Kestrel is due to report on 2022-05-02.",
        "On June 3, 2022, the shareholders will vote on the merger.",
        "Pell Freight gave guidance for fiscal 2023 of $4 billion in revenue.",
        "The arena lease, signed by the city, runs through 2031.",
        "The two-year deal keeps him in Denver until the end of the 2023-24 season.",
        "Kestrel plans to list its shares in Q3 2022.",
        "Kestrel's fiscal 2023 revenue is projected to reach $5 billion.",
        "Analysts expect 2023 earnings of $2 a share.",
        "Ortega's new deal, signed by both sides, begins with the 2023-24 season.",
    ],
)
def test_a_date_in_the_future_of_the_fact_is_not_its_date(fact):
    cutoff = D(2022, 4, 1)
    out = verify_claim(fact, "2022-03-15", cutoff)
    assert out["verdict"] == "clean" and out["declared_only"], out["reason"]
    assert "prospective" in out["reason"]


def test_prospective_scopes_stop_at_the_clause():
    fact = "The vote, planned for May 2022, was held on 2022-06-20."
    periods = find_periods(fact)
    assert date_scopes(fact, [(p.pos, p.pos + len(p.text)) for p in periods]) == ["prospective", "happened"]
    assert verify_claim(fact, "2022-03-01", D(2022, 6, 1))["verdict"] == "leaked"
    # past results that beat what was expected are not a forecast
    assert date_content("Kestrel's sales came in as expected in Q1 2022.").findings
    # a quoted question is not the claim's own grammar
    assert date_content('The market "Will Kestrel list by 2022-07-01?" resolved Yes.').earliest == D(2022, 7, 1)


def test_a_date_before_a_prospective_verb_is_its_subject_only_without_a_verb_of_its_own():
    # "heard ... on" gives the date its own verb: it happened; the later clause is the forecast
    fact = "The panel heard the appeal on 2022-02-14 and is expected to rule by June 2022."
    c = date_content(fact)
    assert (c.earliest, c.latest) == (D(2022, 2, 14), D(2022, 2, 14)) and c.ignored == ("June 2022",)
    # a past verb between the date and the marker: the date is the past part
    c = date_content("Kestrel's Q1 2022 sales rose 3%, and it predicts a flat second half.")
    assert c.earliest == D(2022, 4, 14)


def test_a_date_after_before_only_bounds_the_fact():
    c = date_content("Pell Freight sold its rail unit before the 2021-22 season.")
    assert c.earliest == D.min and c.latest == D(2022, 6, 30)
    assert verify_claim("Pell Freight sold its rail unit before the 2021-22 season.", None, D(2022, 8, 1))["verdict"] == "clean"
    assert verify_claim("Pell Freight sold its rail unit before the 2021-22 season.", None, D(2022, 1, 1))["verdict"] == "ambiguous"


# -- intervals by kind of fact, and the verdict ----------------------------------------------------


def test_an_event_in_the_cutoffs_month_is_not_clean_by_its_first_day():
    out = verify_claim("Kestrel closed its Ohio plant in March 2022.", None, D(2022, 3, 15))
    assert out["verdict"] == "ambiguous" and not out["leaked"] and out["layer"] == "rules"
    assert "straddles the cutoff" in out["reason"]
    # a declared date inside the month decides, on its word alone
    out = verify_claim("Kestrel closed its Ohio plant in March 2022.", "2022-03-04", D(2022, 3, 15))
    assert out["verdict"] == "clean" and out["declared_only"] and out["layer"] == "declared"
    # a month wholly before the cutoff is clean by the text itself
    out = verify_claim("Kestrel closed its Ohio plant in February 2022.", "2022-02-04", D(2022, 3, 15))
    assert out["verdict"] == "clean" and not out["declared_only"]


def test_a_content_date_after_the_cutoff_beats_an_early_declared_date():
    for fact in ("Kestrel's plant reopened on 5/16/22.", "Kestrel's plant reopened on 16/05/2022.", "Kestrel's plant reopened in 2Q22."):
        out = verify_claim(fact, "2022-03-01", D(2022, 3, 31))
        assert out["verdict"] == "leaked" and out["layer"] == "rules" and "too early" in out["reason"], fact


def test_both_readings_of_a_day_month_order():
    # 04/05/2022: April 5 or May 4; at a cutoff between them neither verdict is safe
    assert verify_claim("Kestrel cut its dividend on 04/05/2022.", None, D(2022, 4, 20))["verdict"] == "ambiguous"
    assert verify_claim("Kestrel cut its dividend on 04/05/2022.", None, D(2022, 3, 20))["verdict"] == "leaked"
    assert verify_claim("Kestrel cut its dividend on 04/05/2022.", None, D(2022, 5, 20))["verdict"] == "clean"


def test_a_compound_claim_with_one_later_part_leaks():
    fact = "Kestrel bought Ardmore Tools in January 2022 and sold it again in May 2022."
    out = verify_claim(fact, "2022-01-20", D(2022, 3, 1))
    assert out["verdict"] == "leaked" and out["effective_date"] == "2022-05-01"


def test_a_coarse_date_that_contains_another_is_its_context():
    # "2021" is the context of "Oct. 12, 2021", not a separate event that could fall in December
    out = verify_claim("In 2021 Kestrel's board met on Oct. 12, 2021 to approve the sale.", None, D(2021, 11, 1))
    assert out["verdict"] == "clean" and out["effective_date"] == "2021-10-12"


def test_results_for_a_period_are_public_after_it_ends():
    # calendar Q1 2022 results: from April 14 to the 10-Q deadline, May 15
    c = date_content("Marrow Bay's Q1 2022 net income was $12 million.")
    assert (c.earliest, c.latest) == (D(2022, 4, 14), D(2022, 5, 15))
    assert verify_claim("Marrow Bay's Q1 2022 net income was $12 million.", None, D(2022, 4, 30))["verdict"] == "ambiguous"
    assert verify_claim("Marrow Bay's Q1 2022 net income was $12 million.", "2022-03-31", D(2022, 4, 10))["verdict"] == "leaked"
    # a stated report day inside that window is the day the results were public
    c = date_content("Marrow Bay reported Q1 2022 net income of $12 million on April 27, 2022.")
    assert (c.earliest, c.latest) == (D(2022, 4, 27), D(2022, 4, 27))


def test_results_for_a_period_that_ended_on_a_stated_day():
    # the day names the period's end, not the day the figures were public
    c = date_content("Marrow Bay earned $40 million in the three months ended Jan. 31, 2022.")
    assert (c.earliest, c.latest) == (D(2022, 2, 14), D(2022, 3, 17))
    c = date_content("For the fiscal year ending in June 2021, Marrow Bay posted sales of $1.1 billion.")
    assert (c.earliest, c.latest) == (D(2021, 7, 14), D(2021, 9, 28))
    out = verify_claim("Marrow Bay earned $40 million in the three months ended Jan. 31, 2022.", "2022-02-01", D(2022, 2, 5))
    assert out["verdict"] == "leaked" and out["layer"] == "rules"
    # a strike that ended on a day is an event of that day
    assert date_content("The dockworkers' strike ended on Jan. 31, 2022.").earliest == D(2022, 1, 31)


def test_dates_relative_to_an_earlier_date_of_the_claim():
    c = date_content("Ortega joined Denver on 2021-06-28 and was released nine days later.")
    assert (c.earliest, c.latest) == (D(2021, 7, 7), D(2021, 7, 7))
    c = date_content("Kestrel raised prices on Oct. 4, 2021, and again later that month.")
    assert (c.earliest, c.latest) == (D(2021, 10, 5), D(2021, 10, 31))
    c = date_content("Pell Freight moved its head office in 2019 and changed auditors the following year.")
    assert (c.earliest, c.latest) == (D(2020, 1, 1), D(2020, 12, 31))
    out = verify_claim("Ortega joined Denver on 2021-06-28 and was released nine days later.", "2021-06-28", D(2021, 7, 1))
    assert out["verdict"] == "leaked" and out["effective_date"] == "2021-07-07"
    # with no date before it, a relative date dates nothing; "after" a noun is not one
    assert date_content("Ortega was released nine days later.") is None
    assert date_content("Ortega was released after the 2021 playoffs.").earliest == D(2021, 1, 1)


def test_a_year_called_fiscal_has_an_unknown_calendar():
    # "fiscal 2021" may end from late January 2021 to December 2021
    c = date_content("Ardmore Tools' fiscal 2021 revenue was $3.2 billion.")
    assert c.earliest == D(2021, 2, 4) and c.latest == D(2022, 3, 31)
    out = verify_claim("Ardmore Tools' fiscal 2021 revenue was $3.2 billion.", "2021-10-05", D(2021, 11, 1))
    assert out["verdict"] == "clean" and out["declared_only"]
    # a year not called fiscal is the calendar year
    out = verify_claim("Ardmore Tools' 2021 revenue was $3.2 billion.", "2021-10-05", D(2021, 11, 1))
    assert out["verdict"] == "leaked" and out["effective_date"] == "2022-01-15"


class _Calendar:
    """A fiscal year ending on the last Saturday of October (a fake EDGAR calendar)."""

    def year_end(self, year):
        return {2020: D(2020, 10, 31), 2021: D(2021, 10, 30)}.get(year)

    def quarter_end(self, year, quarter):
        return {(2021, 4): D(2021, 10, 30), (2021, 3): D(2021, 7, 31)}.get((year, quarter))


def test_a_known_fiscal_calendar_places_the_period():
    c = date_content("Ardmore Tools' fiscal 2021 revenue was $3.2 billion.", calendar=_Calendar)
    assert (c.earliest, c.latest) == (D(2021, 11, 13), D(2022, 1, 28))
    # "Q3 2021" without "fiscal": either the company's Q3 (ended July 31) or the calendar one
    c = date_content("Ardmore Tools' Q3 2021 revenue was $800 million.", calendar=_Calendar)
    assert (c.earliest, c.latest) == (D(2021, 8, 14), D(2021, 11, 14))
    # the calendar is only asked for when a results period needs it
    asked = []
    date_content("Ardmore Tools opened a store in Q3 2021.", calendar=lambda: asked.append(1))
    assert not asked


def test_a_change_over_a_period_is_known_at_its_end():
    c = date_content("Kestrel shares slid 18% in March 2022.")
    assert (c.earliest, c.latest) == (D(2022, 3, 28), D(2022, 3, 31))
    assert verify_claim("Kestrel shares slid 18% in March 2022.", "2022-03-02", D(2022, 3, 15))["verdict"] == "leaked"


def test_a_season_that_straddles_the_cutoff_is_ambiguous():
    out = verify_claim("Ortega averaged 14 rebounds in 2021-22.", None, D(2022, 2, 1))
    assert out["verdict"] == "ambiguous"
    assert verify_claim("Ortega averaged 14 rebounds in 2020-21.", None, D(2022, 2, 1))["verdict"] == "clean"


def test_same_day_option_applies_to_intervals():
    assert verify_claim("Kestrel listed on 2022-03-15.", None, D(2022, 3, 15))["verdict"] == "clean"
    assert verify_claim("Kestrel listed on 2022-03-15.", None, D(2022, 3, 15), leak_on_same_day=True)["verdict"] == "leaked"


class _Grounding:
    def __init__(self, day, outcome=False):
        self.day, self.outcome = day, outcome

    def check(self, fact, instance):
        return GroundedVerdict(self.day, "fake check", outcome=self.outcome, category="A2")


def test_grounded_date_decides_unless_another_part_is_later():
    g = _Grounding(D(2022, 2, 10))
    out = verify_claim("Kestrel closed at $12.10 on 2022-02-10.", "2022-05-01", D(2022, 3, 1), grounding=g)
    assert out["verdict"] == "clean" and out["layer"] == "grounded" and not out["declared_only"]
    out = verify_claim("Kestrel closed at $12.10 on 2022-02-10 and at $9.40 in April 2022.", None, D(2022, 3, 1), grounding=g)
    assert out["verdict"] == "leaked" and out["layer"] == "rules" and out["effective_date"] == "2022-04-01"
    # a later part in a prospective clause does not count
    out = verify_claim("Kestrel closed at $12.10 on 2022-02-10 and will split its stock in April 2022.", None, D(2022, 3, 1), grounding=g)
    assert out["verdict"] == "clean"


# -- declared_only ----------------------------------------------------------------------------------


def test_declared_only_marks_what_rests_on_the_models_word():
    cutoff = D(2022, 3, 1)
    assert verify_claim("Kestrel hired a new auditor.", "2022-01-10", cutoff)["declared_only"]
    assert verify_claim("Kestrel hired a new auditor.", "2022-04-10", cutoff)["declared_only"]
    assert not verify_claim("Kestrel hired a new auditor on 2022-01-10.", "2022-01-10", cutoff)["declared_only"]
    assert not verify_claim("Kestrel hired a new auditor on 2022-05-10.", "2022-01-10", cutoff)["declared_only"]
    undated = verify_claim("Kestrel hired a new auditor.", None, cutoff)
    assert undated["verdict"] == "undated" and not undated["declared_only"]


def test_ambiguous_and_declared_only_flow_through_verify_table_and_run():
    claims = pd.DataFrame([
        {"task": "stock", "instance_id": "i1", "fact": "Kestrel closed its Ohio plant in March 2022.", "declared_date_raw": None, "cutoff_date": "2022-03-15"},
        {"task": "stock", "instance_id": "i1", "fact": "Kestrel hired a new auditor.", "declared_date_raw": "2022-01-10", "cutoff_date": "2022-03-15"},
    ])
    t = verify_table(claims, {"i1": {"cutoff_date": "2022-03-15"}}, {}, ("grounded", "rules"))
    assert list(t["verdict"]) == ["ambiguous", "clean"] and list(t["declared_only"]) == [False, True]
    assert not t["leaked"].any()
    run = pd.DataFrame([{
        "instance_id": "i1", "task": "stock", "split": "eval", "cutoff_date": "2022-03-15", "parse_status": "ok",
        "evidence": json.dumps([{"id": 1, "fact": "Kestrel closed its Ohio plant in March 2022.", "source_date": None}]),
        "reasoning": "", "method": "m", "model": "x",
    }])
    rows = verify_run(run, {"i1": {"cutoff_date": "2022-03-15"}})
    assert list(rows["verdict"]) == ["ambiguous"] and not rows["leaked"].any()


# -- bad input -------------------------------------------------------------------------------------


def test_impossible_dates_are_no_dates_and_say_so():
    out = verify_claim("Kestrel's annual meeting took place on 2022-02-30.", None, D(2022, 3, 1))
    assert out["verdict"] == "undated" and out["reason"] == "undated: missing"
    out = verify_claim("Kestrel's annual meeting took place.", "2022-02-30", D(2022, 3, 1))
    assert out["verdict"] == "undated" and "impossible" in out["reason"]


@pytest.mark.parametrize(
    "filler",
    [
        "Kestrel's revenue grew 4% on 2021-05-03 while it said it will expand in Q3 2022, and ",
        "1/2/3/4/5/6/7/8/9/" * 3,
        "Q1 Q2 Q3 Q4 FY FY21 1Q 2Q ",
        "March March May June in in on late early mid-",
        "2019-20-21-22-23-24-25-",
        "((((,,,,;;;;....    ",
        "a" * 40,
        "a lease through 2031 ",
        "before 2020 ",
        "2020 revenue Q1 2021 ",
        "On March 3, 2021, ",
    ],
)
def test_a_ten_thousand_character_claim_is_verified_quickly(filler):
    fact = (filler * (10_000 // len(filler) + 1))[:10_000]
    start = time.perf_counter()
    out = verify_claim(fact, "2022-01-10", D(2022, 3, 1))
    assert time.perf_counter() - start < 1.0
    assert out["verdict"] in {"leaked", "clean", "ambiguous", "undated"} and out["reason"]


def test_other_languages_and_non_text_get_a_verdict():
    out = verify_claim("Le conseil a approuvé la fusion le 3 mars 2022.", None, D(2022, 3, 1))
    assert out["verdict"] in {"undated", "ambiguous", "leaked", "clean"} and out["reason"]
    out = verify_claim("董事会于2022年3月3日批准了合并。", "2022-01-10", D(2022, 3, 1))
    assert out["verdict"] in {"undated", "ambiguous", "leaked", "clean"} and out["reason"]
    out = verify_claim(None, "2022-01-10", D(2022, 3, 1))
    assert out["verdict"] == "clean" and out["declared_only"]
