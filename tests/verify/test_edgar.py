"""EDGAR grounding: company figures dated by the first filing that reported them.

Fixtures are two invented companies written here (not snapshot data): Orchard Computer (fiscal
year ends late September, like Apple) and Verdant Graphics (fiscal year ends late January, like
NVIDIA), with a 10-K/A that restates a net income figure.
"""

import datetime as dt

import pandas as pd
import pytest

from anachron.sources.edgar import add_revisions
from conftest import edgar_row
from anachron.verify.layers.edgar import EdgarGrounding, find_fiscal_periods, parse_values
from anachron.verify.pipeline import verify_claim

ORCH, VERD = 1111, 2222


def _facts() -> pd.DataFrame:
    o = lambda *a, **k: edgar_row(ORCH, "Orchard Computer Inc.", *a, **k)  # noqa: E731
    v = lambda *a, **k: edgar_row(VERD, "VERDANT GRAPHICS CORP", *a, **k)  # noqa: E731
    rev = "RevenueFromContractWithCustomerExcludingAssessedTax"
    rows = [
        # Orchard fiscal 2018 (ends 2018-09-29)
        o(rev, 200.0e9, "2017-10-01", "2018-09-29", 2018, "FY", "10-K", "2018-11-02", "O-18-K"),
        o(rev, 180.0e9, "2016-10-02", "2017-09-30", 2018, "FY", "10-K", "2018-11-02", "O-18-K"),
        # Orchard fiscal Q3 2019 (Mar 31 - Jun 29, 2019) in its 10-Q
        o(rev, 50.1e9, "2019-03-31", "2019-06-29", 2019, "Q3", "10-Q", "2019-07-30", "O-19-Q3"),
        o(rev, 40.2e9, "2019-09-29", "2019-12-28", 2020, "Q1", "10-Q", "2020-01-28", "O-20-Q1"),
        # Orchard fiscal 2019 10-K (ends 2019-09-28), filed 2019-10-30
        o(rev, 210.4e9, "2018-09-30", "2019-09-28", 2019, "FY", "10-K", "2019-10-30", "O-19-K"),
        o(rev, 200.0e9, "2017-10-01", "2018-09-29", 2019, "FY", "10-K", "2019-10-30", "O-19-K"),
        o(rev, 60.2e9, "2019-06-30", "2019-09-28", 2019, "FY", "10-K", "2019-10-30", "O-19-K"),
        o(rev, 50.1e9, "2019-03-31", "2019-06-29", 2019, "FY", "10-K", "2019-10-30", "O-19-K"),
        o("NetIncomeLoss", 50.2e9, "2018-09-30", "2019-09-28", 2019, "FY", "10-K", "2019-10-30", "O-19-K"),
        o("EarningsPerShareDiluted", 11.20, "2018-09-30", "2019-09-28", 2019, "FY", "10-K", "2019-10-30", "O-19-K",
          unit="USD/shares"),
        o("CashAndCashEquivalentsAtCarryingValue", 40.5e9, None, "2019-09-28", 2019, "FY", "10-K", "2019-10-30",
          "O-19-K"),
        # 10-K/A restating fiscal 2019 net income, filed 2020-01-15
        o("NetIncomeLoss", 48.7e9, "2018-09-30", "2019-09-28", 2019, "FY", "10-K/A", "2020-01-15", "O-19-KA"),
        # fiscal 2020 10-K repeats the restated figure and restates EPS for a 4:1 split
        o(rev, 230.0e9, "2019-09-29", "2020-09-26", 2020, "FY", "10-K", "2020-10-29", "O-20-K"),
        o(rev, 210.4e9, "2018-09-30", "2019-09-28", 2020, "FY", "10-K", "2020-10-29", "O-20-K"),
        o("NetIncomeLoss", 48.7e9, "2018-09-30", "2019-09-28", 2020, "FY", "10-K", "2020-10-29", "O-20-K"),
        o("EarningsPerShareDiluted", 2.80, "2018-09-30", "2019-09-28", 2020, "FY", "10-K", "2020-10-29", "O-20-K",
          unit="USD/shares"),
        # Verdant: fiscal years end in late January; one 10-K carries a wrong fy (as SEC data sometimes does)
        v(rev, 9.7e9, "2017-01-30", "2018-01-28", 2017, "FY", "10-K", "2018-02-28", "V-18-K"),
        v(rev, 11.7e9, "2018-01-29", "2019-01-27", 2019, "FY", "10-K", "2019-02-21", "V-19-K"),
        v(rev, 3.0e9, "2019-07-29", "2019-10-27", 2020, "Q3", "10-Q", "2019-11-14", "V-20-Q3"),
        v(rev, 10.9e9, "2019-01-28", "2020-01-26", 2020, "FY", "10-K", "2020-02-20", "V-20-K"),
        v(rev, 11.7e9, "2018-01-29", "2019-01-27", 2020, "FY", "10-K", "2020-02-20", "V-20-K"),
    ]
    df = pd.DataFrame(rows)
    df["fy"] = df["fy"].astype("Int64")
    return add_revisions(df)


@pytest.fixture(scope="module")
def edgar():
    return EdgarGrounding(_facts(), aliases={"ORCH": "orchard", "VGC": VERD})


def test_fiscal_calendars_are_read_from_the_10ks(edgar):
    assert edgar.fiscal_year_end(ORCH, 2019) == dt.date(2019, 9, 28)
    # the wrong fy on Verdant's 2018 10-K does not shift its labels
    assert edgar.fiscal_year_end(VERD, 2018) == dt.date(2018, 1, 28)
    assert edgar.fiscal_year_end(VERD, 2020) == dt.date(2020, 1, 26)
    assert edgar.fiscal_quarter_end(ORCH, 2019, 3) == dt.date(2019, 6, 29)
    assert edgar.fiscal_quarter_end(VERD, 2020, 3) == dt.date(2019, 10, 27)


def test_fiscal_year_ending_in_september_dates_to_its_10k(edgar):
    v = edgar.check("Orchard's FY2019 revenue was $210.4B", {})
    assert v.effective_date == dt.date(2019, 10, 30)
    assert "10-K O-19-K filed 2019-10-30" in v.reason and v.category == "A2" and not v.outcome
    # the same claim through the verifier: clean at a late-November cutoff, dated by the filing
    out = verify_claim("Orchard's FY2019 revenue was $210.4B", "2019-11-01", dt.date(2019, 11, 29),
                       instance={}, grounding=edgar)
    assert out["layer"] == "grounded" and out["effective_date"] == "2019-10-30" and not out["leaked"]
    assert not out["declared_only"]
    # without EDGAR a fiscal year's calendar is unknown (it may end from late January to
    # December): the text allows February 2019 to March 2020, so only the declared date dates it
    rules_only = verify_claim("Orchard's FY2019 revenue was $210.4B", "2019-11-01", dt.date(2019, 11, 29))
    assert rules_only["verdict"] == "clean" and rules_only["declared_only"]
    assert verify_claim("Orchard's FY2019 revenue was $210.4B", None, dt.date(2019, 11, 29))["verdict"] == "ambiguous"


def test_value_forms_and_report_category(edgar):
    for text in ("Orchard Computer reported fiscal 2019 net income of $50.2 billion",
                 "Orchard reported fiscal year 2019 net income of $50,200 million"):
        v = edgar.check(text, {})
        assert v.effective_date == dt.date(2019, 10, 30) and v.category == "A3"
    cash = edgar.check("Orchard held $40.5 billion in cash and cash equivalents at the end of fiscal 2019", {})
    assert cash.effective_date == dt.date(2019, 10, 30)


def test_fiscal_quarter_words(edgar):
    v = edgar.check("In its third quarter of fiscal 2019, Orchard's revenue was $50.1 billion", {})
    assert v.effective_date == dt.date(2019, 7, 30)
    # "Q3 2019" without "fiscal": the stated value picks the calendar reading (Jul-Sep = fiscal Q4)
    cal = edgar.check("Orchard's Q3 2019 revenue was $60.2 billion", {})
    assert cal.effective_date == dt.date(2019, 10, 30) and "calendar Q3 2019" in cal.reason


def test_fiscal_year_ending_in_january(edgar):
    v = edgar.check("Verdant's revenue for fiscal year 2020 was $10.9 billion", {})
    assert v.effective_date == dt.date(2020, 2, 20) and "ends 2020-01-26" in v.reason
    prior = edgar.check("Verdant's revenue for fiscal year 2019 was $11.7 billion", {})
    assert prior.effective_date == dt.date(2019, 2, 21)
    q3 = edgar.check("VGC Q3 FY2020 revenue was $3.0B", {})
    assert q3.effective_date == dt.date(2019, 11, 14)


def test_restated_figure_original_vs_amendment(edgar):
    original = edgar.check("Orchard's fiscal 2019 net income was $50.2 billion", {})
    restated = edgar.check("Orchard's fiscal 2019 net income was $48.7 billion", {})
    assert original.effective_date == dt.date(2019, 10, 30)
    assert restated.effective_date == dt.date(2020, 1, 15)
    assert "10-K/A O-19-KA" in restated.reason and "restated value replacing O-19-K" in restated.reason


def test_split_adjusted_eps_dates_to_the_later_10k(edgar):
    assert edgar.check("Orchard's fiscal 2019 diluted EPS was $11.20", {}).effective_date == dt.date(2019, 10, 30)
    split = edgar.check("Orchard's fiscal 2019 diluted EPS was $2.80 per share", {})
    assert split.effective_date == dt.date(2020, 10, 29)


def test_unmatched_value_dates_to_first_report_of_the_period(edgar):
    v = edgar.check("Orchard's FY2019 revenue was $300 billion", {})
    assert v.effective_date == dt.date(2019, 10, 30) and "does not match" in v.reason
    no_value = edgar.check("Orchard's fiscal 2019 revenue grew strongly", {})
    assert no_value.effective_date == dt.date(2019, 10, 30) and "no figure stated" in no_value.reason


def test_not_applicable(edgar):
    assert edgar.check("Orchard expects fiscal 2020 revenue of $230 billion", {}) is None  # guidance
    assert edgar.check("Bolt Industries' FY2019 revenue was $210.4B", {}) is None  # unknown company
    assert edgar.check("Orchard's revenue was $210.4B", {}) is None  # no period
    assert edgar.check("Orchard's FY2019 market share grew", {}) is None  # no concept family
    assert edgar.check("Orchard's FY2031 revenue was $500B", {}) is None  # period not in the table


def test_instance_tickers_name_companies(edgar):
    ctx = {"tickers": ["OCI"], "names": ["Orchard Computer Inc."]}
    v = edgar.check("OCI FY2019 revenue $210.4B", ctx)
    assert v is not None and v.effective_date == dt.date(2019, 10, 30)
    assert edgar.check("OCI FY2019 revenue $210.4B", {}) is None


def test_parsers():
    vals = parse_values("revenue of $260.2B, net income $55,256 million and EPS of $2.97 per share")
    assert [round(v.value) for v in vals[:2]] == [260_200_000_000, 55_256_000_000]
    assert vals[0].half_unit == pytest.approx(0.05e9) and vals[2].per_share and vals[2].value == 2.97
    refs = find_fiscal_periods("Q3 FY2020 and fiscal 2019 and the third quarter of 2018")
    assert [(r.kind, r.year, r.quarter, r.fiscal) for r in refs] == [
        ("quarter", 2020, 3, True), ("quarter", 2018, 3, None), ("annual", 2019, None, True)]


def test_figure_indexes_follow_their_definition():
    """The per-family tables, built in one pass over every company, equal the definition applied
    to each company's rows: the family's concepts in its unit (in filing order), and those filed
    after their period end, instants only for an instant family, sorted by |value| (stable)."""
    import numpy as np

    from anachron.verify.layers.edgar import FAMILIES

    early = edgar_row(ORCH, "Orchard Computer Inc.", "NetIncomeLoss", 1.0, "2019-01-01", "2019-12-31", 2019, "FY",
                      "10-K", "2019-06-01", "O-early")  # filed before its period ends: cover data
    lower = edgar_row(VERD, "VERDANT GRAPHICS CORP", "EarningsPerShareDiluted", 0.5, "2019-01-28", "2020-01-26", 2020,
                      "FY", "10-K", "2020-02-20", "V-20-K", unit="usd/shares")
    facts = pd.concat([_facts(), add_revisions(pd.DataFrame([early, lower]).astype({"fy": "Int64"}))], ignore_index=True)
    g = EdgarGrounding(facts)
    n_indexed = 0
    for cik, rows in g._rows.items():
        for fam in FAMILIES:
            unit = "USD/SHARES" if fam.per_share else "USD"
            fam_rows = rows[rows["concept"].isin(fam.concepts) & (rows["unit"].astype(str).str.upper() == unit)]
            pd.testing.assert_frame_equal(g._family_rows.get((cik, fam.name), rows.iloc[0:0]), fam_rows)
            want = fam_rows[fam_rows["filed_d"] > fam_rows["end_d"]]
            if fam.instant:
                want = want[want["start_d"].isna()]
            want = want.iloc[np.argsort(want["val"].abs().to_numpy(dtype=float), kind="stable")]
            if want.empty:
                assert (cik, fam.name) not in g._values
                continue
            values, frame = g._values[(cik, fam.name)]
            pd.testing.assert_frame_equal(frame, want)
            np.testing.assert_array_equal(values, want["val"].abs().to_numpy(dtype=float))
            n_indexed += len(want)
    assert n_indexed >= 20 and {(ORCH, "cash"), (VERD, "EPS"), (ORCH, "net income")} <= set(g._values)
    assert 1.0 not in g._values[(ORCH, "net income")][0]  # the cover-data row
    assert 0.5 in g._values[(VERD, "EPS")][0]  # a unit written in lower case
