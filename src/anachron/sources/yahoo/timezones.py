"""Exchange-local times of price timestamps (the trading day is their calendar date)."""

from __future__ import annotations

import pandas as pd

from anachron.sources.base import exchange_timezone


def exchange_local_times(values: pd.Series, tickers: pd.Series) -> pd.Series:
    """Exchange-local wall-clock times (naive ``datetime64[ns]``) of ``values``.

    ``values``: timestamps (tz-aware or naive datetimes, or ISO strings, some perhaps with a
    UTC offset) aligned with ``tickers``. A tz-aware value is converted to the time zone of
    its ticker's exchange (:func:`~anachron.sources.base.exchange_timezone`); a naive one is
    taken as exchange-local already. Raises ``ValueError`` for an unparseable value.
    """
    tickers = pd.Series(list(tickers), index=values.index, dtype="str")
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        aware = pd.Series(True, index=values.index)
        utc = values.dt.tz_convert("UTC")
        out = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    elif pd.api.types.is_datetime64_dtype(values.dtype):
        return values.astype("datetime64[ns]")
    else:
        text = values.astype("str").str.strip()
        aware = text.str.contains(r"(?:[+-]\d\d:?\d\d|Z)$", regex=True)
        out = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
        if (~aware).any():
            out[~aware] = pd.to_datetime(text[~aware], format="ISO8601").astype("datetime64[ns]")
        utc = pd.to_datetime(text[aware], format="ISO8601", utc=True) if aware.any() else None
    if aware.any():
        zones = tickers[aware].map(exchange_timezone)
        for tz, idx in zones.groupby(zones).groups.items():
            out[idx] = utc[idx].dt.tz_convert(tz).dt.tz_localize(None).astype("datetime64[ns]")
    return out
