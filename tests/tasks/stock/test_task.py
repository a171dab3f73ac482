"""build_stock_instances and stock_perf on a small synthetic market (invented tickers/prices)."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from anachron.sources.sp500 import GICSSectorReader, SP500MembershipReader
from anachron.sources.yahoo import YahooPriceReader
from anachron.tasks.base import INSTANCE_COLUMNS
from anachron.tasks.stock import build_stock_instances, stock_perf

from conftest import TESTS

SNAPSHOTS = TESTS / "fixtures" / "snapshots"

START, END = "2021-01-01", "2021-03-31"
SECTOR_OF = {
    **{f"E{i}": "Energy" for i in range(1, 9)},  # 8 -> C(8,5) = 56 groups
    **{f"U{i}": "Utilities" for i in range(1, 7)},  # 6 -> 6 groups
    **{f"H{i}": "Health Care" for i in range(1, 8)},  # 7 -> 21 groups
    **{f"M{i}": "Materials" for i in range(1, 4)},  # 3: too few for a group
    "LEFT": "Energy",  # removed after the cutoff, no price on the last day
    "LATEPX": "Energy",  # no price on the first trading day
    "NOPX": "Utilities",  # member without any price
    "LATE": "Energy",  # added after the cutoff
    "GONE": "Energy",  # removed before the cutoff
}


def _spells() -> pd.DataFrame:
    rows = [(t, "2010-01-04", None) for t in SECTOR_OF if t not in {"LEFT", "LATE", "GONE"}]
    rows += [("LEFT", "2012-01-03", "2021-02-16"), ("LATE", "2021-01-15", None), ("GONE", "2009-01-02", "2020-12-01")]
    rows += [("NOSEC", "2015-01-02", None)]  # member, but in no sector list
    df = pd.DataFrame(rows, columns=["ticker", "start_date", "end_date"])
    df["start_date"] = pd.to_datetime(df["start_date"])
    df["end_date"] = pd.to_datetime(df["end_date"])
    return df


def _sectors() -> pd.DataFrame:
    early = [("2020-06-30", t, f"{t} Inc.", s) for t, s in SECTOR_OF.items() if t != "LATE"]
    # a later list reclassifies E1; it must not be used for a 2020-12-31 cutoff
    late = [("2021-06-30", t, f"{t} Inc.", "Utilities" if t == "E1" else s) for t, s in SECTOR_OF.items()]
    df = pd.DataFrame(early + late, columns=["as_of", "ticker", "name", "sector"])
    df["as_of"] = pd.to_datetime(df["as_of"])
    return df


def _prices() -> pd.DataFrame:
    days = [d for d in pd.bdate_range("2020-12-21", "2021-04-09") if d != pd.Timestamp("2021-01-01")]
    rows = []
    for j, t in enumerate(sorted(SECTOR_OF)):
        if t == "NOPX":
            continue
        growth = 0.0007 * ((j * 7) % 31 - 15)  # distinct daily log-growth per ticker
        for k, d in enumerate(days):
            if t == "LEFT" and d > pd.Timestamp("2021-02-12"):
                continue
            if t == "LATEPX" and d < pd.Timestamp("2021-01-05"):
                continue
            adj = 50.0 * np.exp(growth * k)
            rows.append((t, d, adj * 1.02, adj * 1.03, adj * 0.98, adj * 1.1, adj, 1000.0))
    cols = ["ticker", "date", "open", "high", "low", "close", "adj_close", "volume"]
    return pd.DataFrame(rows, columns=cols)


@pytest.fixture(scope="module")
def data():
    return _prices(), _spells(), _sectors()


def _window(**kw):
    w = {"name": "eval-2021q1", "split": "eval", "start": START, "end": END, "n": 10,
         "affected_sectors": ["Energy"], "affected_share": 0.8}
    w.update(kw)
    return w


def test_instances_shape_and_columns(data):
    inst, exc = build_stock_instances(*data, [_window()], seed=7)
    assert list(inst.columns) == INSTANCE_COLUMNS
    assert len(inst) == 10
    assert (inst["task"] == "stock").all() and (inst["split"] == "eval").all()
    assert (inst["cutoff_date"] == "2020-12-31").all()
    assert all(re.fullmatch(r"stock-eval-2021-01-01-\d{4}", i) for i in inst["instance_id"])
    assert inst["instance_id"].is_unique
    for row in inst.itertuples():
        inputs, label, prov = json.loads(row.inputs), json.loads(row.label), json.loads(row.provenance)
        assert inputs["start_date"] == START and inputs["end_date"] == END
        assert len(inputs["companies"]) == 5 and all(c["name"] == f"{c['ticker']} Inc." for c in inputs["companies"])
        assert {c["ticker"] for c in inputs["companies"]} == set(label["ranking"]) == set(label["returns"])
        assert all(SECTOR_OF[c["ticker"]] == inputs["sector"] for c in inputs["companies"])
        assert prov["window"] == "eval-2021q1" and prov["seed"] == 7
        assert set(prov["sector_rule"].values()) == {"latest_at_or_before"}
        assert set(prov["sector_as_of"].values()) == {"2020-06-30"}
    assert list(exc.columns)[:3] == ["window", "ticker", "reason"]


def test_deterministic_with_seed_and_independent_of_window_order(data):
    w1, w2 = _window(), _window(name="train-2021q2", split="train", start="2021-04-01", end="2021-04-09", n=3,
                                affected_sectors=[])
    a, ea = build_stock_instances(*data, [w1, w2], seed=42)
    b, eb = build_stock_instances(*data, [w1, w2], seed=42)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(ea, eb)
    c, _ = build_stock_instances(*data, [w2, w1], seed=42)
    pd.testing.assert_frame_equal(a.sort_values("instance_id").reset_index(drop=True),
                                  c.sort_values("instance_id").reset_index(drop=True))
    d, _ = build_stock_instances(*data, [w1, w2], seed=43)
    assert not a["inputs"].equals(d["inputs"])
    # shuffling the input rows changes nothing
    prices, spells, sectors = data
    e, _ = build_stock_instances(prices.sample(frac=1, random_state=1), spells.iloc[::-1], sectors.sample(frac=1, random_state=2),
                                 [w1, w2], seed=42)
    pd.testing.assert_frame_equal(a, e)


def test_groups_are_unique(data):
    inst, _ = build_stock_instances(*data, [_window(n=40, affected_share=0.5)], seed=3)
    groups = [tuple(sorted(json.loads(x)["ranking"])) for x in inst["label"]]
    assert len(groups) == 40 and len(set(groups)) == 40
    # companies are presented in a shuffled order, not always sorted
    shown = [[c["ticker"] for c in json.loads(x)["companies"]] for x in inst["inputs"]]
    assert any(s != sorted(s) for s in shown)


def test_label_ranking_follows_adjusted_close_total_return(data):
    prices = data[0]
    inst, _ = build_stock_instances(*data, [_window()], seed=11)
    first, last = pd.Timestamp("2021-01-04"), pd.Timestamp("2021-03-31")  # Jan 1 is a holiday
    adj = prices.set_index(["ticker", "date"])["adj_close"]
    for x in inst["label"]:
        label = json.loads(x)
        assert (label["first_day"], label["last_day"]) == ("2021-01-04", "2021-03-31")
        expected = {t: adj[(t, last)] / adj[(t, first)] - 1 for t in label["returns"]}
        for t, r in expected.items():
            assert label["returns"][t] == pytest.approx(r)
        assert label["ranking"] == sorted(expected, key=lambda t: -expected[t])
    # uses adj_close, not close: a frame where close disagrees gives the same label
    altered = prices.assign(close=prices["close"][::-1].to_numpy())
    again, _ = build_stock_instances(altered, *data[1:], [_window()], seed=11)
    assert again["label"].equals(inst["label"])


def test_universe_is_point_in_time_and_exclusions_have_reasons(data):
    inst, exc = build_stock_instances(*data, [_window(n=20)], seed=5)
    reasons = dict(zip(exc["ticker"], exc["reason"]))
    assert reasons == {
        "NOSEC": "no_sector",
        "NOPX": "no_prices_in_window",
        "LATEPX": "no_price_first_day",
        "LEFT": "no_price_last_day",  # a member at the cutoff (survivorship-free), but delisted mid-window
    }
    assert (exc["window"] == "eval-2021q1").all()
    used = {c["ticker"] for x in inst["inputs"] for c in json.loads(x)["companies"]}
    assert not used & {"LATE", "GONE", "NOSEC", "NOPX", "LATEPX", "LEFT"}
    assert not used & {"M1", "M2", "M3"}  # sector with fewer than 5 eligible tickers
    # sector as of the cutoff: E1 is Energy then, even though a later list says Utilities
    e1 = [json.loads(x)["sector"] for x in inst["inputs"] if '"E1"' in x]
    assert e1 and set(e1) == {"Energy"}
    assert json.loads(inst.loc[0, "provenance"])["universe_size"] == len(SECTOR_OF) - 2 + 1  # -LATE -GONE +NOSEC


def test_affected_share_respected(data):
    inst, _ = build_stock_instances(*data, [_window(n=20, affected_share=0.8)], seed=9)
    sectors = Counter(json.loads(x)["sector"] for x in inst["inputs"])
    pools = Counter(json.loads(x)["pool"] for x in inst["provenance"])
    assert sectors["Energy"] == 16 and pools == {"affected": 16, "other": 4}
    assert set(sectors) - {"Energy"} <= {"Utilities", "Health Care"}
    # no affected sectors: everything from the other sectors
    inst, _ = build_stock_instances(*data, [_window(n=6, affected_sectors=[])], seed=9)
    assert Counter(json.loads(x)["pool"] for x in inst["provenance"]) == {"other": 6}


def test_too_many_groups_requested_is_an_error(data):
    with pytest.raises(ValueError, match="unique groups"):
        build_stock_instances(*data, [_window(n=10, affected_sectors=["Utilities"], affected_share=1.0)], seed=1)


@pytest.mark.parametrize(
    "bad, match",
    [({"split": "test"}, "split"), ({"start": "2021-04-01"}, "after start"), ({"n": -1}, "n must"),
     ({"affected_share": 1.5}, "affected_share")],
)
def test_bad_window_is_a_value_error(data, bad, match):
    with pytest.raises(ValueError, match=match):
        build_stock_instances(*data, [_window(**bad)], seed=1)
    w = _window()
    del w["end"]
    with pytest.raises(ValueError, match="'end'"):
        build_stock_instances(*data, [w], seed=1)


def test_window_without_prices_is_an_error(data):
    with pytest.raises(ValueError, match="no price rows"):
        build_stock_instances(*data, [_window(start="2022-01-01", end="2022-03-31")], seed=1)


def test_runs_on_the_reader_outputs():
    """The readers' frames plug straight in (tiny fixture snapshot: too small to sample)."""
    prices = YahooPriceReader(["AAA", "BBB.B", "EEE", "GGG"], "2019-12-01", "2020-01-01", snapshot_dir=SNAPSHOTS).read()
    spells = SP500MembershipReader(snapshot_dir=SNAPSHOTS).read()
    sectors = GICSSectorReader(snapshot_dir=SNAPSHOTS).read()
    inst, exc = build_stock_instances(prices, spells, sectors, [_window(start="2019-12-01", end="2019-12-31", n=0)], seed=1)
    assert inst.empty and list(inst.columns) == INSTANCE_COLUMNS
    reasons = dict(zip(exc["ticker"], exc["reason"]))
    # GGG has no price on 2019-12-02 (first trading day); FFF has no prices; ZZZ no sector
    assert reasons == {"ZZZ": "no_sector", "FFF": "no_prices_in_window", "GGG": "no_price_first_day"}


# -- stock_perf -----------------------------------------------------------------------------


def test_stock_perf_bounds():
    truth = ["A", "B", "C", "D", "E"]
    assert stock_perf(truth, truth) == pytest.approx(1.0)
    assert stock_perf(truth[::-1], truth) == pytest.approx(0.0)
    # one adjacent swap: rho = 1 - 6*2/(5*24) = 0.9
    assert stock_perf(["B", "A", "C", "D", "E"], truth) == pytest.approx(0.95)


@pytest.mark.parametrize("pred", [["A", "B", "C", "D"], ["A", "B", "C", "D", "X"], ["A", "A", "C", "D", "E"], []])
def test_stock_perf_rejects_non_permutations(pred):
    with pytest.raises(ValueError, match="permutation"):
        stock_perf(pred, ["A", "B", "C", "D", "E"])


def test_price_jump_inside_window_excludes_the_ticker(data):
    """A reused ticker: E2's adjusted close jumps x5 mid-window with no split; its return would
    mix two companies, so E2 is excluded with the jump as the reason. A jump before the window
    (E3) does not matter."""
    prices = data[0].copy()
    after = (prices["ticker"] == "E2") & (prices["date"] >= pd.Timestamp("2021-02-10"))
    prices.loc[after, ["close", "adj_close"]] *= 5.0
    before = (prices["ticker"] == "E3") & (prices["date"] <= pd.Timestamp("2020-12-24"))
    prices.loc[before, ["close", "adj_close"]] /= 5.0
    inst, exc = build_stock_instances(prices, *data[1:], [_window(n=20)], seed=5)
    row = exc[exc["ticker"] == "E2"]
    assert row["reason"].tolist() == ["price_jump_in_window"]
    assert "2021-02-10" in row["detail"].iloc[0] and "another company" in row["detail"].iloc[0]
    assert "E3" not in set(exc["ticker"])
    used = {c["ticker"] for x in inst["inputs"] for c in json.loads(x)["companies"]}
    assert "E2" not in used and "E3" in used
