"""yfinance's wide frames (column levels ``Price`` and ``Ticker``) as the long price frame."""

from __future__ import annotations

import pandas as pd

from anachron.sources.base import normalize_ticker
from anachron.sources.yahoo.prices import (
    FLOAT_COLUMNS,
    adj_close_refusal,
    check_adjusted,
    empty_prices,
    finish_prices,
)
from anachron.sources.yahoo.timezones import exchange_local_times

#: yfinance's price names -> the long frame's columns.
YF_RENAME = {
    "Open": "open",
    "High": "high",
    "Low": "low",
    "Close": "close",
    "Adj Close": "adj_close",
    "Volume": "volume",
}


def _long_from_wide(data: pd.DataFrame, symbol_to_ticker: dict[str, str] | None, where: str) -> pd.DataFrame:
    """Long rows (``date`` = exchange-local times) of a yfinance frame with column levels
    ``(Price, Ticker)`` or ``(Ticker, Price)``; see :func:`flatten_download`."""
    names = list(data.columns.names)
    ticker_level = names.index("Ticker") if "Ticker" in names else 1
    prices = set(data.columns.get_level_values(1 - ticker_level))
    if "Adj Close" not in prices:
        raise adj_close_refusal(where)
    long = data.stack(level=ticker_level, future_stack=True)
    long.index = long.index.set_names(["date", "ticker"])
    long = long.rename(columns=YF_RENAME).reset_index()
    for c in FLOAT_COLUMNS:
        if c not in long.columns:
            long[c] = float("nan")
    mapping = symbol_to_ticker or {}
    long["ticker"] = [mapping.get(str(s).upper(), normalize_ticker(s)) for s in long["ticker"]]
    long["date"] = exchange_local_times(long["date"], long["ticker"])
    return long


def flatten_download(
    data: pd.DataFrame, symbol_to_ticker: dict[str, str] | None = None, *, where: str = "the yfinance download"
) -> pd.DataFrame:
    """Turn ``yfinance.download(..., multi_level_index=True)`` output into the long frame.

    ``data`` has a DatetimeIndex (naive exchange-local, or tz-aware in any zone) and column
    MultiIndex levels ``(Price, Ticker)`` (``group_by='column'``, the default) or
    ``(Ticker, Price)``. ``symbol_to_ticker`` maps Yahoo symbols back to the caller's
    spelling. Rows where every price is NaN (dates a ticker did not trade, introduced by
    yfinance's index union) are dropped; of two rows on one trading day the later is kept.

    Raises :class:`SourceError` (naming ``where`` and ``auto_adjust=False``) when the data
    has no ``Adj Close``, or a ticker has closes but no adjusted close.
    """
    return flatten(data, symbol_to_ticker, where)[0]


def flatten(data: pd.DataFrame, symbol_to_ticker: dict[str, str] | None, where: str) -> tuple[pd.DataFrame, int]:
    """:func:`flatten_download`, and the number of rows dropped as duplicate days."""
    if data is None or data.empty or not isinstance(data.columns, pd.MultiIndex):
        return empty_prices(), 0
    df, n_dup = finish_prices(_long_from_wide(data, symbol_to_ticker, where))
    check_adjusted(df, where)
    return df, n_dup
