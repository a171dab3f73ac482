"""The calibration's re-worded real claims: date formats and their intervals, the
news-headline and EDGAR-as-filed families, the per-family facets and the report section.
Synthetic headlines and filings only."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from anachron.tasks.registry import get_task
from anachron.report.calibration import calibration_markdown
from anachron.tables import PLANTED_COLUMNS
from anachron.verify.calibration.evaluate import calibrate, summarize_calibration, verify_planted
from anachron.verify.calibration.plant import plant_claims
from anachron.verify.calibration.real import edgar_as_filed, news_headlines
from anachron.verify.calibration.reword import (
    REWORD_FORMATS,
    carries_truth,
    declared_for,
    pick_format,
    place_date,
    write_date,
    written_interval,
)

D = dt.date


# ---------------------------------------------------------------------------
# re-wording rules


def test_every_format_writes_the_day():
    d = D(2021, 8, 17)
    got = {f: write_date(d, f) for f in REWORD_FORMATS}
    assert got == {"iso": "2021-08-17", "abbrev": "Aug. 17, 2021", "us_short": "8/17/21", "day_first": "17/08/2021",
                   "q_short": "3Q21", "mon_dash": "Aug-2021", "month_year": "August 2021", "none": ""}
    assert write_date(D(2021, 6, 3), "abbrev") == "June 3, 2021"  # AP style writes June out
    with pytest.raises(ValueError):
        write_date(d, "roman")


def test_written_interval_spans_both_readings_of_a_numeric_day():
    assert written_interval(D(2021, 8, 17), "us_short") == (D(2021, 8, 17), D(2021, 8, 17))  # 17 is no month
    assert written_interval(D(2021, 4, 6), "day_first") == (D(2021, 4, 6), D(2021, 6, 4))  # 06/04 or 04/06
    assert written_interval(D(2021, 5, 5), "us_short") == (D(2021, 5, 5), D(2021, 5, 5))
    assert written_interval(D(2021, 8, 17), "q_short") == (D(2021, 7, 1), D(2021, 9, 30))
    assert written_interval(D(2020, 2, 11), "mon_dash") == (D(2020, 2, 1), D(2020, 2, 29))
    assert written_interval(D(2021, 8, 17), "none") is None


def test_a_written_date_carries_the_truth_only_when_it_cannot_straddle_the_cutoff():
    cutoff = D(2021, 8, 10)
    # a leak a week after the cutoff: the day carries it, its month and quarter began before the cutoff
    assert carries_truth(D(2021, 8, 17), "abbrev", cutoff, leak=True)
    assert not carries_truth(D(2021, 8, 17), "month_year", cutoff, leak=True)
    assert not carries_truth(D(2021, 8, 17), "q_short", cutoff, leak=True)
    # a clean fact of the cutoff's own month: its month ends after the cutoff
    assert carries_truth(D(2021, 8, 2), "iso", cutoff, leak=False)
    assert not carries_truth(D(2021, 8, 2), "mon_dash", cutoff, leak=False)
    # 9/8/21 written day first could be August 9 (clean) or September 8 (a leak): no single truth
    assert not carries_truth(D(2021, 8, 9), "day_first", cutoff, leak=False)
    assert carries_truth(D(2021, 8, 17), "none", cutoff, leak=True)
    rng = np.random.default_rng(0)
    picks = {pick_format(rng, D(2021, 8, 17), cutoff, True) for _ in range(200)}
    assert picks == {"iso", "abbrev", "us_short", "day_first", "none"}


def test_place_date_positions_and_declared_modes():
    body = "The Rivertown council approved the new bridge"
    assert place_date(body, "3/9/22", "us_short", "prefix") == "On 3/9/22, the Rivertown council approved the new bridge."
    assert place_date(body + ".", "1Q22", "q_short", "suffix") == body + " in 1Q22."
    assert place_date(body, "Mar-2022", "mon_dash", "paren") == body + " (Mar-2022)."
    assert place_date(body, "", "none", "prefix") == body + "."
    rng = np.random.default_rng(1)
    truth, cutoff = D(2022, 3, 9), D(2022, 1, 31)
    assert declared_for(rng, truth, cutoff, "honest") == "2022-03-09"
    assert declared_for(rng, truth, cutoff, "missing") is None
    early = [D.fromisoformat(declared_for(rng, truth, cutoff, "false_early")) for _ in range(50)]
    assert all(cutoff - dt.timedelta(days=120) <= e < cutoff for e in early)
    clean_early = D.fromisoformat(declared_for(rng, D(2021, 12, 1), cutoff, "false_early"))
    assert clean_early < D(2021, 12, 1)


# ---------------------------------------------------------------------------
# the real facts


def _news() -> pd.DataFrame:
    rows = [
        ("2019-10-02", "Alfa Energy agrees to buy a rival pipeline operator for $2 billion", "reuters", None),
        ("2019-11-12", "Bravo Oil names a new chief financial officer after a long search", "cnbc", None),
        ("2019-11-25", "Harbour city regulators fine a ferry company over late sailings", "guardian", None),
        ("2019-12-09", "Alfa Energy shares jump after the pipeline deal wins approval", "reuters", None),
        ("2020-01-21", "Charlie Drilling cuts its rig count as the winter slowdown deepens", "wsj", None),
        ("2020-02-14", "Analyst at Kestrel Bank upgrades Bravo Oil to outperform on cash flow", "analyst_ratings", "BRVO"),
        ("2020-03-03", "Ferry operators on the harbour line agree to a new timetable", "guardian", None),
        # dropped: own dates, a question, a label, a headline repeated on two days, no day
        ("2019-12-20", "Alfa Energy sets a 2021 target for output growth in the basin", "reuters", None),
        ("2020-01-06", "Bravo Oil to report results in February after the holiday break", "reuters", None),
        ("2020-01-07", "Is the Alfa Energy pipeline deal good for the harbour city?", "cnbc", None),
        ("2020-01-08", "Markets wrap", "cnbc", None),
        ("2019-11-05", "Oil prices slip as traders await the inventory report", "reuters", None),
        ("2020-02-05", "Oil prices slip as traders await the inventory report", "reuters", None),
        ("not a day", "Delta Pipelines opens a new terminal in the northern port", "reuters", None),
    ]
    return pd.DataFrame(rows, columns=["published_at", "title", "source", "ticker"]).assign(text="")


def test_news_headlines_keep_single_dated_statements():
    h = news_headlines(_news())
    assert len(h) == 7 and h["day"].is_monotonic_increasing
    assert not h["title"].str.contains("2021|February|\\?|Markets wrap|Oil prices slip|terminal").any()
    assert h.loc[h["source"] == "analyst_ratings", "ticker"].tolist() == ["BRVO"]


def _filings() -> pd.DataFrame:
    rows = [
        # a quarter first reported in a 10-Q under one concept, repeated a year later under another
        ("Fruit Inc.", "Revenues", "Revenues", "USD", 51.2e9, "2019-06-30", "2019-09-28", "10-Q", "2019-10-30"),
        ("Fruit Inc.", "RevenueFromContractWithCustomerExcludingAssessedTax",
         "Revenue from Contract with Customer, Excluding Assessed Tax", "USD", 51.2e9, "2019-06-30", "2019-09-28",
         "10-K", "2020-10-30"),
        ("Fruit Inc.", "NetIncomeLoss", "Net Income (Loss) Attributable to Parent", "USD", 9.1e9, "2019-09-29",
         "2019-12-28", "10-Q", "2020-01-29"),
        ("Fruit Inc.", "Assets", "Assets", "USD", 340.6e9, None, "2019-12-28", "10-Q", "2020-01-29"),
        ("Fruit Inc.", "EarningsPerShareDiluted", "Earnings Per Share, Diluted", "USD/shares", 2.03, "2019-09-29",
         "2019-12-28", "10-Q", "2020-01-29"),
        # a restated quarter: the new value dates to the amendment, the period to the first filing
        ("Fruit Inc.", "NetIncomeLoss", "Net Income (Loss) Attributable to Parent", "USD", 8.8e9, "2019-06-30",
         "2019-09-28", "10-Q", "2019-10-30"),
        ("Fruit Inc.", "NetIncomeLoss", "Net Income (Loss) Attributable to Parent", "USD", 8.6e9, "2019-06-30",
         "2019-09-28", "10-K/A", "2020-02-20"),
        # left out: a concept the grounded check does not read, a nine-month period, cover data
        ("Fruit Inc.", "InventoryNet", "Inventory, Net", "USD", 4.1e9, None, "2019-12-28", "10-Q", "2020-01-29"),
        ("Fruit Inc.", "Revenues", "Revenues", "USD", 150.0e9, "2019-01-01", "2019-09-28", "10-Q", "2019-10-30"),
        ("Fruit Inc.", "Assets", "Assets", "USD", 330.0e9, None, "2019-10-30", "10-Q", "2019-10-30"),
    ]
    return pd.DataFrame(rows, columns=["entity_name", "concept", "label", "unit", "val", "start", "end", "form", "filed"])


def test_edgar_as_filed_dates_each_value_to_its_first_filing_under_any_concept_of_its_family():
    ef = edgar_as_filed(_filings())
    assert set(ef["period"]) == {"Q", "instant"} and "InventoryNet" not in set(ef["concept"])
    rev = ef[ef["family"] == "revenue"]
    assert len(rev) == 1 and rev.iloc[0]["form"] == "10-Q" and rev.iloc[0]["filed"] == D(2019, 10, 30)
    ni = ef[(ef["family"] == "net income") & (ef["end"] == D(2019, 9, 28))].set_index("val")
    assert ni.loc[8.6e9, "filed"] == D(2020, 2, 20) and ni.loc[8.6e9, "period_first_public"] == D(2019, 10, 30)
    assets = ef[ef["concept"] == "Assets"].iloc[0]
    assert assets["start"] is None and assets["measure"] == "assets" and assets["end"] == D(2019, 12, 28)
    assert ef.loc[ef["concept"] == "NetIncomeLoss", "measure"].iloc[0] == "net income attributable to parent"
    assert ef.iloc[0]["company"] == "Fruit"


# ---------------------------------------------------------------------------
# planting


CUTOFF = D(2019, 11, 30)


def _instances() -> pd.DataFrame:
    comps = [{"ticker": "ALFA", "name": "Alfa Energy Corp."}, {"ticker": "BRVO", "name": "Bravo Oil Inc."},
             {"ticker": "CHRL", "name": "Charlie Drilling Co."}]
    days = pd.bdate_range("2019-11-01", "2020-06-30")
    rets = {c["ticker"]: 0.01 * k for k, c in enumerate(comps)}
    label = {"ranking": list(rets), "returns": rets, "first_day": "2019-12-02", "last_day": "2020-06-01"}
    inst = pd.DataFrame([dict(instance_id=f"stock-eval-{i}", task="stock", split="eval", cutoff_date=CUTOFF.isoformat(),
                              inputs=json.dumps({"sector": "Energy", "companies": comps}), label=json.dumps(label),
                              provenance="{}") for i in range(2)])
    prices = pd.DataFrame([(c["ticker"], d, 40.0 + k + 0.01 * j) for k, c in enumerate(comps) for j, d in enumerate(days)],
                          columns=["ticker", "date", "close"])
    return inst, prices


@pytest.fixture(scope="module")
def planted():
    inst, prices = _instances()
    data = {"prices": prices, "news": _news(), "edgar": _filings()}
    return plant_claims(get_task("stock"), inst, data, n_per_kind=40, seed=5), inst, data


def _real(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["style"].str.startswith(("news:", "edgar_filed:"))]


def test_real_facts_are_planted_after_the_template_claims_with_their_truth(planted):
    df, inst, data = planted
    assert list(df.columns) == PLANTED_COLUMNS
    real = _real(df)
    assert set(real["kind"]) == {"post_cutoff", "pre_cutoff"}
    assert (real.groupby("kind").size() == 40).all()
    assert set(real["style"].str.split(":").str[0]) == {"news", "edgar_filed"}
    first_real = df.index[df["style"].str.startswith(("news:", "edgar_filed:"))].min()
    assert not _real(df.loc[: first_real - 1]).shape[0] and len(df) == first_real + len(real)
    # the template block does not depend on the real one
    only_template = plant_claims(get_task("stock"), inst, data, n_per_kind=40, seed=5, n_real_per_kind=0)
    pd.testing.assert_frame_equal(df.iloc[:first_real].reset_index(drop=True), only_template)
    pd.testing.assert_frame_equal(df, plant_claims(get_task("stock"), inst, data, n_per_kind=40, seed=5))
    truth = pd.to_datetime(real["truth_date"]).dt.date
    assert (truth[real["kind"] == "post_cutoff"] > CUTOFF).all() and (truth[real["kind"] == "pre_cutoff"] <= CUTOFF).all()
    news = real[real["style"].str.startswith("news:")]
    titles = set(news_headlines(_news())["title"])
    assert all(any(t in f or t[0].lower() + t[1:] in f for t in titles) for f in news["fact"])


def test_each_written_date_is_the_public_day_on_its_side_of_the_cutoff(planted):
    df, _, _ = planted
    real = _real(df)
    formats = real["style"].str.split(":").str[2]
    assert {"iso", "abbrev", "none"} <= set(formats) and set(formats) <= set(REWORD_FORMATS)
    for r, fmt in zip(real.itertuples(), formats):
        truth = D.fromisoformat(r.truth_date)
        if fmt != "none":
            assert write_date(truth, fmt) in r.fact
            assert carries_truth(truth, fmt, CUTOFF, leak=r.truth_leaked)
        mode = r.style.split("declared=")[1]
        if mode == "honest":
            assert r.declared_date_raw == r.truth_date
        elif mode == "false_early":
            assert D.fromisoformat(r.declared_date_raw) < min(truth, CUTOFF)
        else:
            assert pd.isna(r.declared_date_raw)


def test_a_news_leak_without_a_readable_date_keeps_an_honest_declared_date_unless_the_corpus_dates_it(planted):
    df, inst, data = planted
    blind = _real(df)
    blind = blind[blind["style"].str.match(r"news:[^:]+:none:") & blind["truth_leaked"]]
    assert len(blind) and (blind["style"].str.endswith("declared=honest")).all()
    with_corpus = _real(plant_claims(get_task("stock"), inst, data, n_per_kind=60, seed=5, corpus_dated=True))
    modes = with_corpus[with_corpus["style"].str.match(r"news:[^:]+:none:") & with_corpus["truth_leaked"]]["style"]
    assert modes.str.contains("declared=missing|declared=false_early").any()
    # EDGAR figures are in the grounded layer's table: they go without a readable date either way
    edgar = _real(df)[_real(df)["style"].str.match(r"edgar_filed:[^:]+:none:") & _real(df)["truth_leaked"]]
    assert not edgar.empty and not edgar["style"].str.endswith("declared=honest").all()


def test_real_facts_need_their_tables():
    inst, prices = _instances()
    df = plant_claims(get_task("stock"), inst, {"prices": prices}, n_per_kind=10, seed=1)
    assert not len(_real(df))


# ---------------------------------------------------------------------------
# rates and the report


def test_facets_per_family_and_counts_of_ambiguous_and_declared_only_verdicts(planted):
    df, _, _ = planted
    real = _real(df).reset_index(drop=True)

    def scripted(claims: pd.DataFrame, layers: tuple[str, ...]) -> pd.DataFrame:
        fmt = claims["style"].str.split(":").str[2]
        leaked = claims["truth_leaked"] & (fmt != "us_short")
        verdict = np.where(leaked, "leaked", np.where(fmt == "us_short", "ambiguous", "clean"))
        return pd.DataFrame({"leaked": leaked, "verdict": verdict, "layer": "rules",
                             "declared_only": fmt == "none"}, index=claims.index)

    verified = verify_planted(real, scripted, [("grounded", "rules")])
    table = summarize_calibration(verified).set_index(["kind", "style"])
    post = real[real["kind"] == "post_cutoff"]
    n_us = int(post["style"].str.contains(":us_short:").sum())
    assert n_us
    us_rows = table[table.index.isin([("post_cutoff", f"family_date={f}:us_short") for f in ("news", "edgar_filed")])]
    assert us_rows["n"].sum() == n_us and (us_rows["rate"] == 0.0).all() and us_rows["n_ambiguous"].sum() == n_us
    assert table.loc[("post_cutoff", "all"), "n_ambiguous"] == n_us
    assert table.loc[("post_cutoff", "all"), "rate"] == pytest.approx(1 - n_us / len(post))
    n_none = int(real["style"].str.contains(":none:").sum())
    assert table.loc[[("post_cutoff", "all"), ("pre_cutoff", "all")], "n_declared_only"].sum() == n_none
    assert {"family_declared=news:honest", "family_declared=edgar_filed:false_early"} <= set(table.index.get_level_values(1))
    assert verified["declared_only"].dtype == bool


def test_report_lists_the_real_claims_per_format_and_declared_mode(planted):
    df, _, _ = planted

    def perfect(claims: pd.DataFrame, layers: tuple[str, ...]) -> pd.DataFrame:
        return pd.DataFrame({"leaked": claims["truth_leaked"], "layer": "rules"}, index=claims.index)

    md = calibration_markdown(calibrate(df, perfect, [("grounded", "rules")]))
    section = md.split("## Re-worded real claims")[1].split("## Control split")[0]
    assert "| stock | grounded+rules | news | date `iso` | 100.0% [" in section
    assert "| stock | grounded+rules | edgar_filed | declared `false_early` |" in section
    lines = [x for x in section.splitlines() if x.startswith("| stock | grounded+rules | news | date")]
    formats = [x.split("`")[1] for x in lines]
    assert formats == sorted(formats, key=REWORD_FORMATS.index)  # in format order
    empty = calibration_markdown(calibrate(df[~df["style"].str.startswith(("news:", "edgar_filed:"))], perfect,
                                           [("rules",)]))
    assert "No re-worded real claims" in empty
