"""The ``fja05680/sp500`` readers (membership spells, index changes) and :func:`fetch_sp500`,
everything the stock task needs from the S&P 500 sources (:mod:`anachron.sources.sp500`)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import SourceError, SourceReader, find_snapshot_files
from anachron.sources.index_membership import to_day
from anachron.sources.sp500.fja05680 import parse_changes, parse_membership
from anachron.sources.sp500.gics_reader import GICSSectorReader
from anachron.sources.sp500.layout import CHANGES_SNAPSHOT, CHANGES_URL, MEMBERSHIP_SNAPSHOT, MEMBERSHIP_URL


class _GitHubCsvReader(SourceReader):
    """A small CSV of ``fja05680/sp500``: :attr:`url` live, :attr:`snapshot_layout` in a snapshot.

    Subclasses set :attr:`what` (for messages) and implement :meth:`_parse`, which gets the
    bytes as a buffer, their origin and sha256, and records the manifest entry.
    """

    url: str = ""
    what: str = ""

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        path = find_snapshot_files(snap, self.snapshot_layout)[-1]
        return self._parse(io.BytesIO(path.read_bytes()), f"snapshot:{path}", sha256_file(path))

    def _read_live(self, session: Any) -> pd.DataFrame:
        content = self._get(session, self.url, what=self.what).content
        if not content.strip():
            raise SourceError(f"{self.url} returned an empty body for {self.what}. {self._hint()}")
        return self._parse(io.BytesIO(content), self.url, sha256_bytes(content))

    def _parse(self, buf: io.BytesIO, origin: str, sha: str) -> pd.DataFrame:
        raise NotImplementedError



class SP500MembershipReader(_GitHubCsvReader):
    """S&P 500 membership spells, one row per (ticker, spell).

    ``read()`` returns columns ``ticker`` (str, S&P spelling), ``start_date`` and
    ``end_date`` (datetime64[ns]; ``end_date`` NaT = still a member; a member on day D iff
    ``start_date <= D < end_date``), sorted by ticker, start_date.

    Live (default): :data:`MEMBERSHIP_URL` (raw GitHub CSV of ``fja05680/sp500``) through
    ``session`` (a ``requests.Session``; default one with retries). Snapshot:
    ``<snapshot_dir>/sp500/sp500_ticker_start_end.csv``. :attr:`manifest` records origin,
    sha256 and rows after ``read()``.

    Raises :class:`SourceError` on a failed fetch, a missing file or missing columns.
    """

    source = "sp500_membership"
    snapshot_layout = MEMBERSHIP_SNAPSHOT
    url = MEMBERSHIP_URL
    what = "S&P 500 membership spells"

    def _parse(self, buf: io.BytesIO, origin: str, sha: str) -> pd.DataFrame:
        df = parse_membership(buf, origin)
        self._record(origin, sha, len(df), tickers=int(df["ticker"].nunique()))
        return df


class SP500ChangesReader(_GitHubCsvReader):
    """Dated S&P 500 index changes since 2019.

    ``read()`` returns columns ``date`` (datetime64[ns]), ``add`` and ``remove`` (str,
    comma-separated tickers in S&P spelling, ``""`` when none), sorted by date. Use
    :func:`~anachron.sources.sp500.fja05680.changes_long` for one row per (date, ticker, action).

    Live: :data:`CHANGES_URL`; snapshot: ``<snapshot_dir>/sp500/sp500_changes_since_2019.csv``.
    Raises :class:`SourceError` on a failed fetch, a missing file or missing columns.
    """

    source = "sp500_changes"
    snapshot_layout = CHANGES_SNAPSHOT
    url = CHANGES_URL
    what = "S&P 500 index changes"

    def _parse(self, buf: io.BytesIO, origin: str, sha: str) -> pd.DataFrame:
        df = parse_changes(buf, origin)
        self._record(origin, sha, len(df))
        return df


def window_cutoffs(windows: Iterable[dict[str, Any]]) -> list[pd.Timestamp]:
    """Cutoff date (start - 1 day) of each stock window config."""
    return sorted({to_day(w["start"]) - pd.Timedelta(days=1) for w in windows})


def fetch_sp500(
    *, snapshot_dir: str | os.PathLike[str] | None, windows: Iterable[dict[str, Any]], session: Any = None
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Everything the stock task needs from the S&P 500 sources, with one manifest.

    Returns ``({"membership", "changes", "sectors"}, {"sources": [manifest records]})``.
    Live mode reads the GICS sector lists as of each window's cutoff.

    Raises:
        SourceError: when a source cannot be fetched or read.
    """
    membership_reader = SP500MembershipReader(session=session, snapshot_dir=snapshot_dir)
    changes_reader = SP500ChangesReader(session=session, snapshot_dir=snapshot_dir)
    sector_reader = GICSSectorReader(session=session, snapshot_dir=snapshot_dir, dates=window_cutoffs(windows))
    tables = {
        "membership": membership_reader.read(),
        "changes": changes_reader.read(),
        "sectors": sector_reader.read(),
    }
    sources = membership_reader.manifest + changes_reader.manifest + sector_reader.manifest
    return tables, {"sources": sources}
