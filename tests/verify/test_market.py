"""Figures that first existed after the cutoff: a stated price, return or
company figure dated by the point-in-time data it matches, whatever the declared date says.
All fixtures and claims are written here."""

import datetime as dt

import pandas as pd
import pytest

from anachron.tasks.stock.grounding import WindowOutcomeGrounding
from anachron.sources.edgar import add_revisions
from conftest import edgar_row
from anachron.verify.layers.edgar import EdgarGrounding, find_fiscal_periods
from anachron.verify.layers.figures import mentions_move, parse_percents, parse_values
from anachron.verify.layers.grounded import CompositeGrounding, IndexChangeGrounding, PriceGrounding, named_window
from anachron.verify.layers.market import market_checks
from anachron.verify.pipeline import verify_claim

CUTOFF = dt.date(2021, 3, 31)


# -- number formats ------------------------------------------------------------------------

def test_money_formats_and_their_precision():
    vals = parse_values("sales of US$4.5bn, USD 3.25 billion, 1,234.5 million and 7.5 billion dollars")
    assert [v.value for v in vals] == [4.5e9, 3.25e9, 1234.5e6, 7.5e9]
    assert [v.currency for v in vals] == [True, True, False, True]
    assert vals[1].half_unit == pytest.approx(0.005e9)
    eps = parse_values("it earned 1.75 a share, with diluted EPS of $1.74")
    assert [(v.value, v.per_share) for v in eps] == [(1.75, True), (1.74, True)]


def test_trailing_zeros_and_hedges_make_a_figure_inexact():
    exact, round_, hedged, topped = parse_values("$61.30, $2,500, about $61.25 and topped $300 million")
    assert exact.rel_precision < 0.001 and not exact.hedged
    assert round_.round_half_unit == 50 and round_.half_unit == 0.5
    assert hedged.hedged and topped.hedged


def test_percent_formats_and_signs():
    got = parse_percents("Rivet gained 3.5 per cent, then lost 12 pct; a -2.25% session and a 4% slide")
    assert [(p.value, p.sign) for p in got] == [(3.5, 1), (12.0, -1), (2.25, -1), (4.0, -1)]
    assert got[2].half_unit == pytest.approx(0.005)
    assert parse_percents("margins widened by 2 percentage points") == []
    words = parse_percents("the stock roughly doubled, then lost nearly two-thirds of its value")
    assert [(round(p.value, 1), p.sign) for p in words] == [(100.0, 1), (66.7, -1)]
    assert mentions_move("the shares slumped") and not mentions_move("the board met on Tuesday")


# -- prices --------------------------------------------------------------------------------

def _prices() -> pd.DataFrame:
    """RVT trades from 2021-03-22 to 2021-07-30: 50.00 rising by 0.25 a day; its adjusted close
    is half the raw close (a 2-for-1 split later). FLAT closes at 80.00 every day."""
    days = pd.bdate_range("2021-03-22", "2021-07-30")
    rows = []
    for i, d in enumerate(days):
        close = 50.0 + 0.25 * i
        rows.append({"ticker": "RVT", "date": d, "close": close, "adj_close": close / 2})
        rows.append({"ticker": "FLAT", "date": d, "close": 80.0, "adj_close": 80.0})
    return pd.DataFrame(rows)


NAMES = {"RVT": ["Rivet Systems Inc."], "FLAT": ["Flatiron Holdings"]}


@pytest.fixture(scope="module")
def prices():
    return PriceGrounding(_prices(), NAMES)


def _ctx(**extra):
    return {"cutoff_date": CUTOFF.isoformat(), **extra}


def _day(prices: PriceGrounding, value: float) -> dt.date:
    return prices.days_matching("RVT", value, 0.001)[0]


def test_a_price_first_seen_after_the_cutoff_leaks_whatever_the_declared_date(prices):
    after = _day(prices, 53.50)
    assert after > CUTOFF
    out = verify_claim("Rivet Systems shares changed hands at $53.50.", "2021-01-15", CUTOFF,
                       instance=_ctx(), grounding=prices)
    assert out["leaked"] and out["effective_date"] == after.isoformat() and out["layer"] == "grounded"
    assert "only after the cutoff" in out["reason"]


def test_a_false_pre_cutoff_day_in_the_text_does_not_hide_the_later_price(prices):
    out = verify_claim("Rivet closed at $53.50 on March 24, 2021.", "2021-03-24", CUTOFF,
                       instance=_ctx(), grounding=prices)
    assert out["leaked"] and out["effective_date"] == _day(prices, 53.50).isoformat()


def test_a_split_adjusted_price_matches_the_adjusted_close(prices):
    v = prices.check("RVT stock finished at $26.75.", _ctx())  # 53.50 before the 2-for-1 split
    assert v is not None and v.effective_date == _day(prices, 53.50)


def test_a_price_seen_only_before_the_cutoff_supports_the_early_date(prices):
    before = _day(prices, 50.50)
    assert before <= CUTOFF
    out = verify_claim("Rivet stock was quoted at $50.50.", "2021-06-30", CUTOFF,
                       instance=_ctx(), grounding=prices)
    assert not out["leaked"] and out["effective_date"] == before.isoformat()
    # ... but not against a later date the claim names itself
    assert prices.check("Rivet stock was quoted at $50.50 in May 2021.", _ctx()) is None


def test_a_price_seen_on_both_sides_of_the_cutoff_is_no_evidence(prices):
    assert prices.check("Flatiron shares closed at $80.00.", _ctx()) is None


def test_rounded_hedged_or_non_price_amounts_are_not_matched(prices):
    ctx = _ctx()
    assert prices.check("Rivet stock traded at $54 a share.", ctx) is None  # too coarse
    assert prices.check("Rivet stock traded around $53.50.", ctx) is None  # hedged
    assert prices.check("Rivet shares: the board declared a dividend of $53.50 per share.", ctx) is None
    assert prices.check("Rivet shares closed at $53.50.", {}) is None  # no cutoff to compare with


def test_a_price_is_not_dated_against_a_named_time_the_table_does_not_cover(prices):
    # March 2020 lies before the table: the stated close may well be right for it
    assert prices.check("Rivet stock closed at $53.50 in March 2020.", _ctx()) is None


def test_companies_are_found_by_name_beyond_the_instance(prices):
    assert prices.companies("Flatiron and Rivet Systems (RVT) both traded higher", {}) == ["FLAT", "RVT"]
    inst = {"tickers": ["FLAT"], "names": ["Flatiron Holdings"]}
    assert prices.companies("Flatiron traded higher", inst) == ["FLAT"]


# -- returns over a named window ------------------------------------------------------------

def test_named_windows():
    assert named_window("rose 4% in April 2021") == named_window("rose 4% in April 2021")
    w = named_window("rose 4% between March 22, 2021 and April 30, 2021")
    assert (w.start, w.end) == (dt.date(2021, 3, 22), dt.date(2021, 4, 30))
    w = named_window("gained 9% over the twelve months to March 26, 2021")
    assert (w.start, w.end) == (None, dt.date(2021, 3, 26))
    assert named_window("has fallen 9% since March 26, 2021") is None  # the end is not named
    assert named_window("fell 9%") is None


def test_a_return_over_a_named_window_is_recomputed_from_the_closes(prices):
    # RVT: last close of March 2021 is 51.75 (Mar 31), of April 2021 57.25 (Apr 30): +10.63%
    v = prices.check("Rivet shares rose 10.6% in April 2021.", _ctx())
    assert v is not None and v.effective_date == dt.date(2021, 4, 30) and "matches the return" in v.reason
    assert prices.check("Rivet shares fell 10.6% in April 2021.", _ctx()) is None  # wrong way
    assert prices.check("Rivet shares rose 10.2% in April 2021.", _ctx()) is None  # another number


STOCK_LABEL = {"returns": {"RVT": 0.12, "FLAT": -0.16}, "first_day": "2021-04-01", "last_day": "2021-05-28"}


def _stock_ctx():
    return _ctx(tickers=["RVT", "FLAT"], names=["Rivet Systems Inc.", "Flatiron Holdings"], label=STOCK_LABEL)


@pytest.mark.parametrize("fact", [
    "Flatiron slid about 16 percent.",
    "Flatiron lost some 16 pct of its value.",
    "Rivet added 12% while Flatiron trailed.",
    "Flatiron was the laggard, shedding 15.6%.",
])
def test_the_window_return_in_other_words_is_the_outcome(prices, fact):
    # the stock task's checks decide its outcome; the generic price check never reads the label
    v = _stock_checks(prices).check(fact, _stock_ctx())
    assert v is not None and v.outcome and v.category == "A4"
    v = prices.check(fact, _stock_ctx())
    assert v is None or not v.outcome


def _stock_checks(prices):
    return CompositeGrounding([WindowOutcomeGrounding(prices), prices])


def test_halving_and_doubling_read_as_returns(prices):
    ctx = _stock_ctx()
    ctx["label"] = {**STOCK_LABEL, "returns": {"RVT": 1.004, "FLAT": -0.495}}
    assert _stock_checks(prices).check("Flatiron roughly halved.", ctx).outcome
    assert _stock_checks(prices).check("Rivet doubled.", ctx).outcome


@pytest.mark.parametrize("fact", [
    "Flatiron rose 16% in the first quarter.",  # the wrong way
    "Flatiron's revenue fell 16% from a year earlier.",  # a company figure, not the shares
    "Flatiron fell 16% over the year to March 26, 2021.",  # another window, ended by the cutoff
    "Flatiron fell 16% in 2020.",
])
def test_a_close_return_that_is_not_the_outcome(prices, fact):
    v = prices.check(fact, _stock_ctx())
    assert v is None or not v.outcome


# -- EDGAR figures ----------------------------------------------------------------------------

KITE = 3333


def _edgar() -> pd.DataFrame:
    def k(*a, **kw):
        return edgar_row(KITE, "Kiteworks Corp", *a, **kw)

    rev, eps = "Revenues", "EarningsPerShareDiluted"
    rows = [
        # calendar fiscal years; fiscal 2020 filed before the cutoff, Q1 2021 after it
        k(rev, 8.40e9, "2019-01-01", "2019-12-31", 2019, "FY", "10-K", "2020-02-20", "K-19"),
        k(rev, 9.15e9, "2020-01-01", "2020-12-31", 2020, "FY", "10-K", "2021-02-18", "K-20"),
        k(rev, 8.40e9, "2019-01-01", "2019-12-31", 2020, "FY", "10-K", "2021-02-18", "K-20"),
        k(rev, 2.31e9, "2020-10-01", "2020-12-31", 2020, "FY", "10-K", "2021-02-18", "K-20"),
        k(rev, 2.47e9, "2021-01-01", "2021-03-31", 2021, "Q1", "10-Q", "2021-04-29", "K-21Q1"),
        k(rev, 2.05e9, "2020-01-01", "2020-03-31", 2021, "Q1", "10-Q", "2021-04-29", "K-21Q1"),
        k(rev, 2.05e9, "2020-01-01", "2020-03-31", 2020, "Q1", "10-Q", "2020-04-30", "K-20Q1"),
        # a value reported for two periods, one on each side of the cutoff
        k("GrossProfit", 1.10e9, "2020-07-01", "2020-09-30", 2020, "Q3", "10-Q", "2020-10-29", "K-20Q3"),
        k("GrossProfit", 1.10e9, "2021-01-01", "2021-03-31", 2021, "Q1", "10-Q", "2021-04-29", "K-21Q1"),
        k(eps, 0.87, "2021-01-01", "2021-03-31", 2021, "Q1", "10-Q", "2021-04-29", "K-21Q1", unit="USD/shares"),
        k(rev, 2.58e9, "2021-04-01", "2021-06-30", 2021, "Q2", "10-Q", "2021-08-05", "K-21Q2"),
    ]
    df = pd.DataFrame(rows)
    df["fy"] = df["fy"].astype("Int64")
    return add_revisions(df)


@pytest.fixture(scope="module")
def edgar():
    return EdgarGrounding(_edgar())


def test_a_figure_first_filed_after_the_cutoff_leaks_without_a_period(edgar):
    v = edgar.check("Kiteworks booked $2.47 billion of revenue.", _ctx())
    assert v is not None and v.effective_date == dt.date(2021, 4, 29)
    assert "only figures first reported after the cutoff" in v.reason
    out = verify_claim("Kiteworks booked $2.47 billion of revenue.", "2021-01-05", CUTOFF,
                       instance=_ctx(), grounding=edgar)
    assert out["leaked"] and out["layer"] == "grounded"


def test_a_figure_filed_before_the_cutoff_supports_it(edgar):
    v = edgar.check("Kiteworks booked $9.15 billion of revenue.", _ctx())
    assert v is not None and v.effective_date == dt.date(2021, 2, 18)
    # a value repeated in a later filing still first appeared in the earlier one
    assert edgar.check("Kiteworks revenue came to 2,050 million.", _ctx()).effective_date == dt.date(2020, 4, 30)


def test_no_support_from_filings_that_end_soon_after_the_cutoff(edgar):
    # the last filing is of 2021-08-05: for a cutoff in June 2021 not meeting a value later says little
    assert edgar.check("Kiteworks booked $9.15 billion of revenue.", {"cutoff_date": "2021-06-15"}) is None


def test_a_figure_matching_periods_on_both_sides_is_no_evidence(edgar):
    assert edgar.check("Kiteworks gross profit was $1.10 billion.", _ctx()) is None


def test_imprecise_or_hedged_figures_are_not_dated_by_value(edgar):
    assert edgar.check("Kiteworks revenue was $2 billion.", _ctx()) is None
    assert edgar.check("Kiteworks revenue topped $2.47 billion.", _ctx()) is None


def test_a_compound_claim_with_one_later_figure_leaks(edgar):
    v = edgar.check("Kiteworks' fiscal 2020 revenue of $9.15 billion was followed by $2.47 billion in the "
                    "next quarter.", _ctx())
    assert v.effective_date == dt.date(2021, 4, 29)


def test_a_figure_that_contradicts_its_named_period_is_dated_by_the_later_one(edgar):
    # the claim names fiscal 2020 (filed before the cutoff) but states Q1 2021's figure
    v = edgar.check("Kiteworks' fiscal 2020 revenue was $2.47 billion.", _ctx())
    assert v.effective_date == dt.date(2021, 4, 29)


def test_periods_named_by_the_month_they_end_and_short_quarters():
    refs = find_fiscal_periods("revenue in the March 2021 quarter and 4Q20")
    assert [(r.kind, r.year, r.quarter, r.end, r.month) for r in refs] == [
        ("quarter", 2020, 4, None, False), ("quarter", 2021, None, dt.date(2021, 3, 31), True)]


def test_month_quarter_dates_to_the_filing(edgar):
    v = edgar.check("Kiteworks posted revenue of $2.47 billion for the quarter ended March 2021.", {})
    assert v.effective_date == dt.date(2021, 4, 29)


def test_a_comparison_with_forecasts_is_a_reported_figure(edgar):
    v = edgar.check("Kiteworks' Q1 2021 revenue of $2.47 billion beat analysts' estimates of $2.40 billion.", _ctx())
    assert v is not None and v.effective_date == dt.date(2021, 4, 29) and "$2.40" not in v.reason
    assert edgar.check("Kiteworks expects Q2 2021 revenue of $2.6 billion.", _ctx()) is None


def test_earnings_a_share_is_eps(edgar):
    v = edgar.check("Kiteworks earned $0.87 a share.", _ctx())
    assert v is not None and v.effective_date == dt.date(2021, 4, 29) and "EPS" in v.reason


# -- index changes and the market checks -------------------------------------------------

def test_the_same_index_change_on_both_sides_of_the_cutoff_needs_a_year():
    changes = pd.DataFrame({"date": pd.to_datetime(["2020-06-22", "2021-01-04", "2021-09-20"]),
                            "add": ["RVT", "", "RVT"], "remove": ["", "RVT", ""]})
    g = IndexChangeGrounding(changes, NAMES)
    assert g.check("Rivet Systems joined the S&P 500.", _ctx()) is None
    assert g.check("Rivet Systems joined the S&P 500 in 2021.", _ctx()).effective_date == dt.date(2021, 9, 20)
    assert g.check("Rivet Systems left the S&P 500.", _ctx()).effective_date == dt.date(2021, 1, 4)
    assert g.check("Rivet Systems joined the S&P 500.", {}).effective_date == dt.date(2020, 6, 22)


def test_market_checks_give_the_price_check_company_names(tmp_path):
    _prices().to_parquet(tmp_path / "prices.parquet")
    pd.DataFrame({"as_of": pd.to_datetime(["2021-05-01"] * 2), "ticker": ["RVT", "FLAT"],
                  "name": ["Rivet Systems Inc.", "Flatiron Holdings"], "sector": ["Industrials"] * 2}
                 ).to_parquet(tmp_path / "sectors.parquet")
    (price,) = market_checks({"prices": tmp_path / "prices.parquet", "sp500_sectors": tmp_path / "sectors.parquet"})
    v = price.check("Rivet Systems closed at $53.50.", _ctx())
    assert v is not None and v.effective_date > CUTOFF


def test_one_name_for_two_tickers_with_changes_on_both_sides_is_no_evidence():
    changes = pd.DataFrame({"date": pd.to_datetime(["2020-11-02", "2021-08-02"]),
                            "add": ["HLX", "HLXP"], "remove": ["HLXO", "HLX"]})
    g = IndexChangeGrounding(changes, {"HLX": ["Helix Medical"], "HLXP": ["Helix Medical Properties"]})
    assert g.check("Helix Medical joined the S&P 500.", _ctx()) is None
    assert g.check("HLXP joined the S&P 500.", _ctx()).effective_date == dt.date(2021, 8, 2)
    assert g.check("Helix Medical joined the S&P 500.", {}).effective_date == dt.date(2021, 8, 2)


def test_no_support_from_a_table_that_ends_soon_after_the_cutoff(prices):
    # the table ends 2021-07-30: for a cutoff in May 2021 not meeting a price later says little
    late = {"cutoff_date": "2021-05-20"}
    assert prices.check("Rivet stock was quoted at $50.50.", late) is None
    assert prices.check("Rivet stock was quoted at $50.50.", _ctx()) is not None
