"""A ticker's GICS sector as of a date, from the dated constituents tables, with the rule that chose it."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from anachron.sources.base import check_columns, normalize_ticker
from anachron.sources.index_membership import to_day

SECTOR_RULE_AT_OR_BEFORE = "latest_at_or_before"
SECTOR_RULE_NEAREST_BEFORE = "nearest_before"
SECTOR_RULE_NEAREST_AFTER = "nearest_after"
SECTOR_RULE_MISSING = "missing"


def sector_as_of(sectors: pd.DataFrame, tickers: Iterable[str], date: Any) -> pd.DataFrame:
    """GICS sector of each ticker as of ``date``, with the rule that chose the snapshot.

    ``sectors``: frame ``as_of, ticker, name, sector`` (from
    :class:`~anachron.sources.sp500.gics_reader.GICSSectorReader`).
    Rules, per ticker, in order:

    1. ``latest_at_or_before``: the latest snapshot with ``as_of <= date`` lists the ticker;
    2. otherwise the snapshot nearest in time to ``date`` that lists it (ties go to the
       earlier one): ``nearest_before`` (an older snapshot) or ``nearest_after`` (a later
       one, used when no snapshot at or before ``date`` lists the ticker — a look-ahead in
       metadata only, recorded so it can be audited);
    3. ``missing``: no snapshot lists it; ``name``, ``sector`` and ``sector_as_of`` are NaN
       / NaT and the caller should exclude the ticker.

    Returns one row per input ticker (input order, duplicates dropped): ``ticker, name,
    sector, sector_as_of`` (datetime64[ns], the snapshot date used), ``sector_rule`` (str).
    """
    check_columns(sectors, ["as_of", "ticker", "sector"], "GICS sector table")
    d = to_day(date)
    tab = sectors.copy()
    if "name" not in tab.columns:
        tab["name"] = np.nan
    tab["as_of"] = pd.to_datetime(tab["as_of"]).astype("datetime64[ns]")
    tab = tab[tab["sector"].notna() & (tab["sector"].astype("str").str.strip() != "")]
    by_date: dict[pd.Timestamp, pd.DataFrame] = {
        k: g.drop_duplicates("ticker").set_index("ticker") for k, g in tab.groupby("as_of", sort=True)
    }
    dates = sorted(by_date)
    before = [x for x in dates if x <= d]
    latest = before[-1] if before else None
    # Snapshots ordered by distance from d, earlier first on ties.
    by_distance = sorted(dates, key=lambda x: (abs((x - d).days), x > d, x))

    rows = []
    seen: set[str] = set()
    for raw in tickers:
        t = normalize_ticker(raw)
        if t in seen:
            continue
        seen.add(t)
        chosen, rule = None, SECTOR_RULE_MISSING
        if latest is not None and t in by_date[latest].index:
            chosen, rule = latest, SECTOR_RULE_AT_OR_BEFORE
        else:
            for x in by_distance:
                if t in by_date[x].index:
                    chosen = x
                    rule = SECTOR_RULE_NEAREST_BEFORE if x <= d else SECTOR_RULE_NEAREST_AFTER
                    break
        if chosen is None:
            rows.append((t, np.nan, np.nan, pd.NaT, rule))
        else:
            rec = by_date[chosen].loc[t]
            rows.append((t, rec["name"], rec["sector"], chosen, rule))
    out = pd.DataFrame(rows, columns=["ticker", "name", "sector", "sector_as_of", "sector_rule"])
    out["sector_as_of"] = pd.to_datetime(out["sector_as_of"]).astype("datetime64[ns]")
    return out
