"""Point-in-time index membership from membership spells (survivorship-free universes).

Shared by the S&P 500 reader (:mod:`anachron.sources.sp500`), the price reader
(:mod:`anachron.sources.yahoo`, each window's universe) and the stock task, so no reader imports
another.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from anachron.sources.base import check_columns

__all__ = ["members_as_of", "to_day"]


def to_day(value: Any) -> pd.Timestamp:
    """``value`` as a timezone-naive midnight :class:`pandas.Timestamp` (its day)."""
    ts = pd.Timestamp(value)
    if ts.tzinfo is not None:
        ts = ts.tz_convert(None)
    return ts.normalize()


def members_as_of(spells: pd.DataFrame, date: Any) -> list[str]:
    """Tickers in the S&P 500 on ``date`` (point in time, survivorship-free).

    ``spells``: frame with ``ticker, start_date, end_date`` (as from
    :class:`SP500MembershipReader`). A ticker is a member iff one of its spells has
    ``start_date <= date`` and (``end_date`` is NaT or ``end_date > date``): a ticker added
    on D is a member on D, a ticker removed on D is not. Returns sorted unique tickers.
    Raises :class:`SourceError` when columns are missing.
    """
    check_columns(spells, ["ticker", "start_date", "end_date"], "membership spells")
    d = to_day(date)
    start = pd.to_datetime(spells["start_date"])
    end = pd.to_datetime(spells["end_date"])
    mask = (start <= d) & (end.isna() | (end > d))
    return sorted(set(spells.loc[mask, "ticker"].astype("str")))
