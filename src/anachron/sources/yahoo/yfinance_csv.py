"""CSVs that yfinance itself wrote (``df.to_csv()`` of a download: a multi-row header)."""

from __future__ import annotations

import os

import pandas as pd

from anachron.sources.base import SourceError
from anachron.sources.yahoo.wide import flatten


def is_yfinance_csv(header_line: str) -> bool:
    """Whether a CSV's first line is the header yfinance writes (``Price,...`` or ``Ticker,...``)."""
    return header_line.split(",", 1)[0].strip().strip('"') in ("Price", "Ticker")


def read_yfinance_csv(path: str | os.PathLike[str], symbol_to_ticker: dict[str, str] | None = None) -> pd.DataFrame:
    """A CSV saved from a recent yfinance download (``df.to_csv()``) as the long frame.

    Such a file has a multi-row header: ``Price,Adj Close,Close,...`` then ``Ticker,AAPL,...``
    (the two levels may come in the other order, for ``group_by='ticker'``) then
    ``Date,,,...``, and one row per date (ISO, possibly with a UTC offset). Plain or gzip.

    Raises :class:`SourceError` naming the file when it cannot be parsed, has no
    ``Adj Close`` (fix: download with ``auto_adjust=False``) or a date that is not ISO.
    """
    return read_wide_csv(path, symbol_to_ticker)[0]


def read_wide_csv(path: str | os.PathLike[str], symbol_to_ticker: dict[str, str] | None) -> tuple[pd.DataFrame, int]:
    """:func:`read_yfinance_csv`, and the number of rows dropped as duplicate days."""
    where = str(path)
    try:
        wide = pd.read_csv(path, header=[0, 1], index_col=0)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError, OSError) as exc:
        raise SourceError(f"{where}: could not parse as a yfinance CSV ({exc}); replace the file.") from exc
    if wide.columns.nlevels != 2 or not {"Price", "Ticker"} <= set(wide.columns.names):
        raise SourceError(f"{where}: expected the header rows Price and Ticker of a yfinance CSV, got {wide.columns.names}.")
    wide.index = pd.Index(wide.index.astype("str"), name="Date")
    try:
        return flatten(wide, symbol_to_ticker, where)
    except ValueError as exc:
        raise SourceError(f"{where}: a date is not an ISO timestamp ({exc}); fix the file.") from exc
