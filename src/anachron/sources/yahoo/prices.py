"""The long price frame of the ``yahoo`` source: its columns, the empty frame, trading days and
duplicate days, and the refusal of data without an adjusted close."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from anachron.sources.base import SourceError

#: Column order of the long price frame.
PRICE_COLUMNS = ["ticker", "date", "open", "high", "low", "close", "adj_close", "volume"]
#: The numeric (float64) columns of the long price frame.
FLOAT_COLUMNS = ["open", "high", "low", "close", "adj_close", "volume"]
#: ``skipped_by_reason`` code of rows dropped because a later row has the same trading day.
REASON_DUPLICATE_DAY = "duplicate_day"


def empty_prices() -> pd.DataFrame:
    """An empty frame with the long price columns and dtypes."""
    df = pd.DataFrame({c: pd.Series(dtype="float64") for c in PRICE_COLUMNS})
    df["ticker"] = pd.Series(dtype="str")
    df["date"] = pd.Series(dtype="datetime64[ns]")
    return df[PRICE_COLUMNS]


def adj_close_refusal(where: str, tickers: Iterable[str] = ()) -> SourceError:
    """The error for price data without an adjusted close (``where``: the data's origin).

    ``tickers``: the tickers whose adjusted close is empty, when the column exists.
    """
    what = (
        f"has no adjusted close for {', '.join(sorted(tickers)[:10])}"
        if tickers
        else "has no 'Adj Close' / adj_close column"
    )
    return SourceError(
        f"{where} {what}. Such data was downloaded with auto_adjust=True (yfinance's default), "
        "whose Close is already adjusted and cannot be told apart from the raw close. Download it "
        "again with yfinance.download(..., auto_adjust=False) so that both Close and Adj Close are kept."
    )


def finish_prices(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Coerce dtypes, take the trading day, drop rows without any price, keep the later of
    two rows of one day; sort, reset index.

    ``df["date"]`` holds exchange-local times
    (:func:`~anachron.sources.yahoo.timezones.exchange_local_times`). Returns the long frame
    (:data:`PRICE_COLUMNS`) and the number of rows dropped as duplicate days.
    """
    df = df[PRICE_COLUMNS].copy()
    df["ticker"] = df["ticker"].astype("str")
    local = pd.to_datetime(df["date"]).astype("datetime64[ns]")
    df["date"] = local.dt.normalize()
    df["_local"] = local
    df["_pos"] = np.arange(len(df))
    for c in FLOAT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    has_price = df[["open", "high", "low", "close", "adj_close"]].notna().any(axis=1)
    df = df[has_price].sort_values(["ticker", "date", "_local", "_pos"], kind="mergesort")
    dup = df.duplicated(["ticker", "date"], keep="last")
    return df.loc[~dup, PRICE_COLUMNS].reset_index(drop=True), int(dup.sum())


def check_adjusted(df: pd.DataFrame, where: str) -> None:
    """Refuse a long frame where a ticker has closes but never an adjusted close.

    Raises :class:`~anachron.sources.base.SourceError` (:func:`adj_close_refusal`) naming
    ``where`` and those tickers.
    """
    seen = df.groupby("ticker")[["close", "adj_close"]].count()
    bare = seen.index[(seen["close"] > 0) & (seen["adj_close"] == 0)].tolist()
    if bare:
        raise adj_close_refusal(where, bare)
