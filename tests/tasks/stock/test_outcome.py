"""The stock task's own outcome in any wording (tasks/stock/outcome.py, tasks/stock/grounding.py).

An invented group of five companies over an invented window; every claim is written here."""

import datetime as dt

import pandas as pd
import pytest

from anachron.names import mentioned_tickers, name_forms, ticker_mentions
from anachron.tasks.stock.claims import outcome_rule
from anachron.tasks.stock.grounding import WindowOutcomeGrounding, make_stock_grounding
from anachron.tasks.stock.outcome import assertions, find_outcome, time_scope, window_of
from anachron.verify.features import LOOKING_BACK, yearless_months
from anachron.verify.layers.grounded import PriceGrounding
from anachron.verify.pipeline import verify_claim

# window 2021-03-01 .. 2021-08-31 (cutoff 2021-02-28); best to worst: BRQ, KLN, VST, MDW, PXR
CTX = {
    "tickers": ["KLN", "BRQ", "MDW", "PXR", "VST"],
    "names": ["Kelnor Mining Corp.", "Brightquay Holdings", "Meadowbank Foods Inc.", "PaxRidge Energy", "Vesterholm Ltd"],
    "cutoff_date": "2021-02-28",
    "label": {
        "ranking": ["BRQ", "KLN", "VST", "MDW", "PXR"],
        "returns": {"BRQ": 0.243, "KLN": 0.081, "VST": -0.034, "MDW": -0.212, "PXR": -0.487},
        "first_day": "2021-03-01",
        "last_day": "2021-08-31",
    },
}
CUTOFF = dt.date(2021, 2, 28)


@pytest.mark.parametrize(
    "fact",
    [
        "PaxRidge shares lost nearly half their value.",                    # a fraction in words
        "Meadowbank fell 21 percent, while Brightquay climbed 24%.",          # two figures, two subjects
        "Kelnor ended up about 8% higher.",
        "Brightquay returned +24.3% from March through August 2021.",
        "Of the five, Brightquay did best and PaxRidge did worst.",
        "PaxRidge was the laggard of the group.",
        "Kelnor came in second among these miners and food makers.",
        "Vesterholm held up better than Meadowbank and PaxRidge.",
        "PaxRidge trailed all of its peers over the half-year that followed.",
        "Brightquay and Kelnor were the only two of the five to finish higher.",
        "The finishing order was BRQ, KLN, VST, MDW, PXR.",
        "Meadowbank's slide was the second-steepest in the group.",
        "Brightquay and Kelnor rose over the window.",
        "Vesterholm dipped slightly over the period.",
    ],
)
def test_the_windows_outcome_in_other_words(fact):
    found = find_outcome(fact, CTX)
    assert found is not None and found.rule.startswith("A4:stock:")


@pytest.mark.parametrize(
    "fact",
    [
        "PaxRidge fell 48% in 2018.",                                         # another year
        "Brightquay rose 24% between Aug. 3 and Feb. 26, 2021.",              # a close figure over another span
        "Kelnor gained 8% over the past year.",                               # looks back from the cutoff
        "Brightquay has outperformed Kelnor since its listing.",              # present perfect: up to the cutoff
        "Brightquay was the best performer of the five in January 2021.",     # a rank over a pre-cutoff month
        "Meadowbank's revenue fell 21% last quarter.",                        # the business, not the stock
        "Analysts ranked Brightquay first among the five stocks.",           # an opinion
        "PaxRidge carries the heaviest debt of the five.",                    # a fundamental superlative
        "Kelnor could gain 8% this spring.",                                  # hedged
        "PaxRidge was the best performer of the group.",                      # a rank the window refutes
        "Brightquay fell 24% over the period.",                               # the sign is wrong
        "Meadowbank rose 3% in the month before the cutoff.",
    ],
)
def test_not_the_windows_outcome(fact):
    assert find_outcome(fact, CTX) is None


def test_time_scope_reads_month_names_on_the_window():
    w = window_of(CTX)
    assert w is not None and w.months == frozenset(range(3, 9))
    assert time_scope("PaxRidge slid from March to August.", w) == "window"
    assert time_scope("PaxRidge slid in November.", w) == "other"          # outside the window's months
    assert time_scope("PaxRidge slid in 2021.", w) == "other"              # straddles the cutoff
    assert time_scope("PaxRidge slid in May 2021.", w) == "window"
    assert time_scope("PaxRidge slid over the subsequent months.", w) == "window"
    assert time_scope("PaxRidge slid.", w) == "none"
    # the base close just before the window counts only with a reference inside it
    assert time_scope("PaxRidge slid from Feb. 26, 2021 to Aug. 31, 2021.", w) == "window"
    assert time_scope("PaxRidge slid 2% on Feb. 26, 2021.", w) == "other"


def test_assertions_say_what_they_checked():
    w = window_of(CTX)
    found = assertions("Meadowbank dropped roughly 20%, the second-biggest loss of the five.", w)
    assert {a.kind for a in found} == {"return", "rank"} and all(a.holds for a in found)
    wrong = assertions("Vesterholm outperformed Kelnor.", w)
    assert [a.holds for a in wrong] == [False]


def test_approximate_figures_are_read_at_their_rounding():
    assert find_outcome("Meadowbank shed roughly 20% of its value.", CTX) is not None   # -21.2: within 5
    assert find_outcome("Meadowbank shed 20% of its value.", CTX) is None               # exact wording: 1 point


def test_the_categoriser_names_the_finding():
    assert outcome_rule("Brightquay returned 24.3%.", CTX) == "A4:stock:return-in-window"
    assert outcome_rule("PaxRidge was the weakest of the five.", CTX) == "A4:stock:ranking-in-window"
    assert outcome_rule("PaxRidge was the weakest of the five in 2019.", CTX) is None


# -- the grounded check: end-of-window close with the price table ----------------------------

def _prices() -> pd.DataFrame:
    days = pd.bdate_range("2020-01-02", "2021-09-10")
    rows = [{"ticker": "KLN", "date": d, "close": 30.0 + 0.01 * i, "adj_close": 30.0 + 0.01 * i} for i, d in enumerate(days)]
    return pd.DataFrame(rows)


def test_end_of_window_close_and_a_close_seen_before():
    prices = PriceGrounding(_prices())
    g = WindowOutcomeGrounding(prices)
    end = prices.close_on("KLN", dt.date(2021, 8, 31))
    v = g.check(f"Kelnor finished at ${end:.2f} a share.", CTX)
    assert v is not None and v.outcome and v.effective_date == dt.date(2021, 8, 31) and v.category == "A4"
    assert g.check(f"Kelnor finished at ${end:.2f} a share in 2019.", CTX) is None   # another time
    assert g.check("Kelnor closed at $30.50.", CTX) is None                           # a level seen before the cutoff


def test_stock_grounding_keeps_the_label_from_the_market_checks(tmp_path):
    path = tmp_path / "prices.parquet"
    _prices().to_parquet(path)
    g = make_stock_grounding({"prices": path})
    # a pre-cutoff price on a day is dated by the price check, not taken for the outcome
    out = verify_claim("Kelnor closed at $33.00 on 2021-02-01.", None, CUTOFF, instance=CTX, grounding=g)
    assert out["layer"] == "grounded" and out["effective_date"] == "2021-02-01" and not out["leaked"]
    # a return over another window that happens to be close is not the outcome
    out = verify_claim("Brightquay gained 24% in 2020.", "2020-12-31", CUTOFF, instance=CTX, grounding=g)
    assert not out["leaked"]
    out = verify_claim("Brightquay gained about 24%, the best of the five.", "2021-02-20", CUTOFF, instance=CTX, grounding=g)
    assert out["leaked"] and out["category"] == "A4" and out["effective_date"] == "2021-08-31"


# -- the helpers in shared modules ----------------------------------------------------------

def test_company_name_forms():
    assert name_forms("PaxRidge Energy") == ["PaxRidge", "PaxRidgeEnergy"]
    assert name_forms("Kelnor Mining Corp.") == ["Kelnor", "KelnorMining"]
    assert name_forms("Stonebridgeworks Co.") == ["Stonebridgeworks"]
    assert name_forms("Kellerman Vanstone Inc.")[-1] == "KellermanVanstone"
    assert "Dorian" in name_forms("DorianLabs Inc.")                     # the head of a compound word
    spans = ticker_mentions("KLN, then Kelnor and kelnor again; Dorian too", ["KLN", "DLB"], ["Kelnor Mining", "DorianLabs"])
    assert spans == {"KLN": [0, 10, 21], "DLB": [35]}
    assert mentioned_tickers("Dorian rose", ["KLN", "DLB"], ["Kelnor Mining", "DorianLabs"]) == ["DLB"]


def test_yearless_months_and_looking_back():
    assert yearless_months("from early March to the end of Aug. and in May 2020") == [3, 8]
    assert yearless_months("NOV rose in May") == [5]       # an upper-case ticker is no month
    assert LOOKING_BACK.search("so far this year") and LOOKING_BACK.search("over the past 12 months")
    assert not LOOKING_BACK.search("over the following months")


def test_the_whole_group_as_subject():
    claim = "All five stocks ended the period lower."
    assert find_outcome(claim, CTX) is None                      # two of them rose: refuted
    down = {**CTX, "label": {**CTX["label"], "returns": {t: -abs(r) - 0.01 for t, r in CTX["label"]["returns"].items()}}}
    found = find_outcome(claim, down)
    assert found is not None and found.rule == "A4:stock:move-in-window"
    assert find_outcome("All five stocks ended lower.", down) is None   # no time scope: any period
