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
passes ``auto_adjust=False`` explicitly.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import warnings
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import (
    SourceReader,
    SourceError,
    find_snapshot_files,
    normalize_ticker,
    read_csv_checked,
    to_yahoo_symbol,
)

log = logging.getLogger(__name__)

#: Column order of the long price frame.
PRICE_COLUMNS = ["ticker", "date", "open", "high", "low", "close", "adj_close", "volume"]
#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "yahoo/prices_daily_*.csv.gz"
#: Endpoint yfinance reads daily bars from (recorded in the manifest as the origin).
CHART_URL = "https://query2.finance.yahoo.com/v8/finance/chart/{ticker}"

_FLOAT_COLUMNS = ["open", "high", "low", "close", "adj_close", "volume"]
_YF_RENAME = {
    "Open": "open",
    "High": "high",
    "Low": "low",
    "Close": "close",
    "Adj Close": "adj_close",
    "Volume": "volume",
}


def _as_timestamp(value: str | dt.date | pd.Timestamp, what: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{what}={value!r} is not a date (use ISO YYYY-MM-DD)") from exc
    if ts.tzinfo is not None:
        ts = ts.tz_convert(None)
    return ts.normalize()


def empty_prices() -> pd.DataFrame:
    """An empty frame with the long price columns and dtypes."""
    df = pd.DataFrame({c: pd.Series(dtype="float64") for c in PRICE_COLUMNS})
    df["ticker"] = pd.Series(dtype="str")
    df["date"] = pd.Series(dtype="datetime64[ns]")
    return df[PRICE_COLUMNS]


def _finish(df: pd.DataFrame) -> pd.DataFrame:
    """Coerce dtypes, drop rows without any price, sort, reset index."""
    df = df[PRICE_COLUMNS].copy()
    df["ticker"] = df["ticker"].astype("str")
    df["date"] = pd.to_datetime(df["date"]).astype("datetime64[ns]")
    for c in _FLOAT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    has_price = df[["open", "high", "low", "close", "adj_close"]].notna().any(axis=1)
    df = df[has_price]
    df = df.drop_duplicates(["ticker", "date"], keep="first")
    return df.sort_values(["ticker", "date"], kind="mergesort").reset_index(drop=True)


def flatten_download(data: pd.DataFrame, symbol_to_ticker: dict[str, str] | None = None) -> pd.DataFrame:
    """Turn ``yfinance.download(..., multi_level_index=True)`` output into the long frame.

    ``data`` has a DatetimeIndex and column MultiIndex levels ``(Price, Ticker)``
    (``group_by='column'``, the default) or ``(Ticker, Price)``. ``symbol_to_ticker`` maps
    Yahoo symbols back to the caller's spelling. Rows where every price is NaN (dates a
    ticker did not trade, introduced by yfinance's index union) are dropped.
    """
    if data is None or data.empty or not isinstance(data.columns, pd.MultiIndex):
        return empty_prices()
    names = list(data.columns.names)
    ticker_level = names.index("Ticker") if "Ticker" in names else 1
    long = data.stack(level=ticker_level, future_stack=True)
    long.index = long.index.set_names(["date", "ticker"])
    long = long.rename(columns=_YF_RENAME).reset_index()
    for c in _FLOAT_COLUMNS:
        if c not in long.columns:
            long[c] = float("nan")
    idx = pd.DatetimeIndex(long["date"])
    if idx.tz is not None:
        idx = idx.tz_localize(None)
    long["date"] = idx.normalize()
    mapping = symbol_to_ticker or {}
    long["ticker"] = [mapping.get(str(s).upper(), normalize_ticker(s)) for s in long["ticker"]]
    return _finish(long)


class _LogCollector(logging.Handler):
    """Collects yfinance's ERROR log records (it logs per-ticker failures instead of raising)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:  # pragma: no cover - trivial
        try:
            self.messages.append(record.getMessage())
        except Exception:
            pass


class YahooPriceReader(SourceReader):
    """Daily OHLC, adjusted close and volume for a list of tickers over ``[start, end)``.

    Parameters
    ----------
    tickers:
        Ticker symbols in S&P spelling (``BRK.B``) or Yahoo spelling (``BRK-B``); output
        uses the S&P spelling (:func:`anachron.sources.base.normalize_ticker`).
    start, end:
        Dates (ISO strings, ``date`` or ``Timestamp``); ``start`` inclusive, ``end``
        exclusive, as in ``yfinance.download``. To include a day ``D`` pass ``end=D + 1 day``.
    session:
        HTTP session handed to yfinance (a ``requests.Session`` or ``curl_cffi`` session);
        ``None`` lets yfinance build its own. Tests pass a session replaying recordings.
    snapshot_dir:
        Directory holding ``yahoo/prices_daily_*.csv.gz`` (columns
        ``ticker,date,open,high,low,close,adj_close,volume``); ``None`` falls back to
        ``$ANACHRON_SNAPSHOT_DIR`` and then to a live download. If several snapshot files
        match, the last by name is used.

    After :meth:`read`, :attr:`manifest` holds one provenance record with origin (chart
    URL or ``snapshot:<path>``), sha256, rows and ``tickers_requested`` /
    ``tickers_returned`` / ``tickers_missing``.

    Raises :class:`SourceError` from :meth:`read` when the download fails or returns
    nothing, when the snapshot is absent or malformed, or when no requested ticker has
    rows; ``ValueError`` for an empty ticker list or ``end <= start``.
    """

    source = "yahoo"
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        tickers: Iterable[str] | str,
        start: str | dt.date | pd.Timestamp,
        end: str | dt.date | pd.Timestamp,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        if isinstance(tickers, str):
            tickers = tickers.replace(",", " ").split()
        canon: list[str] = []
        for t in tickers:
            n = normalize_ticker(t)
            if n and n not in canon:
                canon.append(n)
        if not canon:
            raise ValueError("YahooPriceReader needs at least one ticker")
        self.tickers: list[str] = canon
        self.start = _as_timestamp(start, "start")
        self.end = _as_timestamp(end, "end")
        if self.end <= self.start:
            raise ValueError(f"end ({self.end.date()}) must be after start ({self.start.date()}); end is exclusive")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.timeout = timeout

    def _live_session(self) -> Any:
        """The injected session, or ``None``: yfinance then builds its own (it needs
        ``curl_cffi``'s browser impersonation, which :func:`~anachron.sources.base.make_session`
        does not give)."""
        return self.session

    def _checked(self, df: pd.DataFrame, origin: str, sha: str, extra: dict[str, Any]) -> pd.DataFrame:
        """Check that some requested ticker has rows, record the manifest, return ``df``."""
        returned = sorted(df["ticker"].unique().tolist())
        missing = [t for t in self.tickers if t not in set(returned)]
        if not returned:
            raise SourceError(
                f"Yahoo prices: none of the {len(self.tickers)} requested tickers "
                f"({', '.join(self.tickers[:10])}{', ...' if len(self.tickers) > 10 else ''}) has rows in "
                f"[{self.start.date()}, {self.end.date()}) from {origin}. Check the tickers and dates; "
                + self._hint()
            )
        if missing:
            log.info("Yahoo prices: %d of %d tickers have no rows: %s", len(missing), len(self.tickers), ", ".join(missing))
        self._record(
            origin,
            sha,
            len(df),
            start=self.start.date().isoformat(),
            end_exclusive=self.end.date().isoformat(),
            auto_adjust=False,
            tickers_requested=list(self.tickers),
            tickers_returned=returned,
            tickers_missing=missing,
            **extra,
        )
        return df

    # -- live ---------------------------------------------------------------------------
    def _read_live(self, session: Any) -> pd.DataFrame:
        import yfinance as yf

        symbols = {to_yahoo_symbol(t): t for t in self.tickers}
        yf_logger = logging.getLogger("yfinance")
        collector = _LogCollector()
        yf_logger.addHandler(collector)
        try:
            with warnings.catch_warnings():
                # yfinance 1.7 trips pandas 3 deprecations (inplace=...); not actionable here.
                warnings.filterwarnings("ignore", module=r"yfinance(\..*)?$")
                data = yf.download(
                    list(symbols),
                    start=self.start.date().isoformat(),
                    end=self.end.date().isoformat(),
                    auto_adjust=False,
                    actions=False,
                    progress=False,
                    session=session,
                    threads=False,
                    multi_level_index=True,
                    timeout=self.timeout,
                )
        except Exception as exc:  # yfinance raises its own types (rate limit, bad session, ...)
            raise SourceError(
                f"Yahoo Finance download of {len(symbols)} tickers for "
                f"[{self.start.date()}, {self.end.date()}) failed: {type(exc).__name__}: {exc}. "
                + self._hint()
            ) from exc
        finally:
            yf_logger.removeHandler(collector)
        df = flatten_download(data, symbols)
        if df.empty:
            reasons = "; ".join(dict.fromkeys(m.strip() for m in collector.messages if m.strip()))
            raise SourceError(
                f"Yahoo Finance returned no prices for {len(symbols)} tickers "
                f"({', '.join(list(symbols)[:10])}{', ...' if len(symbols) > 10 else ''}) in "
                f"[{self.start.date()}, {self.end.date()})"
                + (f" (yfinance said: {reasons[:500]})" if reasons else "")
                + ". The network may be down, Yahoo may be rate-limiting, or the tickers/dates may be wrong. "
                + self._hint()
            )
        buf = df.to_csv(index=False, date_format="%Y-%m-%d").encode("utf-8")
        try:
            yf_version = yf.__version__
        except AttributeError:  # pragma: no cover
            yf_version = "unknown"
        extra = {"yfinance_version": yf_version, "sha256_of": "long frame as CSV"}
        return self._checked(df, CHART_URL, sha256_bytes(buf), extra)

    # -- snapshot -----------------------------------------------------------------------
    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        path = find_snapshot_files(snap, self.snapshot_layout)[-1]
        # Snapshot tickers may use either spelling; accept both and map back.
        wanted: dict[str, str] = {}
        for t in self.tickers:
            wanted[t] = t
            wanted[to_yahoo_symbol(t)] = t
        raw = read_csv_checked(
            path,
            PRICE_COLUMNS,
            usecols=PRICE_COLUMNS,
            dtype={"ticker": "str", "date": "str", **{c: "float64" for c in _FLOAT_COLUMNS}},
        )
        source_rows = len(raw)
        lo, hi = self.start.date().isoformat(), self.end.date().isoformat()
        # Filter on the raw strings first (ISO dates compare lexicographically), parse after.
        keep = raw["ticker"].isin(list(wanted)) & (raw["date"] >= lo) & (raw["date"] < hi)
        df = raw.loc[keep].copy()
        del raw
        df["ticker"] = df["ticker"].map(wanted)
        try:
            df["date"] = pd.to_datetime(df["date"], format="%Y-%m-%d")
        except ValueError as exc:
            raise SourceError(f"{path}: column date is not ISO YYYY-MM-DD ({exc}); fix the snapshot file.") from exc
        df = _finish(df)
        extra = {"snapshot_file": path.name, "source_rows": source_rows}
        return self._checked(df, f"snapshot:{path}", sha256_file(path), extra)


def fetch_window_prices(
    membership: pd.DataFrame,
    windows: list[dict[str, Any]],
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    margin_days: int = 10,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Daily prices of every S&P 500 member of any window's universe (as of its cutoff).

    The date range spans all windows plus ``margin_days`` on each side (so that the
    first trading day on/after a start and the last on/before an end are inside it).

    Returns:
        (long price frame as :meth:`YahooPriceReader.read`, ``{"sources": manifest}``).

    Raises:
        SourceError: when no prices can be fetched or read.
    """
    from anachron.sources.sp500 import members_as_of

    tickers: set[str] = set()
    for w in windows:
        cutoff = pd.Timestamp(w["start"]) - pd.Timedelta(days=1)
        tickers.update(members_as_of(membership, cutoff))
    start = min(pd.Timestamp(w["start"]) for w in windows) - pd.Timedelta(days=margin_days)
    end = max(pd.Timestamp(w["end"]) for w in windows) + pd.Timedelta(days=margin_days)
    reader = YahooPriceReader(sorted(tickers), start, end, session=session, snapshot_dir=snapshot_dir)
    prices = reader.read()
    return prices, {"sources": reader.manifest}
