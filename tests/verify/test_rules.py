"""Plausibility rules (layer 2) on wordings that tripped them: reporting verbs without
financial results, names that look like modals, quoted questions, fiscal periods."""

import datetime as dt

from anachron.verify.pipeline import verify_claim
from anachron.verify.dates import find_periods
from anachron.verify.layers.rules import date_content, date_scopes, states_results


def _scopes(fact):
    return date_scopes(fact, [(p.pos, p.pos + len(p.text)) for p in find_periods(fact)])


def test_a_reported_signing_is_not_quarterly_results():
    fact = "It was reported that Orrin Kell inked a contract carrying an AAV of $6.2M in Q3 2023."
    assert not states_results(fact)
    f = date_content(fact)
    assert f.earliest == dt.date(2023, 7, 1) and "not public before it starts" in f.rule
    out = verify_claim(fact, "2023-07-02", dt.date(2023, 8, 1))
    assert not out["leaked"]


def test_reported_money_figure_still_counts_as_results():
    assert states_results("Brightline Foods reported $2.4 billion for Q2 2021.")
    f = date_content("Brightline Foods reported $2.4 billion for Q2 2021.")
    assert f.earliest == dt.date(2021, 7, 14)


def test_capitalised_name_will_is_not_forward_looking():
    fact = "On March 3, 2022, Will Osterberg signed a 2-year, $14 million contract with the Kings."
    assert _scopes(fact) == ["happened"]
    out = verify_claim(fact, "2022-01-10", dt.date(2022, 2, 1))
    assert out["leaked"] and out["effective_date"] == "2022-03-03"


def test_modal_will_and_quoted_questions():
    assert _scopes("Brightline will report Q4 2021 revenue in February.") == ["prospective"]
    assert _scopes("Will be announced at the Q4 2021 call.") == ["prospective"]
    quoted = 'The answer to "Will Brightline beat estimates by 2022-02-15?" turned out to be yes.'
    assert _scopes(quoted) == ["happened"]
    assert date_content(quoted).earliest == dt.date(2022, 2, 15)


def test_fiscal_quarter_is_not_the_calendar_quarter():
    # a fiscal Q2 2026 can end as early as mid-2025 (fiscal year ending in January)
    fact = "Quillon's fiscal Q2 2026 diluted EPS was $0.84 per share on 2025-08-20."
    f = date_content(fact)
    assert f.earliest == dt.date(2025, 8, 20)
    assert not verify_claim(fact, "2025-08-20", dt.date(2025, 9, 1))["leaked"]
    g = date_content("Quillon posted revenue of $4.1 billion in the second quarter of fiscal 2026.")
    assert g.findings[0].period.kind == "fiscal_quarter" and g.earliest < dt.date(2025, 9, 1)
    # a calendar quarter keeps the quarter-end rule
    assert date_content("Quillon's Q2 2026 revenue was $4.1 billion.").earliest == dt.date(2026, 7, 14)


def test_full_year_results_with_a_stated_report_day():
    fact = "On February 24, 2025, Quillon reported fiscal 2025 revenue of $40.3 billion."
    f = date_content(fact)
    assert f.earliest == dt.date(2025, 2, 24)
    # a day before the earliest plausible end of the fiscal year cannot be the report of that
    # year: the fiscal calendar is unknown, so the results could be public from early February
    # 2025 (a year ending in late January) to March 2026 (a calendar year + 90 days)
    early = date_content("On May 2, 2024, Quillon reported fiscal 2025 revenue of $40.3 billion.")
    assert early.earliest == dt.date(2025, 2, 4) and early.latest == dt.date(2026, 3, 31)
    out = verify_claim("On May 2, 2024, Quillon reported fiscal 2025 revenue of $40.3 billion.", None, dt.date(2025, 6, 30))
    assert out["verdict"] == "ambiguous" and not out["leaked"]
    # no day: mid-January of the following year
    assert date_content("Quillon reported full-year 2025 revenue of $40.3 billion.").earliest == dt.date(2026, 1, 15)
