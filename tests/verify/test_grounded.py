"""Grounded checks other than EDGAR: prices through the composite, S&P 500 index changes,
forecast resolutions, and make_grounding. All fixtures are written here."""

import datetime as dt

import pandas as pd
import pytest

from anachron.tasks.forecast.grounding import ResolutionGrounding
from anachron.verify.layers.grounded import CompositeGrounding, IndexChangeGrounding, PriceGrounding
from anachron.verify.pipeline import verify_claim
from anachron.tasks.registry import get_task

CUTOFF = dt.date(2019, 11, 29)


def _prices() -> pd.DataFrame:
    days = pd.bdate_range("2019-11-18", "2020-06-05")
    days = days[days != pd.Timestamp("2019-11-28")]  # Thanksgiving: no trading
    rows = []
    for i, d in enumerate(days):
        rows.append({"ticker": "ACME", "date": d, "close": 40.0 + 0.1 * i, "adj_close": 40.0 + 0.1 * i})
        rows.append({"ticker": "ZEBR", "date": d, "close": 250.0, "adj_close": 250.0})
    return pd.DataFrame(rows)


def _changes() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "date": pd.to_datetime(["2019-04-02", "2019-12-23", "2020-09-21", "2021-03-22"]),
            "add": ["DOWX", "ZEBR,STEX", "ACME", ""],
            "remove": ["BHFX", "MACX,TRIP", "", "ZEBR"],
        }
    )


NAMES = {"ZEBR": ["Zebrafish Technologies Corp"], "STEX": ["Stellar Exploration Inc."],
         "ACME": ["Acme Corp"], "MACX": ["Macerich Realty"], "DOWX": ["Dowell Chemical Inc."]}


@pytest.fixture(scope="module")
def stock_grounding():
    return CompositeGrounding([PriceGrounding(_prices()), IndexChangeGrounding(_changes(), NAMES)])


def _ctx():
    return {"tickers": ["ACME", "ZEBR"], "names": ["Acme Corp", "Zebrafish Technologies Corp"],
            "cutoff_date": CUTOFF.isoformat(),
            "label": {"ranking": ["ACME", "ZEBR"], "returns": {"ACME": 0.31, "ZEBR": 0.0},
                      "first_day": "2019-12-02", "last_day": "2020-05-29"}}


# -- prices through the composite --------------------------------------------------------

def test_price_on_a_trading_day(stock_grounding):
    out = verify_claim("ACME closed at $40.00 on 2019-11-18.", "2019-12-10", CUTOFF,
                       instance=_ctx(), grounding=stock_grounding)
    assert out["layer"] == "grounded" and out["effective_date"] == "2019-11-18"
    assert "matches" in out["reason"] and not out["leaked"]


def test_price_on_a_holiday_maps_to_the_last_trading_day_before(stock_grounding):
    out = verify_claim("Acme's share price closed at $40.80 on November 28, 2019.", None, CUTOFF,
                       instance=_ctx(), grounding=stock_grounding)
    assert out["effective_date"] == "2019-11-27" and "not a trading day" in out["reason"]


def test_price_after_the_cutoff_leaks(stock_grounding):
    out = verify_claim("ZEBR closed at $250.00 on 2019-12-03.", "2019-11-01", CUTOFF,
                       instance=_ctx(), grounding=stock_grounding)
    assert out["leaked"] and out["effective_date"] == "2019-12-03"


# -- index changes ------------------------------------------------------------------------

@pytest.mark.parametrize(
    "fact, day",
    [
        ("Zebrafish Technologies was added to the S&P 500 in December 2019.", "2019-12-23"),
        ("ZEBR joined the S&P 500.", "2019-12-23"),
        ("The S&P 500 added Stellar Exploration and Zebrafish.", "2019-12-23"),
        ("Macerich was removed from the S&P 500.", "2019-12-23"),
        ("Dowell Chemical's inclusion in the S&P 500 index followed its spin-off.", "2019-04-02"),
        ("Stellar Exploration replaced Macerich in the S&P 500.", "2019-12-23"),
        ("Zebrafish was dropped from the S&P 500 after its acquisition.", "2021-03-22"),
    ],
)
def test_index_change_claims_date_to_the_change(fact, day):
    v = IndexChangeGrounding(_changes(), NAMES).check(fact, {})
    assert v is not None and v.effective_date.isoformat() == day and v.category == "A1" and not v.outcome


@pytest.mark.parametrize(
    "fact",
    [
        "Zebrafish will join the S&P 500 later this month.",   # forward-looking: the announcement came earlier
        "Zebrafish is a member of the S&P 500.",               # no change stated
        "The S&P 500 added 2% while Dowell shares rose.",      # 'added' is a market move
        "Acme was added to the S&P 500 in 2020.",              # the recorded change is an addition in 2020 ...
        "Bolt Industries was added to the S&P 500.",           # unknown company
        "ZEBR was added to the Nasdaq-100.",                   # another index
    ],
)
def test_index_change_not_applicable(fact):
    g = IndexChangeGrounding(_changes(), NAMES)
    v = g.check(fact, {})
    if fact.startswith("Acme"):
        assert v is not None and v.effective_date == dt.date(2020, 9, 21)  # ... so it applies
    else:
        assert v is None


def test_index_change_through_the_verifier_leaks_after_cutoff(stock_grounding):
    out = verify_claim("Zebrafish Technologies was added to the S&P 500.", "2019-10-01", CUTOFF,
                       instance=_ctx(), grounding=stock_grounding)
    assert out["leaked"] and out["layer"] == "grounded" and out["category"] == "A1"


# -- forecast resolutions -----------------------------------------------------------------

STOCK_Q = {
    "question": "Will SOLV's market close price on 2024-10-19 be higher than its market close price on 2024-07-21?",
    "resolution_date": "2024-10-19", "resolved_to": 1.0, "cutoff_date": "2024-07-11",
    "sources": ["yfinance"], "tickers": ["SOLV"],
}
SPORT_Q = {
    "question": "Will Canada win the 2026 FIFA World Cup?",
    "resolution_date": "2026-07-19", "resolved_to": 0.0, "cutoff_date": "2025-12-01", "sources": ["polymarket"],
}
LAUNCH_Q = {
    "question": "Will four SpaceX Starship launches successfully reach outer space in 2024?",
    "resolution_date": "2024-12-30", "resolved_to": 1.0, "cutoff_date": "2024-07-01", "sources": ["polymarket"],
}
VACCINE_Q = {
    "question": "According to Wikipedia, will a vaccine have been developed for Hepatitis C by 2025-11-25?",
    "resolution_date": "2025-11-25", "resolved_to": 0.0, "cutoff_date": "2025-03-01", "sources": ["wikipedia"],
}


@pytest.mark.parametrize(
    "ctx, fact",
    [
        (STOCK_Q, "SOLV's market close price on 2024-10-19 was higher than its close on 2024-07-21."),
        (STOCK_Q, "The question about SOLV's close price resolved Yes."),
        (SPORT_Q, "Argentina won the 2026 FIFA World Cup, with Canada eliminated in the group stage."),
        (SPORT_Q, "Canada ended up losing in the quarter-finals of the FIFA World Cup."),
        (LAUNCH_Q, "Four SpaceX Starship launches reached outer space in 2024."),
        (VACCINE_Q, "As of November 2025, no vaccine had been developed for Hepatitis C."),
    ],
)
def test_resolution_statements_are_outcome_leaks(ctx, fact):
    v = ResolutionGrounding().check(fact, ctx)
    assert v is not None and v.outcome and v.category == "A4"
    assert v.effective_date.isoformat() == ctx["resolution_date"]


@pytest.mark.parametrize(
    "ctx, fact",
    [
        (STOCK_Q, "SOLV closed at $68.40 on 2024-07-10."),                     # history before the cutoff
        (STOCK_Q, "Analysts expect SOLV's close price to be higher by October 2024."),  # hedged
        (STOCK_Q, "3M completed the spin-off of Solventum (SOLV) in April 2024."),  # background
        (SPORT_Q, "Argentina won the 2022 FIFA World Cup."),                   # another edition
        (SPORT_Q, "Canada will co-host the 2026 FIFA World Cup."),             # scheduled, not resolved
        (SPORT_Q, "Canada qualified automatically for the 2026 FIFA World Cup as a host nation."),
        (LAUNCH_Q, "In March 2024, a SpaceX Starship launch reached outer space."),  # within the year, before cutoff
        (LAUNCH_Q, "SpaceX plans four Starship launches in 2024."),
        (VACCINE_Q, "Hepatitis C is treated with direct-acting antivirals."),
        (VACCINE_Q, "No vaccine for Hepatitis C had been developed as of 2024."),
        (VACCINE_Q, "A vaccine for Hepatitis B was developed in 1981."),
    ],
)
def test_clean_near_misses_are_not_resolutions(ctx, fact):
    assert ResolutionGrounding().check(fact, ctx) is None


def test_resolution_through_the_verifier():
    out = verify_claim("SOLV's market close price on 2024-10-19 was higher than on 2024-07-21.", "2024-07-01",
                       dt.date(2024, 7, 11), instance=STOCK_Q, grounding=ResolutionGrounding())
    assert out["leaked"] and out["category"] == "A4" and out["effective_date"] == "2024-10-19"


# -- composite and make_grounding ---------------------------------------------------------

class _Fixed:
    def __init__(self, day):
        self.day = day

    def check(self, fact, instance):
        from anachron.verify.layers.grounded import GroundedVerdict

        return None if self.day is None else GroundedVerdict(self.day, f"fixed {self.day}")


def test_composite_takes_the_first_verdict():
    g = CompositeGrounding([_Fixed(None), _Fixed(dt.date(2020, 1, 2)), _Fixed(dt.date(2021, 1, 1))])
    assert g.check("x", {}).effective_date == dt.date(2020, 1, 2)
    assert CompositeGrounding([_Fixed(None)]).check("x", {}) is None


def test_make_grounding_builds_each_task(tmp_path):
    prices = tmp_path / "prices.parquet"
    _prices().to_parquet(prices)
    changes = tmp_path / "changes.parquet"
    _changes().to_parquet(changes)
    sectors = tmp_path / "sectors.parquet"
    pd.DataFrame({"as_of": pd.to_datetime(["2020-05-10"] * 2), "ticker": ["ZEBR", "STEX"],
                  "name": ["Zebrafish Technologies Corp", "Stellar Exploration Inc."],
                  "sector": ["Information Technology", "Energy"]}).to_parquet(sectors)
    def kinds(g):  # the stock task's market checks are wrapped (they never see the stock label)
        return [type(getattr(c, "inner", c)).__name__ for c in g.checks]

    stock = get_task("stock").make_grounding({"prices": prices, "sp500_changes": changes, "sp500_sectors": sectors})
    assert kinds(stock) == ["WindowOutcomeGrounding", "PriceGrounding", "IndexChangeGrounding"]
    assert stock.check("Stellar Exploration joined the S&P 500.", _ctx()).effective_date == dt.date(2019, 12, 23)
    only_prices = get_task("stock").make_grounding({"prices": prices})
    assert kinds(only_prices) == ["WindowOutcomeGrounding", "PriceGrounding"]
    assert type(get_task("salary").make_grounding({})).__name__ == "ContractGrounding"
    assert type(get_task("legal").make_grounding({})).__name__ == "DecisionGrounding"
    forecast = get_task("forecast").make_grounding({})
    assert [type(c).__name__ for c in forecast.checks] == ["ResolutionGrounding"]
    forecast = get_task("forecast").make_grounding({"prices": prices, "sp500_changes": changes, "sp500_sectors": sectors})
    assert [type(c).__name__ for c in forecast.checks] == ["ResolutionGrounding", "PriceGrounding", "IndexChangeGrounding"]
    # forecast contexts carry no tickers or stock label: the market checks still apply
    fctx = {"cutoff_date": "2019-11-29", "question": "Will the Fed cut rates by 2020-03-31?", "resolution_date": "2020-03-31"}
    assert forecast.check("Stellar Exploration joined the S&P 500.", fctx).effective_date == dt.date(2019, 12, 23)


def _history() -> pd.DataFrame:
    """Two years of closes of one company: about $90 until the cutoff, a crash to about $24 after."""
    days = pd.bdate_range("2018-01-02", "2020-06-30")
    closes = [90.0 + (i % 7) * 0.5 if d <= pd.Timestamp("2019-11-29") else max(21.0, 90.0 - 0.9 * (i - 500)) for i, d in enumerate(days)]
    return pd.DataFrame({"ticker": "KSTR", "date": days, "close": closes, "adj_close": closes})


def test_an_approximate_price_level_first_reached_after_the_cutoff_leaks():
    g = PriceGrounding(_history(), {"KSTR": "Kestrel Air"})
    ctx = {"cutoff_date": "2019-11-30", "tickers": ["KSTR"], "names": ["Kestrel Air"]}
    v = g.check("Kestrel Air shares are trading near $24.", ctx)
    assert v is not None and v.effective_date > dt.date(2019, 11, 30) and "only after the cutoff" in v.reason
    # a level the stock held before the cutoff too is no evidence, nor an amount per share of another thing
    assert g.check("Kestrel Air shares are trading near $90.", ctx) is None or g.check("Kestrel Air shares are trading near $90.", ctx).effective_date <= dt.date(2019, 11, 30)
    assert g.check("Kestrel Air pays a dividend of about $24 a share.", ctx) is None
    # without a year of history before the cutoff, a level cannot be "first reached"
    short = PriceGrounding(_history()[lambda d: d["date"] >= "2019-11-01"], {"KSTR": "Kestrel Air"})
    assert short.check("Kestrel Air shares are trading near $24.", ctx) is None
