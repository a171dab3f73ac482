"""The ``yahoo`` reader: daily prices of given tickers, live through yfinance or from a snapshot
(:mod:`anachron.sources.yahoo`)."""

from __future__ import annotations

import datetime as dt
import gzip
import logging
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import (
    SourceReader,
    SourceError,
    find_snapshot_files,
    normalize_ticker,
    to_yahoo_symbol,
)
from anachron.sources.yahoo.download import yfinance_download
from anachron.sources.yahoo.jumps import JUMP_COLUMNS, flag_price_jumps
from anachron.sources.yahoo.long_csv import read_long_csv
from anachron.sources.yahoo.prices import REASON_DUPLICATE_DAY
from anachron.sources.yahoo.wide import flatten
from anachron.sources.yahoo.yfinance_csv import is_yfinance_csv, read_wide_csv

log = logging.getLogger(__name__)

#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "yahoo/prices_daily_*.csv.gz"
#: Endpoint yfinance reads daily bars from (recorded in the manifest as the origin).
CHART_URL = "https://query2.finance.yahoo.com/v8/finance/chart/{ticker}"


def _as_timestamp(value: str | dt.date | pd.Timestamp, what: str) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{what}={value!r} is not a date (use ISO YYYY-MM-DD)") from exc
    if ts.tzinfo is not None:
        ts = ts.tz_convert(None)
    return ts.normalize()


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
        symbols = {to_yahoo_symbol(t): t for t in self.tickers}
        data, messages, yf_version = yfinance_download(
            list(symbols), self.start, self.end, session=session, timeout=self.timeout, hint=self._hint()
        )
        df, n_dup = flatten(data, symbols, "the yfinance download")
        if df.empty:
            reasons = "; ".join(dict.fromkeys(m.strip() for m in messages if m.strip()))
            raise SourceError(
                f"Yahoo Finance returned no prices for {len(symbols)} tickers "
                f"({', '.join(list(symbols)[:10])}{', ...' if len(symbols) > 10 else ''}) in "
                f"[{self.start.date()}, {self.end.date()})"
                + (f" (yfinance said: {reasons[:500]})" if reasons else "")
                + ". The network may be down, Yahoo may be rate-limiting, or the tickers/dates may be wrong. "
                + self._hint()
            )
        buf = df.to_csv(index=False, date_format="%Y-%m-%d").encode("utf-8")
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
            df, n_dup = read_wide_csv(path, None)
            source_rows = len(df)
            df = df[df["ticker"].isin(list(wanted))].copy()
            df["ticker"] = df["ticker"].map(wanted)
        else:
            df, n_dup, source_rows = read_long_csv(path, first, wanted, self.start, self.end)
        extra = {"snapshot_file": path.name, "source_rows": source_rows}
        return self._checked(df, f"snapshot:{path}", sha256_file(path), extra, n_dup)
