"""Daily prices from Yahoo Finance: live through ``yfinance``, or from a snapshot CSV.

Output (both modes) is one long frame, one row per (ticker, trading day)::

    ticker     str             S&P spelling as requested (BRK.B, not Yahoo's BRK-B)
    date       datetime64[ns]  trading day, naive (exchange-local calendar date)
    open, high, low, close     float64, raw (unadjusted) prices in the quote currency
    adj_close  float64         close adjusted for splits and dividends as of the download day
    volume     float64         shares traded

sorted by ``ticker, date``. ``close`` is raw and ``adj_close`` adjusted, i.e. the shape of
``yfinance.download(..., auto_adjust=False)``; yfinance defaults to ``auto_adjust=True``
(which overwrites ``close`` with the adjusted close and drops ``Adj Close``), so the reader
passes ``auto_adjust=False`` explicitly, and refuses data without an adjusted close.

Rules applied to every input (live download, long snapshot CSV, or a CSV that yfinance
itself wrote with its multi-row ``Price/Ticker/Date`` header):

* **Trading day.** A time-zone-aware timestamp (yfinance returns the exchange's zone, and
  sometimes UTC) is converted to the exchange's time zone
  (:func:`anachron.sources.base.exchange_timezone`) before its calendar date is taken; a
  naive timestamp is taken as exchange-local already.
* **One row per (ticker, day).** When two rows fall on the same trading day the later one
  is kept: later exchange-local time, then later position in the input. Rows are never
  compared by price. The dropped rows are counted as ``duplicate_day`` in
  ``skipped_by_reason``.
* **Change of company behind a symbol.** :func:`flag_price_jumps` flags a day whose adjusted
  close moves by more than :data:`JUMP_FACTOR` from the ticker's previous row; the stock
  task leaves such a ticker out of any window that spans the jump.

Modules:

* :mod:`~anachron.sources.yahoo.reader`: the reader, live or from a snapshot;
* :mod:`~anachron.sources.yahoo.windows`: :func:`fetch_window_prices`, the prices of the stock windows' universes;
* :mod:`~anachron.sources.yahoo.download`: the live ``yfinance.download`` call and the errors it logs;
* :mod:`~anachron.sources.yahoo.prices`: the long frame: columns, trading and duplicate days, refused data;
* :mod:`~anachron.sources.yahoo.timezones`: exchange-local times of tz-aware or naive timestamps;
* :mod:`~anachron.sources.yahoo.wide`: yfinance's wide frames (``Price``/``Ticker`` column levels) as the long frame;
* :mod:`~anachron.sources.yahoo.yfinance_csv`: CSVs yfinance wrote (multi-row header);
* :mod:`~anachron.sources.yahoo.long_csv`: the long snapshot CSV ``ticker,date,...``;
* :mod:`~anachron.sources.yahoo.jumps`: jumps of the adjusted close (another company behind a symbol).

Ticker spelling (S&P ``BRK.B`` vs Yahoo ``BRK-B``, exchange suffixes and their time zones) is
shared with the S&P 500 source and lives in :mod:`anachron.sources.base`
(:func:`~anachron.sources.base.normalize_ticker`, :func:`~anachron.sources.base.to_yahoo_symbol`,
:func:`~anachron.sources.base.exchange_timezone`).
"""

from __future__ import annotations

from anachron.sources.yahoo.jumps import JUMP_COLUMNS, JUMP_FACTOR, flag_price_jumps
from anachron.sources.yahoo.prices import PRICE_COLUMNS, REASON_DUPLICATE_DAY, adj_close_refusal, empty_prices
from anachron.sources.yahoo.reader import CHART_URL, SNAPSHOT_PATTERN, YahooPriceReader
from anachron.sources.yahoo.timezones import exchange_local_times
from anachron.sources.yahoo.wide import flatten_download
from anachron.sources.yahoo.windows import fetch_window_prices
from anachron.sources.yahoo.yfinance_csv import is_yfinance_csv, read_yfinance_csv

__all__ = [
    "CHART_URL",
    "JUMP_COLUMNS",
    "JUMP_FACTOR",
    "PRICE_COLUMNS",
    "REASON_DUPLICATE_DAY",
    "SNAPSHOT_PATTERN",
    "YahooPriceReader",
    "adj_close_refusal",
    "empty_prices",
    "exchange_local_times",
    "fetch_window_prices",
    "flag_price_jumps",
    "flatten_download",
    "is_yfinance_csv",
    "read_yfinance_csv",
]
