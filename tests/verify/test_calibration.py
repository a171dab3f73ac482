"""Calibration of the verifier on planted claims: planting truth, determinism,
rates on a scripted verifier, the markdown report. Synthetic fixtures only."""

from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import pandas as pd
import pytest

from anachron.report.calibration import calibration_markdown
from anachron.tables import PLANTED_COLUMNS
from anachron.tasks.salary.grounding import ContractGrounding
from anachron.tasks.salary.task import SalaryTask
from anachron.verify.calibration.evaluate import (
    ALL_LEAKS,
    calibrate,
    default_verify_fn,
    verify_planted,
    wilson_ci,
)
from anachron.verify.calibration.market import edgar_facts
from anachron.verify.calibration.plant import plant_claims
from anachron.verify.dates import find_periods
from anachron.verify.layers.grounded import PriceGrounding
from anachron.tasks.registry import get_task

TICKERS = {"ALFA": "Alfa Energy Corp.", "BRVO": "Bravo Oil Inc.", "CHRL": "Charlie Drilling Co.",
           "DLTA": "Delta Pipelines", "ECHO": "Echo Refining Ltd."}
CUTOFF = "2019-11-30"


def _prices() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    days = pd.bdate_range("2019-11-01", "2020-06-30")
    rows = []
    for t in TICKERS:
        close = 50.0 * np.exp(np.cumsum(rng.normal(0, 0.02, len(days))))
        rows += [(t, d, c, c * 0.98) for d, c in zip(days, close)]
    return pd.DataFrame(rows, columns=["ticker", "date", "close", "adj_close"])


def _stock_instances(prices: pd.DataFrame) -> pd.DataFrame:
    first, last = dt.date(2019, 12, 2), dt.date(2020, 6, 1)
    rets = {}
    for t in TICKERS:
        p = prices[prices.ticker == t].set_index(prices[prices.ticker == t]["date"].dt.date)["adj_close"]
        rets[t] = float(p[last] / p[first] - 1)
    rows = []
    for i in range(3):
        comps = [{"ticker": t, "name": n} for t, n in TICKERS.items()]
        rows.append(dict(instance_id=f"stock-eval-{i}", task="stock", split="eval", cutoff_date=CUTOFF,
                         inputs=json.dumps({"sector": "Energy", "start_date": "2019-12-01", "end_date": "2020-06-01",
                                            "companies": comps}),
                         label=json.dumps({"ranking": sorted(rets, key=rets.get, reverse=True), "returns": rets,
                                           "first_day": first.isoformat(), "last_day": last.isoformat()}),
                         provenance="{}"))
    rows.append(dict(rows[0], instance_id="stock-train-0", split="train"))
    return pd.DataFrame(rows)


def _edgar() -> pd.DataFrame:
    # a September fiscal year (filed ~5 weeks after year end) and its quarters
    rows = []
    for fy, (rev, filed) in {2018: (265.6e9, "2018-11-05"), 2019: (260.2e9, "2019-10-31"), 2020: (274.5e9, "2020-10-30")}.items():
        rows.append(("Fruit Inc.", "Revenues", "USD", rev, f"{fy - 1}-09-30", f"{fy}-09-28", "10-K", filed))
    rows.append(("Fruit Inc.", "Revenues", "USD", 91.8e9, "2019-09-29", "2019-12-28", "10-Q", "2020-01-29"))
    rows.append(("Fruit Inc.", "NetIncomeLoss", "USD", 22.2e9, "2019-09-29", "2019-12-28", "10-Q", "2020-01-29"))
    rows.append(("Fruit Inc.", "NetIncomeLoss", "USD", 13.7e9, "2019-06-30", "2019-09-28", "8-K", "2019-10-30"))
    df = pd.DataFrame(rows, columns=["entity_name", "concept", "unit", "val", "start", "end", "form", "filed"])
    return df


def _changes() -> pd.DataFrame:
    return pd.DataFrame({"date": pd.to_datetime(["2019-06-03", "2019-09-23", "2019-12-23", "2020-05-22"]),
                         "add": ["GAMA", "HOTL,INDI", "JULI", "KILO"], "remove": ["ZULU", "YANK,XRAY", "WHIS", ""]})


@pytest.fixture(scope="module")
def stock_setup():
    prices = _prices()
    data = {"prices": prices, "edgar": _edgar(), "sp500_changes": _changes()}
    return _stock_instances(prices), data


def test_planting_kinds_truth_and_prices(stock_setup):
    instances, data = stock_setup
    planted = plant_claims(get_task("stock"), instances, data, n_per_kind=60, seed=1, n_real_per_kind=0)
    assert list(planted.columns) == PLANTED_COLUMNS
    assert planted.groupby("kind").size().to_dict() == {"outcome": 60, "post_cutoff": 60, "pre_cutoff": 60}
    assert set(planted["instance_id"]) <= {"stock-eval-0", "stock-eval-1", "stock-eval-2"}  # never train
    assert planted["truth_leaked"].equals(planted["kind"].isin(["post_cutoff", "outcome"]))
    cutoff = dt.date.fromisoformat(CUTOFF)
    truth = pd.to_datetime(planted["truth_date"]).dt.date
    assert (truth[planted.kind == "post_cutoff"] > cutoff).all()
    assert (truth[planted.kind == "pre_cutoff"] <= cutoff).all()
    # a planted post-cutoff close is on a later trading day and states the table's close
    pg = PriceGrounding(data["prices"])
    closes = planted[(planted.kind == "post_cutoff") & planted["style"].str.startswith("price:close_")]
    assert len(closes) > 3
    for r in closes.itertuples():
        day = dt.date.fromisoformat(r.truth_date)
        assert day > cutoff and pg.is_trading_day(day)
        stated = float(re.search(r"\$(\d+\.\d\d)", r.fact)[1])
        ticker = next(t for t, n in TICKERS.items() if t in r.fact or n.split()[0] in r.fact)
        assert stated == pytest.approx(pg.close_on(ticker, day), abs=0.006)
        if ":on_day:" in r.style or ":iso:" in r.style or ":as_of:" in r.style:
            assert day in [p.start for p in find_periods(r.fact)]
    # the families and wording styles vary
    fams = set(planted["style"].str.split(":").str[0])
    assert {"price", "edgar", "index", "return", "end_price"} <= fams
    assert {"declared=honest", "declared=missing", "declared=false_early"} <= set(planted["style"].str.split(":").str[3])
    # a falsely early declared date is before the cutoff, on a leak
    fe = planted[planted["style"].str.contains("declared=false_early")]
    assert (pd.to_datetime(fe["declared_date_raw"]).dt.date <= cutoff).all()
    assert fe["truth_leaked"].all()


def test_outcome_claims_state_the_label(stock_setup):
    instances, data = stock_setup
    planted = plant_claims(get_task("stock"), instances, data, n_per_kind=40, seed=2)
    label = json.loads(instances.label.iloc[0])
    rets = planted[(planted.kind == "outcome") & planted["style"].str.startswith("return:")]
    assert len(rets)
    for fact in rets["fact"]:
        stated = float(re.search(r"([+-]?\d+(?:\.\d+)?)%", fact)[1])
        assert any(abs(abs(stated) - abs(100 * r)) <= 0.6 for r in label["returns"].values())


def test_edgar_facts_date_to_first_filing():
    ef = edgar_facts(_edgar())
    fy19 = ef[(ef.period == "FY") & (ef.fy == 2019)].iloc[0]
    assert fy19.first_public == dt.date(2019, 10, 31) and fy19.measure == "revenue"
    q1 = ef[(ef.period == "Q") & (ef.measure == "revenue")].iloc[0]
    assert (q1.fy, q1.fq) == (2020, 1)  # quarter ended 2019-12-28 of a September fiscal year
    q4 = ef[(ef.period == "Q") & (ef.measure == "net income") & (ef.end == dt.date(2019, 9, 28))].iloc[0]
    assert q4.first_public == dt.date(2019, 10, 30) and q4.fq == 4  # the 8-K came first


def test_planting_is_deterministic(stock_setup):
    instances, data = stock_setup
    a = plant_claims(get_task("stock"), instances, data, n_per_kind=30, seed=7)
    b = plant_claims(get_task("stock"), instances.sample(frac=1.0, random_state=0), data, n_per_kind=30, seed=7)
    c = plant_claims(get_task("stock"), instances, data, n_per_kind=30, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def _salary_instances() -> pd.DataFrame:
    rows = []
    players = [("Ann Alpha", "2021-08-06", 4e6, 8e6, 2, "Bucks"), ("Bo Beta", "2021-08-10", 10e6, 30e6, 3, "Nets"),
               ("Cy Gamma", "2020-11-25", 2e6, 2e6, 1, "Heat"), ("Di Delta", "2019-07-08", 6e6, 18e6, 3, "Suns")]
    for i, (p, d, aav, tot, yrs, team) in enumerate(players):
        cutoff = (dt.date.fromisoformat(d) - dt.timedelta(days=1)).isoformat()
        rows.append(dict(instance_id=f"salary-eval-{i}", task="salary", split="eval", cutoff_date=cutoff,
                         inputs=json.dumps({"sport": "basketball", "league": "NBA", "year": int(d[:4]), "player": p}),
                         label=json.dumps({"aav": aav, "total_value": tot, "years": yrs, "team": team,
                                           "previous_team": "Kings", "signing_date": d}), provenance="{}"))
    rows.append(dict(rows[0], instance_id="salary-train-0", split="train", cutoff_date="2017-07-01",
                     label=json.dumps({"aav": 3e6, "total_value": 6e6, "years": 2, "team": "Kings", "signing_date": "2017-07-02"})))
    return pd.DataFrame(rows)


def test_salary_legal_forecast_plant_and_verify():
    sal = _salary_instances()
    planted = plant_claims(get_task("salary"), sal, {}, n_per_kind=20, seed=3)
    assert set(planted.kind) == {"post_cutoff", "pre_cutoff", "outcome"}
    out = planted[planted.kind == "outcome"]
    assert out["fact"].str.contains(r"\$").all()
    ctx = {r["instance_id"]: SalaryTask().grounding_context(r) for r in sal.to_dict("records")}
    table = calibrate(planted, default_verify_fn({"salary": ContractGrounding()}, ctx), [("grounded", "rules")])
    row = table[(table.kind == "outcome") & (table["style"] == "all")].iloc[0]
    assert row["rate"] == 1.0  # the contract being predicted is always recognised


def test_calibrate_rates_on_scripted_verifier():
    planted = pd.DataFrame(
        [dict(task="t", instance_id=f"i{k}", cutoff_date="2020-01-01", fact=f"f{k}", declared_date_raw=None,
              kind=kind, style=f"fam:w{k % 2}:none:declared=missing", truth_leaked=kind != "pre_cutoff", truth_date=None)
         for k, kind in enumerate(["post_cutoff"] * 10 + ["outcome"] * 10 + ["pre_cutoff"] * 100)]
    )

    def scripted(df: pd.DataFrame, layers: tuple[str, ...]) -> pd.DataFrame:
        idx = np.arange(len(df))
        flagged = np.where(df["kind"] == "post_cutoff", idx % 10 != 0, True)  # 9/10 post, 10/10 outcome
        flagged = np.where(df["kind"] == "pre_cutoff", idx % 50 == 0, flagged)  # 2/100 FP
        if layers == ("rules",):
            flagged = np.where(df["kind"] == "outcome", False, flagged)
        verdict = np.where(flagged, "leaked", np.where(idx % 3 == 0, "undated", "clean"))
        return pd.DataFrame({"leaked": flagged, "verdict": verdict, "layer": "rules"}, index=df.index)

    table = calibrate(planted, scripted, [("grounded", "rules"), ("rules",)])
    g = table[(table.layers == "grounded+rules") & (table["style"] == "all")].set_index("kind")
    assert g.loc["post_cutoff", "rate"] == pytest.approx(0.9) and g.loc["post_cutoff", "metric"] == "recall"
    assert g.loc["outcome", "rate"] == 1.0
    assert g.loc[ALL_LEAKS, "n"] == 20 and g.loc[ALL_LEAKS, "rate"] == pytest.approx(0.95)
    assert g.loc["pre_cutoff", "metric"] == "fp_rate" and g.loc["pre_cutoff", "rate"] == pytest.approx(0.02)
    assert g.loc["pre_cutoff", "n_undated"] == sum(1 for i in range(20, 120) if i % 50 and i % 3 == 0)
    lo, hi = wilson_ci(9, 10)
    assert (g.loc["post_cutoff", "ci_low"], g.loc["post_cutoff", "ci_high"]) == pytest.approx((lo, hi))
    r = table[(table.layers == "rules") & (table["style"] == "all")].set_index("kind")
    assert r.loc["outcome", "rate"] == 0.0
    per_style = table[(table.layers == "grounded+rules") & (table["style"] == "fam:w0:none:declared=missing")]
    assert set(per_style.kind) == {"post_cutoff", "outcome", "pre_cutoff"}
    assert table[table["style"] == "family=fam"]["n"].sum() == 2 * 120
    with pytest.raises(ValueError):
        verify_planted(planted, lambda df, layers: pd.DataFrame({"leaked": [True]}), [("rules",)])


def test_wilson_ci():
    lo, hi = wilson_ci(0, 100)
    assert lo == 0.0 and 0.03 < hi < 0.04
    assert all(np.isnan(wilson_ci(0, 0)))


def test_markdown_pass_fail_and_control():
    rows = []
    for task, post, fp in (("stock", 0.99, 0.0), ("legal", 0.90, 0.02)):
        for kind, rate, metric in (("post_cutoff", post, "recall"), ("outcome", 1.0, "recall"),
                                   (ALL_LEAKS, (post + 1) / 2, "recall"), ("pre_cutoff", fp, "fp_rate")):
            rows.append(dict(task=task, layers="grounded+rules", kind=kind, style="all", metric=metric, n=100,
                             n_flagged=round(rate * 100), n_undated=1, rate=rate, ci_low=max(0, rate - 0.05),
                             ci_high=min(1, rate + 0.05)))
    rows.append(dict(task="legal", layers="grounded+rules", kind="pre_cutoff", style="lower_court:held:none:declared=missing",
                     metric="fp_rate", n=10, n_flagged=2, n_undated=0, rate=0.2, ci_low=0.05, ci_high=0.5))
    table = pd.DataFrame(rows)
    control = pd.DataFrame([dict(task="legal", method="temporal_hint", model="m", split="control", metric="olr",
                                 value=0.004, ci_low=0.0, ci_high=0.01, n=12)])
    md = calibration_markdown(table, control)
    assert "- stock, grounded+rules: **PASS**" in md
    assert "- legal, grounded+rules: **FAIL**" in md
    assert "recall 0.950 >= 0.95" in md and "FP 2.0% > 1.0%" in md
    assert "`lower_court:held:none:declared=missing`" in md
    assert "| legal | temporal_hint | m | 0.4% |" in md and "within" in md
    assert "No control-split OLR rows" in calibration_markdown(table, None)
