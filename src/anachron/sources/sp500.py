"""S&P 500 point-in-time membership and GICS sectors.

Sources:

* membership spells and dated index changes from the public ``fja05680/sp500`` repository
  (``sp500_ticker_start_end.csv``: ``ticker,start_date,end_date``, empty end = still a
  member, several spells per ticker possible; ``sp500_changes_since_2019.csv``:
  ``date,add,remove`` with comma-separated tickers). ``end_date`` is the day of the index
  change that removed the ticker: it is no longer a member on that day.
* GICS sectors per member from Wikipedia's "List of S&P 500 companies", either the page
  as it stood on given dates (MediaWiki API: the last revision at or before the day, then
  its parsed HTML) or snapshots ``sp500/constituents_YYYY-MM-DD.csv`` taken from it.

Tickers use the S&P spelling (``BRK.B``) throughout.
"""

from __future__ import annotations

import io
import logging
import os
import re
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.index_membership import to_day as _to_day
from anachron.sources.base import (
    SourceError,
    SourceReader,
    check_columns,
    find_snapshot_files,
    normalize_ticker,
    read_csv_checked,
)

log = logging.getLogger(__name__)

RAW_BASE_URL = "https://raw.githubusercontent.com/fja05680/sp500/master/"
MEMBERSHIP_URL = RAW_BASE_URL + "sp500_ticker_start_end.csv"
CHANGES_URL = RAW_BASE_URL + "sp500_changes_since_2019.csv"
WIKIPEDIA_API_URL = "https://en.wikipedia.org/w/api.php"
WIKIPEDIA_PAGE = "List of S&P 500 companies"

MEMBERSHIP_SNAPSHOT = "sp500/sp500_ticker_start_end.csv"
CHANGES_SNAPSHOT = "sp500/sp500_changes_since_2019.csv"
CONSTITUENTS_PATTERN = "sp500/constituents_*.csv"

#: Column-name variants of constituents tables (snapshots and Wikipedia revisions).
TICKER_COLUMNS = ("Symbol", "Ticker symbol", "Ticker", "Ticker Symbol")
NAME_COLUMNS = ("Security", "Name", "Company", "Company name")
SECTOR_COLUMNS = ("GICS Sector", "Sector", "GICS sector")

SECTOR_RULE_AT_OR_BEFORE = "latest_at_or_before"
SECTOR_RULE_NEAREST_BEFORE = "nearest_before"
SECTOR_RULE_NEAREST_AFTER = "nearest_after"
SECTOR_RULE_MISSING = "missing"

_DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


def _parse_dates(series: pd.Series, where: str, column: str) -> pd.Series:
    try:
        out = pd.to_datetime(series.replace("", np.nan), format="%Y-%m-%d")
    except (ValueError, TypeError) as exc:
        raise SourceError(f"{where}: column {column} has values that are not ISO YYYY-MM-DD dates ({exc}).") from exc
    return out.astype("datetime64[ns]")


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


def parse_membership(buf: io.IOBase | str | os.PathLike[str], name: str) -> pd.DataFrame:
    """Parse ``ticker,start_date,end_date`` CSV into typed spells (see :class:`SP500MembershipReader`)."""
    df = read_csv_checked(buf, ["ticker", "start_date", "end_date"], name=name, dtype="str", keep_default_na=False)
    out = pd.DataFrame(
        {
            "ticker": df["ticker"].map(normalize_ticker).astype("str"),
            "start_date": _parse_dates(df["start_date"], name, "start_date"),
            "end_date": _parse_dates(df["end_date"], name, "end_date"),
        }
    )
    if out["start_date"].isna().any():
        bad = out.loc[out["start_date"].isna(), "ticker"].tolist()[:5]
        raise SourceError(f"{name}: empty start_date for ticker(s) {', '.join(bad)}; every spell needs a start.")
    return out.sort_values(["ticker", "start_date"], kind="mergesort").reset_index(drop=True)


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
    :func:`changes_long` for one row per (date, ticker, action).

    Live: :data:`CHANGES_URL`; snapshot: ``<snapshot_dir>/sp500/sp500_changes_since_2019.csv``.
    Raises :class:`SourceError` on a failed fetch, a missing file or missing columns.
    """

    source = "sp500_changes"
    snapshot_layout = CHANGES_SNAPSHOT
    url = CHANGES_URL
    what = "S&P 500 index changes"

    def _parse(self, buf: io.BytesIO, origin: str, sha: str) -> pd.DataFrame:
        raw = read_csv_checked(buf, ["date", "add", "remove"], name=origin, dtype="str", keep_default_na=False)

        def norm_list(cell: str) -> str:
            return ",".join(normalize_ticker(t) for t in str(cell).split(",") if t.strip())

        df = pd.DataFrame(
            {
                "date": _parse_dates(raw["date"], origin, "date"),
                "add": raw["add"].map(norm_list).astype("str"),
                "remove": raw["remove"].map(norm_list).astype("str"),
            }
        ).sort_values("date", kind="mergesort").reset_index(drop=True)
        self._record(origin, sha, len(df))
        return df


def changes_long(changes: pd.DataFrame) -> pd.DataFrame:
    """One row per (date, ticker, action) from :class:`SP500ChangesReader` output.

    Columns ``date`` (datetime64), ``ticker`` (str), ``action`` ("add" | "remove").
    """
    rows = []
    for date, add, remove in changes[["date", "add", "remove"]].itertuples(index=False):
        for action, cell in (("add", add), ("remove", remove)):
            for t in str(cell).split(","):
                if t.strip():
                    rows.append((date, t.strip(), action))
    return pd.DataFrame(rows, columns=["date", "ticker", "action"]).astype({"ticker": "str", "action": "str"})


def normalize_constituents(df: pd.DataFrame, as_of: Any, where: str) -> pd.DataFrame:
    """Map a constituents table's column variants onto ``as_of, ticker, name, sector``.

    Recognised headers: ticker in :data:`TICKER_COLUMNS`, name in :data:`NAME_COLUMNS`,
    sector in :data:`SECTOR_COLUMNS` (older files: ``Symbol,Name,Sector``; newer and
    Wikipedia: ``Symbol,Security,GICS Sector,...``). Raises :class:`SourceError` naming
    ``where`` and the missing column when no variant of ticker or sector is present.
    ``name`` is optional (NaN when absent).
    """
    cols = {str(c).strip(): c for c in df.columns}

    def pick(options: Iterable[str]) -> Any:
        for o in options:
            if o in cols:
                return cols[o]
        return None

    tcol, ncol, scol = pick(TICKER_COLUMNS), pick(NAME_COLUMNS), pick(SECTOR_COLUMNS)
    missing = []
    if tcol is None:
        missing.append("Symbol (or " + "/".join(TICKER_COLUMNS[1:]) + ")")
    if scol is None:
        missing.append("GICS Sector (or " + "/".join(SECTOR_COLUMNS[1:]) + ")")
    if missing:
        raise SourceError(
            f"{where}: missing required column(s) {'; '.join(missing)} "
            f"(found: {', '.join(map(str, df.columns))}); replace the file with a constituents table."
        )
    out = pd.DataFrame(
        {
            "as_of": _to_day(as_of),
            "ticker": df[tcol].astype("str").map(normalize_ticker),
            "name": df[ncol].astype("str").str.strip() if ncol is not None else np.nan,
            "sector": df[scol].astype("str").str.strip(),
        }
    )
    out = out[(out["ticker"] != "") & (out["ticker"] != "NAN")]
    out["as_of"] = out["as_of"].astype("datetime64[ns]")
    return out.drop_duplicates(["as_of", "ticker"], keep="first").reset_index(drop=True)


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
        return _sort_sectors(pd.concat(frames, ignore_index=True))

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
        for d in sorted({_to_day(x) for x in dates}):
            day = d.date().isoformat()
            params = {
                "action": "query",
                "prop": "revisions",
                "titles": self.page,
                "rvlimit": 1,
                "rvdir": "older",
                "rvstart": f"{day}T23:59:59Z",
                "rvprop": "ids|timestamp",
                "format": "json",
                "formatversion": 2,
            }
            what = f"Wikipedia revision of {self.page!r} at {day}"
            resp = self._get(session, self.api_url, params=params, what=what)
            try:
                pages = resp.json()["query"]["pages"]
                page = pages[0] if isinstance(pages, list) else next(iter(pages.values()))
                rev = page["revisions"][0]
                revid, rev_ts = int(rev["revid"]), rev.get("timestamp")
            except (ValueError, KeyError, IndexError, TypeError, StopIteration) as exc:
                raise SourceError(
                    f"{what}: no revision found in the API answer ({type(exc).__name__}: {exc}); "
                    "the page may not have existed then. " + self._hint()
                ) from exc
            params = {"action": "parse", "oldid": revid, "prop": "text", "format": "json", "formatversion": 2}
            what = f"Wikipedia revision {revid} of {self.page!r}"
            resp = self._get(session, self.api_url, params=params, what=what)
            try:
                text = resp.json()["parse"]["text"]
                html = text["*"] if isinstance(text, dict) else text
                tables = pd.read_html(io.StringIO(html))
            except (ValueError, KeyError, TypeError, ImportError) as exc:
                raise SourceError(f"{what}: no HTML table could be parsed ({type(exc).__name__}: {exc}). {self._hint()}") from exc
            table = tables[0]
            if isinstance(table.columns, pd.MultiIndex):
                table.columns = [c[-1] for c in table.columns]
            origin = f"{self.api_url}?action=parse&oldid={revid}"
            df = normalize_constituents(table, d, origin)
            frames.append(df)
            self._record_bytes(
                origin, html.encode("utf-8"), len(df), as_of=day, revid=revid, revision_timestamp=rev_ts, page=self.page
            )
        if not frames:
            raise ValueError("read_as_of needs at least one date")
        return _sort_sectors(pd.concat(frames, ignore_index=True))


def _sort_sectors(df: pd.DataFrame) -> pd.DataFrame:
    df = df[["as_of", "ticker", "name", "sector"]].copy()
    df["as_of"] = df["as_of"].astype("datetime64[ns]")
    return df.sort_values(["as_of", "ticker"], kind="mergesort").reset_index(drop=True)


def sector_as_of(sectors: pd.DataFrame, tickers: Iterable[str], date: Any) -> pd.DataFrame:
    """GICS sector of each ticker as of ``date``, with the rule that chose the snapshot.

    ``sectors``: frame ``as_of, ticker, name, sector`` (from :class:`GICSSectorReader`).
    Rules, per ticker, in order:

    1. ``latest_at_or_before``: the latest snapshot with ``as_of <= date`` lists the ticker;
    2. otherwise the snapshot nearest in time to ``date`` that lists it (ties go to the
       earlier one): ``nearest_before`` (an older snapshot) or ``nearest_after`` (a later
       one, used when no snapshot at or before ``date`` lists the ticker — a look-ahead in
       metadata only, recorded so it can be audited);
    3. ``missing``: no snapshot lists it; ``name``, ``sector`` and ``sector_as_of`` are NaN
       / NaT and the caller should exclude the ticker.

    Returns one row per input ticker (input order, duplicates dropped): ``ticker, name,
    sector, sector_as_of`` (datetime64[ns], the snapshot date used), ``sector_rule`` (str).
    """
    check_columns(sectors, ["as_of", "ticker", "sector"], "GICS sector table")
    d = _to_day(date)
    tab = sectors.copy()
    if "name" not in tab.columns:
        tab["name"] = np.nan
    tab["as_of"] = pd.to_datetime(tab["as_of"]).astype("datetime64[ns]")
    tab = tab[tab["sector"].notna() & (tab["sector"].astype("str").str.strip() != "")]
    by_date: dict[pd.Timestamp, pd.DataFrame] = {
        k: g.drop_duplicates("ticker").set_index("ticker") for k, g in tab.groupby("as_of", sort=True)
    }
    dates = sorted(by_date)
    before = [x for x in dates if x <= d]
    latest = before[-1] if before else None
    # Snapshots ordered by distance from d, earlier first on ties.
    by_distance = sorted(dates, key=lambda x: (abs((x - d).days), x > d, x))

    rows = []
    seen: set[str] = set()
    for raw in tickers:
        t = normalize_ticker(raw)
        if t in seen:
            continue
        seen.add(t)
        chosen, rule = None, SECTOR_RULE_MISSING
        if latest is not None and t in by_date[latest].index:
            chosen, rule = latest, SECTOR_RULE_AT_OR_BEFORE
        else:
            for x in by_distance:
                if t in by_date[x].index:
                    chosen = x
                    rule = SECTOR_RULE_NEAREST_BEFORE if x <= d else SECTOR_RULE_NEAREST_AFTER
                    break
        if chosen is None:
            rows.append((t, np.nan, np.nan, pd.NaT, rule))
        else:
            rec = by_date[chosen].loc[t]
            rows.append((t, rec["name"], rec["sector"], chosen, rule))
    out = pd.DataFrame(rows, columns=["ticker", "name", "sector", "sector_as_of", "sector_rule"])
    out["sector_as_of"] = pd.to_datetime(out["sector_as_of"]).astype("datetime64[ns]")
    return out


def window_cutoffs(windows: Iterable[dict[str, Any]]) -> list[pd.Timestamp]:
    """Cutoff date (start - 1 day) of each stock window config."""
    return sorted({_to_day(w["start"]) - pd.Timedelta(days=1) for w in windows})


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
