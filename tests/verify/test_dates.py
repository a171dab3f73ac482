"""Declared-date normalisation: clear forms normalised with the rule
recorded, vague or impossible ones undated."""

import datetime as dt

import pytest

from anachron.verify.dates import normalize_declared
from anachron.verify.pipeline import verify_claim


@pytest.mark.parametrize(
    "raw, day, rule_part",
    [
        ("early 2019", dt.date(2019, 1, 1), "early"),
        ("Early 2019", dt.date(2019, 1, 1), "early"),
        ("mid 2019", dt.date(2019, 5, 1), "mid"),
        ("mid-2019", dt.date(2019, 5, 1), "mid"),
        ("the middle of 2019", dt.date(2019, 5, 1), "mid"),
        ("late 2019", dt.date(2019, 9, 1), "late"),
        ("end of 2019", dt.date(2019, 9, 1), "late"),
        ("the end of 2019", dt.date(2019, 9, 1), "late"),
        ("late March 2020", dt.date(2020, 3, 21), "late"),
        ("Q3 2019", dt.date(2019, 7, 1), "quarter"),
        ("2019", dt.date(2019, 1, 1), "year"),
        ("2019-11", dt.date(2019, 11, 1), "month"),
        ("November 2019", dt.date(2019, 11, 1), "month"),
        ("May 29, 2020", dt.date(2020, 5, 29), "day"),
    ],
)
def test_clear_forms_are_normalised_to_a_lower_bound(raw, day, rule_part):
    d = normalize_declared(raw)
    assert d.status == "normalized" and d.date == day
    assert d.rule and rule_part in d.rule


def test_exact_day():
    d = normalize_declared("2019-11-29")
    assert d.status == "exact" and d.date == dt.date(2019, 11, 29) and d.rule is None


@pytest.mark.parametrize(
    "raw, rule",
    [
        ("2019-02-30", "impossible calendar day"),
        ("2019-13-01", "impossible calendar day"),
        ("around 2019", "not a date"),
        ("circa 2019", "not a date"),
        ("2019 or 2020", "not a date"),
        ("before 2020", "not a date"),
        ("early 2010s", "not a date"),
        ("recently", "not a date"),
        ("n/a", "not a date"),
        (None, "missing"),
        ("  ", "missing"),
    ],
)
def test_vague_or_impossible_forms_are_undated(raw, rule):
    d = normalize_declared(raw)
    assert d.status == "undated" and d.date is None and d.rule == rule


def test_a_coarse_declared_date_is_an_interval():
    # "late 2019" is Sep 1 - Dec 31, 2019: neither leaked nor clean at a November cutoff (it
    # never invents a leak, and is never silently clean); the rule is recorded on the claim
    out = verify_claim("Acme opened a plant.", "late 2019", dt.date(2019, 11, 29))
    assert out["verdict"] == "ambiguous" and not out["leaked"] and out["declared_date"] == "2019-09-01"
    assert out["date_status"] == "normalized" and "late" in out["date_rule"]
    assert out["declared_only"] and out["layer"] == "declared"
    assert normalize_declared("late 2019").latest == dt.date(2019, 12, 31)
    # wholly before or after the cutoff it decides
    assert verify_claim("Acme opened a plant.", "mid 2019", dt.date(2019, 11, 29))["verdict"] == "clean"
    assert verify_claim("Acme opened a plant.", "early 2020", dt.date(2019, 11, 29))["verdict"] == "leaked"
    undated = verify_claim("Acme has a strong brand.", "around 2019", dt.date(2019, 11, 29))
    assert undated["verdict"] == "undated" and not undated["leaked"]


def test_fiscal_quarters_are_their_own_kind():
    from anachron.verify.dates import find_periods, fiscal_quarter_earliest_end

    for text in ["fiscal Q3 2021", "Q3 FY2021", "Q3 of fiscal 2021", "FY2021 Q3", "third quarter of fiscal 2021",
                 "fiscal third quarter 2021", "fiscal 2021 third quarter"]:
        (p,) = find_periods(f"Brightline's {text} sales")
        assert p.kind == "fiscal_quarter", text
        assert p.start == dt.date(2020, 7, 21) and p.end == dt.date(2021, 9, 30)
        assert fiscal_quarter_earliest_end(p) == dt.date(2020, 10, 18)
    assert [p.kind for p in find_periods("Q3 2021 and the third quarter of 2021")] == ["quarter", "quarter"]


def test_unquoted_blanks_quoted_spans():
    from anachron.verify.dates import unquoted

    text = 'The answer to "Will it rain?" was \u201cyes\u201d, Kim\'s note said.'
    out = unquoted(text)
    assert len(out) == len(text) and "Will" not in out and "yes" not in out and "Kim's" in out
