"""The ``sp500_gics`` reader: GICS sectors per member from dated constituents snapshots, or
from Wikipedia's list as it stood on given dates (:mod:`anachron.sources.sp500`)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.sources.base import SourceError, SourceReader, find_snapshot_files, read_csv_checked
from anachron.sources.index_membership import to_day
from anachron.sources.sp500.constituents import normalize_constituents, sort_sectors
from anachron.sources.sp500.layout import CONSTITUENTS_PATTERN, WIKIPEDIA_API_URL, WIKIPEDIA_PAGE
from anachron.sources.sp500.wikipedia import latest_revision, parse_query, revision_query, revision_table

_DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


class GICSSectorReader(SourceReader):
    """GICS sector (and company name) per S&P 500 member as listed on given dates.

    ``read()`` returns columns ``as_of`` (datetime64[ns], the date the list describes),
    ``ticker`` (str), ``name`` (str), ``sector`` (str, GICS sector name), sorted by
    as_of, ticker.

    Snapshot (``snapshot_dir`` or ``$ANACHRON_SNAPSHOT_DIR``): every
    ``sp500/constituents_*.csv``; ``as_of`` is the ``YYYY-MM-DD`` in the file name (also for
    ``constituents_latest_YYYY-MM-DD.csv``). Live: :meth:`read_as_of` on ``dates`` (required
    in live mode), i.e. Wikipedia's page as it stood at the end of each date.

    :attr:`manifest` has one record per file or revision (revid and revision timestamp for
    Wikipedia). Raises :class:`SourceError` on a failed fetch, a missing file, a file name
    without a date, or a table without ticker/sector columns.
    """

    source = "sp500_gics"
    snapshot_layout = CONSTITUENTS_PATTERN

    def __init__(
        self,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        dates: Iterable[Any] | None = None,
        api_url: str = WIKIPEDIA_API_URL,
        page: str = WIKIPEDIA_PAGE,
    ) -> None:
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.dates = list(dates) if dates is not None else None
        self.api_url = api_url
        self.page = page

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        """All snapshot tables (``as_of`` from each file name)."""
        frames = []
        for path in find_snapshot_files(snap, self.snapshot_layout):
            m = _DATE_IN_NAME.search(path.name)
            if m is None:
                raise SourceError(
                    f"{path}: constituents snapshot name has no YYYY-MM-DD date; "
                    "rename it to constituents_YYYY-MM-DD.csv (the date the list was taken)."
                )
            raw = read_csv_checked(path, [], name=str(path), dtype="str", keep_default_na=False)
            df = normalize_constituents(raw, m.group(1), str(path))
            frames.append(df)
            self._record_file(path, len(df), as_of=m.group(1))
        return sort_sectors(pd.concat(frames, ignore_index=True))

    def _read_live(self, session: Any) -> pd.DataFrame:
        """The Wikipedia list on each of ``dates`` (required live)."""
        if not self.dates:
            raise SourceError(
                "GICS sectors: live mode reads Wikipedia as of given dates, but no `dates` were given; "
                "pass dates=[...] (e.g. the windows' cutoffs) or call read_as_of(dates). " + self._hint()
            )
        return self._read_revisions(session, self.dates)

    def read_as_of(self, dates: Iterable[Any]) -> pd.DataFrame:
        """Wikipedia's constituents table as it stood at the end of each date (live only).

        For each date D: ``action=query&prop=revisions&rvlimit=1&rvdir=older&rvstart=DT23:59:59Z``
        gives the last revision id at or before D; ``action=parse&oldid=<revid>&prop=text``
        gives its HTML; the first table is read with :func:`pandas.read_html`. ``as_of`` = D.
        Same columns as :meth:`read`. Raises :class:`SourceError` on HTTP errors, no
        revision before D, or a table without ticker/sector columns.
        """
        self._manifest = []
        return self._read_revisions(self._live_session(), dates)

    def _read_revisions(self, session: Any, dates: Iterable[Any]) -> pd.DataFrame:
        frames = []
        for d in sorted({to_day(x) for x in dates}):
            day = d.date().isoformat()
            what = f"Wikipedia revision of {self.page!r} at {day}"
            resp = self._get(session, self.api_url, params=revision_query(self.page, day), what=what)
            revid, rev_ts = latest_revision(resp, what, self._hint())
            what = f"Wikipedia revision {revid} of {self.page!r}"
            resp = self._get(session, self.api_url, params=parse_query(revid), what=what)
            table, html = revision_table(resp, what, self._hint())
            origin = f"{self.api_url}?action=parse&oldid={revid}"
            df = normalize_constituents(table, d, origin)
            frames.append(df)
            self._record_bytes(
                origin, html.encode("utf-8"), len(df), as_of=day, revid=revid, revision_timestamp=rev_ts, page=self.page
            )
        if not frames:
            raise ValueError("read_as_of needs at least one date")
        return sort_sectors(pd.concat(frames, ignore_index=True))
