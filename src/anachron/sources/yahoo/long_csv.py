"""The long snapshot CSV ``ticker,date,open,high,low,close,adj_close,volume`` of the ``yahoo`` source."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from anachron.sources.base import SourceError, read_csv_checked
from anachron.sources.yahoo.prices import (
    FLOAT_COLUMNS,
    PRICE_COLUMNS,
    adj_close_refusal,
    check_adjusted,
    finish_prices,
)
from anachron.sources.yahoo.timezones import exchange_local_times


def read_long_csv(
    path: Path, header: str, wanted: dict[str, str], start: pd.Timestamp, end: pd.Timestamp
) -> tuple[pd.DataFrame, int, int]:
    """The rows of ``wanted`` tickers in ``[start, end)`` of the long CSV at ``path``.

    ``header``: the file's first line; ``wanted`` maps each accepted spelling of a ticker
    (S&P and Yahoo) to the one written in the output; ``start``, ``end``: naive midnight
    timestamps (``end`` exclusive). Rows are pre-filtered on the date text with one day of
    slack either side (the exact window is the caller's), dates are read as exchange-local
    times, and of two rows on one trading day the later is kept.

    Returns ``(frame, duplicate days dropped, rows in file)``; the frame has
    :data:`~anachron.sources.yahoo.prices.PRICE_COLUMNS`.

    Raises :class:`SourceError` naming the file when it has no ``adj_close`` column, a
    required column is missing, a date is not ISO, or a ticker has closes but no adjusted close.
    """
    if "adj_close" not in [c.strip().strip('"') for c in header.strip().split(",")]:
        raise adj_close_refusal(str(path))
    raw = read_csv_checked(
        path,
        PRICE_COLUMNS,
        usecols=PRICE_COLUMNS,
        dtype={"ticker": "str", "date": "str", **{c: "float64" for c in FLOAT_COLUMNS}},
    )
    source_rows = len(raw)
    # Coarse filter on the date text first (ISO dates compare lexicographically; one day
    # of slack either side for timestamps whose UTC date differs from the exchange's).
    lo = (start - pd.Timedelta(days=1)).date().isoformat()
    hi = (end + pd.Timedelta(days=1)).date().isoformat()
    day = raw["date"].str[:10]
    df = raw.loc[raw["ticker"].isin(list(wanted)) & (day >= lo) & (day < hi)].copy()
    del raw
    df["ticker"] = df["ticker"].map(wanted)
    try:
        df["date"] = exchange_local_times(df["date"], df["ticker"])
    except ValueError as exc:
        raise SourceError(f"{path}: column date is not ISO YYYY-MM-DD ({exc}); fix the snapshot file.") from exc
    df, n_dup = finish_prices(df)
    check_adjusted(df, str(path))
    return df, n_dup, source_rows
