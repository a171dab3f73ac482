"""Claim verification throughput, and how it compares with generating the claims.

Builds a synthetic daily price table (500 tickers x 2 years), then verifies a mix of
claim styles models write (prices on days, quarterly and annual results, month and
year mentions, undated text). Reports claims/second and the ratio of verifying one
completion's claims (10) to the measured local-model generation time per completion
(~6 s on 2 cores, see the README), so verification stays negligible next to inference.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time

import numpy as np
import pandas as pd

from anachron.verify.layers.grounded import PriceGrounding
from anachron.verify.pipeline import verify_claim

TEMPLATES = [
    "{t} closed at ${p:.2f} on {d}.",
    "{t} reported Q{q} 2019 revenue of $1.{q}B, up 4% year over year.",
    "{t}'s full-year 2019 earnings per share rose to $3.10.",
    "Shares of {t} fell 12% in March 2020.",
    "{t} expects Q1 2020 revenue of $2B.",
    "{t} has a strong balance sheet and low leverage.",
    "{t} announced a $500M buyback on November 14, 2019.",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--claims", type=int, default=20000)
    ap.add_argument("--tickers", type=int, default=500)
    ap.add_argument("--seconds-per-completion", type=float, default=6.0,
                    help="local-model generation time per completion to compare against")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    days = pd.bdate_range("2018-12-01", "2020-12-31")
    tickers = [f"T{i:03d}" for i in range(args.tickers)]
    prices = pd.DataFrame({
        "ticker": np.repeat(tickers, len(days)),
        "date": np.tile(days, len(tickers)),
        "close": rng.uniform(10, 300, len(days) * len(tickers)),
    })
    prices["adj_close"] = prices["close"]
    t0 = time.perf_counter()
    grounding = PriceGrounding(prices)
    build_s = time.perf_counter() - t0
    cutoff = dt.date(2019, 11, 30)
    ctx = {"tickers": tickers[:5], "names": [f"Company {t}" for t in tickers[:5]], "cutoff_date": cutoff.isoformat(),
           "label": {"returns": {t: 0.1 for t in tickers[:5]}, "first_day": "2019-12-02", "last_day": "2020-05-29"}}
    claims = []
    for i in range(args.claims):
        tpl = TEMPLATES[i % len(TEMPLATES)]
        d = days[rng.integers(0, len(days))].date()
        claims.append(tpl.format(t=tickers[i % 5], p=rng.uniform(10, 300), q=1 + i % 4, d=d.isoformat()))
    t0 = time.perf_counter()
    leaked = sum(verify_claim(c, "2019-11-01", cutoff, instance=ctx, grounding=grounding)["leaked"] for c in claims)
    verify_s = time.perf_counter() - t0
    rate = args.claims / verify_s
    per_completion = 10 / rate
    print(f"price table: {len(prices):,} rows, grounding index built in {build_s:.2f} s")
    print(f"verified {args.claims:,} claims in {verify_s:.2f} s: {rate:,.0f} claims/s ({leaked:,} leaked)")
    print(f"ratio verify(10 claims) / generate(1 completion): {per_completion / args.seconds_per_completion:.2e}")


if __name__ == "__main__":
    main()
