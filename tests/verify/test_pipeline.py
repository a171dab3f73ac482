import datetime as dt
import json

import pandas as pd
import pytest

from anachron.tasks.stock.grounding import WindowOutcomeGrounding
from anachron.verify.citations import cited_ids
from anachron.verify.dates import find_periods, normalize_declared
from anachron.names import mentioned_tickers
from anachron.verify.layers.grounded import CompositeGrounding, PriceGrounding
from anachron.verify.pipeline import verify_claim, verify_run
from anachron.verify.layers.rules import date_content

CUTOFF = dt.date(2019, 11, 29)  # a Friday


def test_same_day_claim_does_not_leak_next_day_does():
    same = verify_claim("Acme announced a buyback.", "2019-11-29", CUTOFF)
    nxt = verify_claim("Acme announced a buyback.", "2019-11-30", CUTOFF)
    assert same["verdict"] == "clean" and not same["leaked"]
    assert nxt["verdict"] == "leaked" and nxt["leaked"]
    assert same["layer"] == nxt["layer"] == "declared"


def test_same_day_leaks_when_configured():
    out = verify_claim("Acme announced a buyback.", "2019-11-29", CUTOFF, leak_on_same_day=True)
    assert out["leaked"]


def test_rules_correct_a_too_early_quarterly_date():
    # Q4 2019 results cannot be public on the last day of the quarter
    out = verify_claim("Acme reported Q4 2019 revenue of $3.1B.", "2019-11-15", CUTOFF)
    assert out["layer"] == "rules"
    assert out["effective_date"] == "2020-01-14"
    assert out["leaked"]
    assert "too early" in out["reason"]


def test_rules_keep_plausible_quarterly_date():
    out = verify_claim("Acme reported Q3 2019 revenue of $3.1B.", "2019-10-24", CUTOFF)
    assert out["layer"] == "declared" and not out["leaked"]


def test_full_year_results_rule():
    f = date_content("Acme's full-year 2019 earnings rose 8%.")
    assert f.earliest == dt.date(2020, 1, 15)


def test_forward_looking_statement_not_dated_by_its_period():
    assert date_content("Acme expects Q1 2020 revenue of $2B.").findings == ()


def test_mention_of_a_later_month_leaks_even_with_early_declared_date():
    out = verify_claim("Airline stocks collapsed in March 2020.", "2019-06-01", CUTOFF)
    assert out["leaked"] and out["effective_date"] == "2020-03-01"


def test_undated_claims_are_kept_and_marked():
    out = verify_claim("Acme has a strong brand.", "around 2019", CUTOFF)
    assert out["verdict"] == "undated" and not out["leaked"]
    assert out["date_status"] == "undated"


def test_declared_date_normalisation():
    assert normalize_declared("2019-02-30").status == "undated"
    q = normalize_declared("Q3 2019")
    assert q.status == "normalized" and q.date == dt.date(2019, 7, 1)
    assert normalize_declared("November 2019").date == dt.date(2019, 11, 1)
    assert normalize_declared("2019-11-29").status == "exact"


def test_find_periods_prefers_specific_spans():
    kinds = [p.kind for p in find_periods("On May 29, 2020 the Q1 2020 numbers and FY2019 were out")]
    assert kinds == ["day", "quarter", "fiscal_year"]


def test_cited_ids_forms():
    assert cited_ids("a [1], b [2, 4] c [5-7] d [9][10]") == {1, 2, 4, 5, 6, 7, 9, 10}


@pytest.fixture()
def grounding():
    days = pd.bdate_range("2019-11-20", "2020-06-05")
    days = days[days != pd.Timestamp("2019-11-28")]  # Thanksgiving
    rows = []
    for i, d in enumerate(days):
        rows.append({"ticker": "ACME", "date": d, "close": 50.0 + i * 0.1, "adj_close": 49.0 + i * 0.1})
        rows.append({"ticker": "BOLT", "date": d, "close": 20.0, "adj_close": 20.0})
    return PriceGrounding(pd.DataFrame(rows))


def _ctx(grounding):
    close_end = grounding.close_on("ACME", dt.date(2020, 5, 29))
    return {
        "tickers": ["ACME", "BOLT"],
        "names": ["Acme Corp", "Bolt Industries"],
        "cutoff_date": CUTOFF.isoformat(),
        "label": {"ranking": ["ACME", "BOLT"], "returns": {"ACME": 0.2345, "BOLT": -0.1},
                  "first_day": "2019-12-02", "last_day": "2020-05-29"},
        "_close_end": close_end,
    }


def test_price_on_trading_day_is_dated_by_that_day(grounding):
    out = verify_claim("ACME closed at $50.00 on 2019-11-20.", "2019-12-15", CUTOFF,
                       instance=_ctx(grounding), grounding=grounding)
    assert out["layer"] == "grounded"
    assert out["effective_date"] == "2019-11-20" and not out["leaked"]
    assert "matches" in out["reason"]


def test_price_on_a_holiday_maps_to_last_trading_day(grounding):
    out = verify_claim("Acme's stock price closed at $50.50 on November 28, 2019.", None, CUTOFF,
                       instance=_ctx(grounding), grounding=grounding)
    assert out["layer"] == "grounded"
    assert out["effective_date"] == "2019-11-27"
    assert "not a trading day" in out["reason"]


def test_post_cutoff_price_leaks(grounding):
    out = verify_claim("BOLT closed at $20.00 on 2019-12-02.", "2019-11-01", CUTOFF,
                       instance=_ctx(grounding), grounding=grounding)
    assert out["leaked"] and out["effective_date"] == "2019-12-02"


def test_statement_of_realised_return_is_outcome_leak(grounding):
    stock = CompositeGrounding([WindowOutcomeGrounding(grounding), grounding])  # the stock task's checks
    out = verify_claim("Acme shares gained 23.5% over the period.", "2019-11-01", CUTOFF,
                       instance=_ctx(grounding), grounding=stock)
    assert out["leaked"] and out["category"] == "A4"
    assert "window's outcome" in out["reason"]


def test_end_of_window_price_is_outcome_leak(grounding):
    ctx = _ctx(grounding)
    stock = CompositeGrounding([WindowOutcomeGrounding(grounding), grounding])
    out = verify_claim(f"Acme trades at ${ctx['_close_end']:.2f}.", "2019-11-01", CUTOFF,
                       instance=ctx, grounding=stock)
    assert out["leaked"] and out["category"] == "A4"


def test_mentioned_tickers_by_symbol_and_name():
    assert mentioned_tickers("Bolt Industries and ACME", ["ACME", "BOLT"], ["Acme Corp", "Bolt Industries"]) == ["ACME", "BOLT"]
    assert mentioned_tickers("nothing here", ["ACME"], ["Acme Corp"]) == []


def test_mentioned_tickers_skips_single_initials():
    # "A. O. Smith" must not be named by the article "a", nor "T. Rowe Price" by the "t" of "don't"
    names = ["A. O. Smith Corp", "T. Rowe Price Group"]
    assert mentioned_tickers("Shares don't move on a quiet day.", ["AOS", "TROW"], names) == []
    assert mentioned_tickers("Smith raised its dividend; Rowe Price fell.", ["AOS", "TROW"], names) == ["AOS", "TROW"]


def test_verify_run_one_row_per_evidence_item():
    ev = [{"id": 1, "fact": "Acme bought back stock.", "source_date": "2019-10-01"},
          {"id": 2, "fact": "Acme reported Q4 2019 revenue.", "source_date": "2019-11-01"}]
    run = pd.DataFrame([{"instance_id": "i1", "task": "stock", "method": "m", "model": "x",
                         "cutoff_date": "2019-11-29", "evidence": json.dumps(ev), "reasoning": "see [1]"},
                        {"instance_id": "i2", "task": "stock", "method": "m", "model": "x",
                         "cutoff_date": "2019-11-29", "evidence": "[]", "reasoning": ""}])
    claims = verify_run(run, {"i1": {"cutoff_date": "2019-11-29"}, "i2": {"cutoff_date": "2019-11-29"}})
    assert list(claims["claim_id"]) == ["i1:1", "i1:2"]
    assert list(claims["leaked"]) == [False, True]
    assert list(claims["cited"]) == [True, False]
    assert set(claims["layer"]) == {"declared", "rules"}


def test_contract_grounding_flags_the_predicted_contract():
    from anachron.tasks.salary.grounding import ContractGrounding

    ctx = {"cutoff_date": "2019-06-30", "player": "Jordan Example", "signing_date": "2019-07-06",
           "aav": 25_000_000.0, "total_value": 100_000_000.0, "years": 4}
    g = ContractGrounding()
    out = verify_claim("Example signed a 4-year, $100M deal with Boston.", "2019-05-01", dt.date(2019, 6, 30),
                       instance=ctx, grounding=g)
    assert out["leaked"] and out["category"] == "A4" and out["effective_date"] == "2019-07-06"
    # a past contract of another size is not the outcome
    past = verify_claim("Example signed a 2-year, $12M contract in 2017.", "2017-07-01", dt.date(2019, 6, 30),
                        instance=ctx, grounding=g)
    assert not past["leaked"] and past["layer"] != "grounded"


def test_decision_grounding_flags_the_decision_not_lower_courts():
    from anachron.tasks.legal.grounding import DecisionGrounding

    ctx = {"cutoff_date": "2020-06-14", "case_name": "Smith v. Jones", "petitioner": "Alice Smith",
           "respondent": "Bob Jones", "decision_date": "2020-06-15"}
    g = DecisionGrounding()
    out = verify_claim("In Smith v. Jones the Supreme Court ruled 6-3 for Smith.", "2020-01-10", dt.date(2020, 6, 14),
                       instance=ctx, grounding=g)
    assert out["leaked"] and out["category"] == "A4" and out["effective_date"] == "2020-06-15"
    lower = verify_claim("The Ninth Circuit affirmed the judgment against Alice Smith.", "2019-03-01",
                         dt.date(2020, 6, 14), instance=ctx, grounding=g)
    assert not lower["leaked"] and lower["layer"] == "declared"


def test_decision_grounding_needs_the_court_when_only_a_party_is_named():
    from anachron.tasks.legal.grounding import DecisionGrounding

    ctx = {"cutoff_date": "2020-06-14", "case_name": "Smith v. Environmental Protection Agency",
           "petitioner": "Alice Smith", "respondent": "Environmental Protection Agency", "decision_date": "2020-06-15"}
    g = DecisionGrounding()
    background = verify_claim("The Environmental Protection Agency has long been in favor of cleaner cars.",
                              "2017-06-28", dt.date(2020, 6, 14), instance=ctx, grounding=g)
    assert not background["leaked"]
    ruling = verify_claim("The Supreme Court upheld the Environmental Protection Agency's rule.", "2020-01-02",
                          dt.date(2020, 6, 14), instance=ctx, grounding=g)
    assert ruling["leaked"] and ruling["category"] == "A4"


class _CountingCorpus:
    """A corpus layer that dates nothing and counts its searches (as CorpusLayer does)."""

    def __init__(self):
        self.n_searches, self.n_errors, self.last_error = 0, 0, ""

    def check(self, fact, cutoff):
        self.n_searches += 1
        return None


def test_verify_run_in_forked_workers_gives_the_same_table_in_run_order():
    facts = ["Acme closed at $41.20 on 2019-11-04.", "Acme reported Q4 2019 revenue of $2.1B.",
             "Acme has a strong balance sheet.", "Acme fell 12% in March 2020.", "Acme expects 2020 revenue of $9B."]
    rows = []
    for i in range(23):
        ev = [{"id": k + 1, "fact": facts[(i + k) % len(facts)], "source_date": f"2019-{1 + (i + k) % 12:02d}-15"}
              for k in range(1 + i % 4)]
        rows.append({"instance_id": f"i{i:02d}", "task": "stock", "method": "m", "model": "x",
                     "cutoff_date": "2019-11-29", "evidence": json.dumps(ev), "reasoning": "see [1]. Acme rose in 2020 [2].",
                     "parse_status": "ok" if i % 7 else "truncated"})
    run = pd.DataFrame(rows)
    contexts = {r["instance_id"]: {"cutoff_date": "2019-11-29"} for r in rows}
    one, two = _CountingCorpus(), _CountingCorpus()
    alone = verify_run(run, contexts, layers=("corpus", "rules"), corpus=one)
    forked = verify_run(run, contexts, layers=("corpus", "rules"), corpus=two, workers=3)
    pd.testing.assert_frame_equal(alone, forked)
    assert len(alone) > 40 and alone["leaked"].any() and not alone["leaked"].all()
    assert two.n_searches == one.n_searches == len(alone)  # the workers' searches are counted in the parent
    with pytest.raises(ValueError, match="workers"):
        verify_run(run, contexts, workers=0)
