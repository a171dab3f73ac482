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
"""

from __future__ import annotations

import datetime as dt
import gzip
import logging
import os
import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import (
    SourceReader,
    SourceError,
    exchange_timezone,
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

#: Factor of a day-over-day move of the adjusted close beyond which (up: ratio > factor;
#: down: ratio < 1 / factor) the move is flagged as a probable change of company behind the
#: symbol. The adjusted close already absorbs splits and dividends, so a move this large is
#: not explained by them. 3 (+200 % / -67 %) is above every daily move of the S&P 500
#: members 2018-2024 in the project's snapshot (largest: -61 % and +92 %).
JUMP_FACTOR = 3.0
#: ``skipped_by_reason`` code of rows dropped because a later row has the same trading day.
REASON_DUPLICATE_DAY = "duplicate_day"
#: Columns of :func:`flag_price_jumps`.
JUMP_COLUMNS = ["ticker", "date", "prev_date", "adj_ratio", "close_ratio", "detail"]

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


def _finish(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Coerce dtypes, take the trading day, drop rows without any price, keep the later of
    two rows of one day; sort, reset index.

    ``df["date"]`` holds exchange-local times (:func:`exchange_local_times`). Returns the
    long frame and the number of rows dropped as duplicate days.
    """
    df = df[PRICE_COLUMNS].copy()
    df["ticker"] = df["ticker"].astype("str")
    local = pd.to_datetime(df["date"]).astype("datetime64[ns]")
    df["date"] = local.dt.normalize()
    df["_local"] = local
    df["_pos"] = np.arange(len(df))
    for c in _FLOAT_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    has_price = df[["open", "high", "low", "close", "adj_close"]].notna().any(axis=1)
    df = df[has_price].sort_values(["ticker", "date", "_local", "_pos"], kind="mergesort")
    dup = df.duplicated(["ticker", "date"], keep="last")
    return df.loc[~dup, PRICE_COLUMNS].reset_index(drop=True), int(dup.sum())


def _check_adjusted(df: pd.DataFrame, where: str) -> None:
    """Refuse a long frame where a ticker has closes but never an adjusted close."""
    seen = df.groupby("ticker")[["close", "adj_close"]].count()
    bare = seen.index[(seen["close"] > 0) & (seen["adj_close"] == 0)].tolist()
    if bare:
        raise adj_close_refusal(where, bare)


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
    long = long.rename(columns=_YF_RENAME).reset_index()
    for c in _FLOAT_COLUMNS:
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
    return _flatten(data, symbol_to_ticker, where)[0]


def _flatten(data: pd.DataFrame, symbol_to_ticker: dict[str, str] | None, where: str) -> tuple[pd.DataFrame, int]:
    """:func:`flatten_download`, and the number of rows dropped as duplicate days."""
    if data is None or data.empty or not isinstance(data.columns, pd.MultiIndex):
        return empty_prices(), 0
    df, n_dup = _finish(_long_from_wide(data, symbol_to_ticker, where))
    _check_adjusted(df, where)
    return df, n_dup


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
    return _read_wide_csv(path, symbol_to_ticker)[0]


def _read_wide_csv(path: str | os.PathLike[str], symbol_to_ticker: dict[str, str] | None) -> tuple[pd.DataFrame, int]:
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
        return _flatten(wide, symbol_to_ticker, where)
    except ValueError as exc:
        raise SourceError(f"{where}: a date is not an ISO timestamp ({exc}); fix the file.") from exc


def flag_price_jumps(prices: pd.DataFrame, factor: float = JUMP_FACTOR) -> pd.DataFrame:
    """Days on which a ticker's adjusted close moves by more than ``factor`` from its previous row.

    ``prices``: long frame ``ticker, date, adj_close`` (``close`` optional). Splits and
    dividends are already in the adjusted close, so such a move is not explained by them and
    most likely means another company now trades under the symbol (a reused ticker), or a bad
    adjustment. The raw close tells which: if it moves as much, no corporate action explains
    the move; if it does not, the adjustment factor changed by itself (a split recorded
    without a price change). Rows without a positive adjusted close are skipped.

    Returns one row per flagged day, columns :data:`JUMP_COLUMNS`: ``ticker``, ``date`` (the
    day after the jump), ``prev_date`` (the row before it), ``adj_ratio`` and
    ``close_ratio`` (today / previous, unitless; NaN without ``close``), ``detail`` (text).
    """
    if not factor > 1:
        raise ValueError(f"factor must be > 1, got {factor}")
    cols = ["ticker", "date", "adj_close"] + (["close"] if "close" in prices.columns else [])
    px = prices.loc[prices["adj_close"] > 0, cols].copy()
    px["date"] = pd.to_datetime(px["date"])
    px = px.sort_values(["ticker", "date"], kind="mergesort")
    g = px.groupby("ticker", sort=False)
    px["prev_date"] = g["date"].shift()
    px["adj_ratio"] = px["adj_close"] / g["adj_close"].shift()
    px["close_ratio"] = px["close"] / g["close"].shift() if "close" in px.columns else np.nan
    hit = px[(px["adj_ratio"] > factor) | (px["adj_ratio"] < 1.0 / factor)].copy()

    def detail(r: pd.Series) -> str:
        move = f"adjusted close x{r['adj_ratio']:.3g} from {r['prev_date'].date()} to {r['date'].date()}"
        rc = r["close_ratio"]
        if pd.isna(rc) or rc > factor or rc < 1.0 / factor:
            return f"{move} (raw close x{rc:.3g}); no split or dividend explains it: another company behind the symbol?"
        return f"{move} while the raw close moves x{rc:.3g}: an adjustment without a matching price change"

    hit["detail"] = [detail(r) for _, r in hit.iterrows()] if len(hit) else pd.Series(dtype="str")
    return hit[JUMP_COLUMNS].reset_index(drop=True)


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
        #: Days flagged by :func:`flag_price_jumps` in the last :meth:`read` (:data:`JUMP_COLUMNS`).
        self.price_jumps = pd.DataFrame(columns=JUMP_COLUMNS)

    def _live_session(self) -> Any:
        """The injected session, or ``None``: yfinance then builds its own (it needs
        ``curl_cffi``'s browser impersonation, which :func:`~anachron.sources.base.make_session`
        does not give)."""
        return self.session

    def _checked(self, df: pd.DataFrame, origin: str, sha: str, extra: dict[str, Any], n_dup: int) -> pd.DataFrame:
        """Keep ``[start, end)``, check that some requested ticker has rows, flag price jumps,
        record the manifest (``n_dup`` rows dropped as duplicate days), return ``df``."""
        df = df[(df["date"] >= self.start) & (df["date"] < self.end)].reset_index(drop=True)
        self.skipped_by_reason = {REASON_DUPLICATE_DAY: n_dup} if n_dup else {}
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
        self.price_jumps = flag_price_jumps(df)
        for r in self.price_jumps.itertuples():
            log.warning("Yahoo prices: %s %s: %s", r.ticker, r.date.date(), r.detail)
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
            duplicate_days_dropped=n_dup,
            price_jumps=len(self.price_jumps),
            **extra,
        )
        return df

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        """``price_jumps``: the days :func:`flag_price_jumps` flagged (ticker, dates, ratios, detail)."""
        jumps = self.price_jumps.copy()
        for c in ("date", "prev_date"):
            jumps[c] = jumps[c].dt.strftime("%Y-%m-%d")
        return {"price_jumps": jumps.to_dict(orient="records")}

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
        df, n_dup = _flatten(data, symbols, "the yfinance download")
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
        return self._checked(df, CHART_URL, sha256_bytes(buf), extra, n_dup)

    # -- snapshot -----------------------------------------------------------------------
    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        path = find_snapshot_files(snap, self.snapshot_layout)[-1]
        # Snapshot tickers may use either spelling; accept both and map back.
        wanted: dict[str, str] = {}
        for t in self.tickers:
            wanted[t] = t
            wanted[to_yahoo_symbol(t)] = t
        try:
            with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as fh:
                first = fh.readline()
        except (OSError, UnicodeDecodeError) as exc:
            raise SourceError(f"{path}: could not be read ({exc}); replace the snapshot file.") from exc
        if is_yfinance_csv(first):
            df, n_dup = _read_wide_csv(path, None)
            source_rows = len(df)
            df = df[df["ticker"].isin(list(wanted))].copy()
            df["ticker"] = df["ticker"].map(wanted)
        else:
            df, n_dup, source_rows = self._read_long_snapshot(path, first, wanted)
        extra = {"snapshot_file": path.name, "source_rows": source_rows}
        return self._checked(df, f"snapshot:{path}", sha256_file(path), extra, n_dup)

    def _read_long_snapshot(self, path: Path, header: str, wanted: dict[str, str]) -> tuple[pd.DataFrame, int, int]:
        """The long CSV ``ticker,date,...`` at ``path``: (frame, duplicate days dropped, rows in file)."""
        if "adj_close" not in [c.strip().strip('"') for c in header.strip().split(",")]:
            raise adj_close_refusal(str(path))
        raw = read_csv_checked(
            path,
            PRICE_COLUMNS,
            usecols=PRICE_COLUMNS,
            dtype={"ticker": "str", "date": "str", **{c: "float64" for c in _FLOAT_COLUMNS}},
        )
        source_rows = len(raw)
        # Coarse filter on the date text first (ISO dates compare lexicographically; one day
        # of slack either side for timestamps whose UTC date differs from the exchange's).
        lo = (self.start - pd.Timedelta(days=1)).date().isoformat()
        hi = (self.end + pd.Timedelta(days=1)).date().isoformat()
        day = raw["date"].str[:10]
        df = raw.loc[raw["ticker"].isin(list(wanted)) & (day >= lo) & (day < hi)].copy()
        del raw
        df["ticker"] = df["ticker"].map(wanted)
        try:
            df["date"] = exchange_local_times(df["date"], df["ticker"])
        except ValueError as exc:
            raise SourceError(f"{path}: column date is not ISO YYYY-MM-DD ({exc}); fix the snapshot file.") from exc
        df, n_dup = _finish(df)
        _check_adjusted(df, str(path))
        return df, n_dup, source_rows


def fetch_window_prices(
    membership: pd.DataFrame,
    windows: list[dict[str, Any]],
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    margin_days: int = 10,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Daily prices of every S&P 500 member of any window's universe (as of its cutoff).

    The date range spans all windows plus ``margin_days`` on each side: the first wanted
    day is the earliest start - ``margin_days``, the last wanted day the latest end +
    ``margin_days``, and the reader's exclusive ``end`` is that last day + 1 (so with
    ``margin_days=0`` the last window's end day is still read).

    Returns:
        (long price frame as :meth:`YahooPriceReader.read`, the manifest of
        :meth:`~anachron.sources.base.SourceReader.fetch`: ``sources``,
        ``skipped_by_reason``, ``price_jumps``).

    Raises:
        SourceError: when no prices can be fetched or read.
    """
    from anachron.sources.index_membership import members_as_of

    tickers: set[str] = set()
    for w in windows:
        cutoff = pd.Timestamp(w["start"]) - pd.Timedelta(days=1)
        tickers.update(members_as_of(membership, cutoff))
    if margin_days < 0:
        raise ValueError(f"margin_days must be >= 0, got {margin_days}")
    start = min(pd.Timestamp(w["start"]) for w in windows) - pd.Timedelta(days=margin_days)
    last_day = max(pd.Timestamp(w["end"]) for w in windows) + pd.Timedelta(days=margin_days)
    reader = YahooPriceReader(sorted(tickers), start, last_day + pd.Timedelta(days=1), session=session, snapshot_dir=snapshot_dir)
    return reader.fetch()
