"""Shared fixtures: a tiny, synthetic snapshot directory laid out like the real sources."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]


def edgar_row(cik, name, concept, val, start, end, fy, fp, form, filed, accn, unit="USD") -> dict:
    """One row of an EDGAR point-in-time facts table (``anachron.sources.edgar``'s columns before
    ``add_revisions``), for grounded-check fixtures."""
    return {
        "cik": cik, "entity_name": name, "taxonomy": "us-gaap", "concept": concept, "label": concept,
        "unit": unit, "val": float(val), "start": start, "end": end, "fy": fy, "fp": fp, "form": form,
        "filed": filed, "accn": accn, "frame": None,
    }

#: ticker -> (name, sector, start_date, end_date or "")
E2E_MEMBERS = {
    "ALFA": ("Alfa Energy Co", "Energy", "2005-01-03", ""),
    "BRVO": ("Bravo Oil Corp", "Energy", "2010-06-01", ""),
    "CHRL": ("Charlie Drilling Inc", "Energy", "2001-02-01", ""),
    "DLTA": ("Delta Pipelines", "Energy", "2012-03-15", "2020-03-20"),  # removed after the cutoff: still in
    "ECHO": ("Echo Refining", "Energy", "2015-01-02", ""),
    "FXTR": ("Foxtrot Gas", "Energy", "2019-12-20", ""),  # added after the cutoff: out
    "GOLF": ("Golf Petroleum", "Energy", "2003-01-02", "2019-10-01"),  # removed before the cutoff: out
    "HTLX": ("Hotel Exploration", "Energy", "2011-05-02", ""),
    "INDA": ("India Airlines", "Industrials", "2004-01-02", ""),
    "JLTT": ("Juliett Rail", "Industrials", "2006-01-03", ""),
    "KILO": ("Kilo Machines", "Industrials", "2007-01-03", ""),
    "LIMA": ("Lima Aerospace", "Industrials", "2008-01-02", ""),
    "MIKE": ("Mike Freight", "Industrials", "2009-01-02", ""),
}


def write_fixture_snapshot(root: Path, seed: int = 7) -> Path:
    """Write a synthetic snapshot (yahoo prices, sp500 spells/changes/sectors) under ``root``."""
    rng = np.random.default_rng(seed)
    days = pd.bdate_range("2019-06-03", "2020-07-31")
    rows = []
    for ticker in E2E_MEMBERS:
        steps = rng.normal(0.0, 0.02, size=len(days))
        close = 40.0 * np.exp(np.cumsum(steps))
        for d, c in zip(days, close):
            rows.append((ticker, d.strftime("%Y-%m-%d"), c, c * 1.01, c * 0.99, c, c * 0.97, 1_000_000))
    prices = pd.DataFrame(rows, columns=["ticker", "date", "open", "high", "low", "close", "adj_close", "volume"])
    (root / "yahoo").mkdir(parents=True, exist_ok=True)
    with gzip.open(root / "yahoo" / "prices_daily_2019-06-03_2020-07-31.csv.gz", "wt") as fh:
        prices.to_csv(fh, index=False, float_format="%.6f")
    (root / "yahoo" / "missing_tickers.txt").write_text("")
    sp = root / "sp500"
    sp.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        [(t, s, e) for t, (_, _, s, e) in E2E_MEMBERS.items()], columns=["ticker", "start_date", "end_date"]
    ).to_csv(sp / "sp500_ticker_start_end.csv", index=False)
    pd.DataFrame([("2019-12-20", "FXTR", "XXXX"), ("2020-03-20", "YYYY", "DLTA")], columns=["date", "add", "remove"]).to_csv(
        sp / "sp500_changes_since_2019.csv", index=False
    )
    pd.DataFrame(
        [(t, n, s) for t, (n, s, _, e) in E2E_MEMBERS.items() if t != "GOLF"], columns=["Symbol", "Name", "Sector"]
    ).to_csv(sp / "constituents_2020-01-10.csv", index=False)
    return root


@pytest.fixture(scope="session")
def fixture_snapshot(tmp_path_factory) -> Path:
    return write_fixture_snapshot(tmp_path_factory.mktemp("snapshots"))
