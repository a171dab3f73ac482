"""Dated news headlines from snapshot CSV files (one file per publisher).

There is no free, dated, bulk news archive to fetch live, so this source reads snapshots
only: ``<snapshot_dir>/news/*.csv``. Live mode raises :class:`SourceError` (for retrieval over
live news use the hosted search backend, :class:`anachron.retrieval.search.LiveSearch`).

Each file is recognised by its name prefix and has its own columns and date format:

=====================  ==============================================  ============================================
prefix (``source``)    columns used                                    date format (example)
=====================  ==============================================  ============================================
``reuters``            ``Time, Headlines``                             ``Jul 18 2020`` (``%b %d %Y``)
``guardian``           ``Time, Headlines``                             ``18-Jul-20`` (``%d-%b-%y``)
``cnbc``               ``Headlines, Time, Description``                `` 7:51  PM ET Fri, 17 July 2020`` (the day
                                                                       after the comma; full or short month names,
                                                                       ``Sept`` accepted)
``wsj``                ``Date, Headline``                              ``1/26/12`` (``M/D/YY``; 69..99 -> 19xx)
``analyst_ratings``    ``title, date, stock``                          ``2020-06-05 10:30:00-04:00`` (the local
                                                                       calendar day, i.e. the first 10 characters)
``reddit``             ``published, title`` (``timestamp`` fallback)  ``November 16, 2021 12:51 AM`` (US Eastern
                                                                       as published; else the unix ``timestamp``
                                                                       converted to America/New_York)
=====================  ==============================================  ============================================

Output of :func:`fetch` / :meth:`NewsReader.read` (:data:`NEWS_COLUMNS`), one row per headline,
sorted by ``published_at, source, title``::

    published_at  str       ISO day "YYYY-MM-DD" the headline was published (publisher's local day)
    title         str       the headline, HTML entities decoded, whitespace collapsed
    text          str       the description where the file has one (CNBC), else ""
    source        str       the file's prefix: reuters, guardian, cnbc, wsj, analyst_ratings, reddit
    ticker        str|None  the stock ticker (S&P spelling) for analyst_ratings, else None

Excluded rows are counted by reason in the manifest's ``skipped_by_reason``:
``missing_date`` (empty date cell, e.g. a blank line or a headline broken over two lines),
``unparseable_date`` (a date cell that is not in the file's format, e.g. Guardian "18-Jul"
without a year), ``empty_title``, ``duplicate`` (same source, day and title as an earlier row).
Files whose name matches no known prefix are skipped and counted as ``unknown_file``.
"""

from __future__ import annotations

import hashlib
import html
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from anachron.io import utc_now
from anachron.sources.base import (
    SourceError,
    SourceReader,
    find_snapshot_files,
    normalize_ticker,
    read_csv_checked,
)

log = logging.getLogger(__name__)

SOURCE = "news"
SNAPSHOT_PATTERN = "news/*.csv"
#: Output columns, in order.
NEWS_COLUMNS = ["published_at", "title", "text", "source", "ticker"]

SKIP_MISSING_DATE = "missing_date"
SKIP_BAD_DATE = "unparseable_date"
SKIP_EMPTY_TITLE = "empty_title"
SKIP_DUPLICATE = "duplicate"
SKIP_UNKNOWN_FILE = "unknown_file"

_WS = re.compile(r"\s+")
_NEWS_TZ = "America/New_York"


def _strings(series: pd.Series) -> pd.Series:
    """A column as plain Python strings ("" for missing), stripped."""
    return series.astype(object).where(series.notna(), "").map(lambda v: str(v).strip())


def _parse_formats(values: pd.Series, formats: Iterable[str]) -> pd.Series:
    """Parse strings with the first matching format; ISO day strings, None where none matches."""
    out = pd.Series([None] * len(values), index=values.index, dtype=object)
    todo = values != ""
    for fmt in formats:
        if not todo.any():
            break
        parsed = pd.to_datetime(values[todo], format=fmt, errors="coerce")
        ok = parsed.notna()
        out.loc[parsed.index[ok]] = parsed[ok].dt.strftime("%Y-%m-%d").to_numpy()
        todo.loc[parsed.index[ok]] = False
    return out


def _iso_prefix(values: pd.Series) -> pd.Series:
    """The leading ``YYYY-MM-DD`` of timestamp strings with an offset (local day), validated."""
    head = values.str.slice(0, 10)
    parsed = pd.to_datetime(head.where(values.str.match(r"^\d{4}-\d{2}-\d{2}"), ""), format="%Y-%m-%d", errors="coerce")
    return parsed.dt.strftime("%Y-%m-%d").astype(object).where(parsed.notna(), None)


# -- per-publisher layouts ----------------------------------------------------------------------
# Each parser takes the raw string frame and returns (date_raw, published_at, title, text, ticker).


def _reuters_or_guardian(fmt: str) -> Callable[[pd.DataFrame], tuple]:
    def parse(raw: pd.DataFrame) -> tuple:
        date_raw = _strings(raw["Time"])
        return date_raw, _parse_formats(date_raw, [fmt]), _strings(raw["Headlines"]), None, None

    return parse


def _cnbc(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["Time"])
    day = date_raw.str.rsplit(",", n=1).str[-1].str.strip().str.replace(r"\bSept\b", "Sep", regex=True)
    published = _parse_formats(day.where(date_raw != "", ""), ["%d %B %Y", "%d %b %Y"])
    return date_raw, published, _strings(raw["Headlines"]), _strings(raw["Description"]), None


def _wsj(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["Date"])
    return date_raw, _parse_formats(date_raw, ["%m/%d/%y"]), _strings(raw["Headline"]), None, None


def _analyst_ratings(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["date"])
    ticker = _strings(raw["stock"]).map(lambda t: normalize_ticker(t) if t else None)
    return date_raw, _iso_prefix(date_raw), _strings(raw["title"]), None, ticker


def _reddit(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["published"])
    published = _parse_formats(date_raw, ["%B %d, %Y %I:%M %p"])
    if "timestamp" in raw.columns:
        stamp = _strings(raw["timestamp"])
        missing = published.isna() & (stamp != "")
        if missing.any():
            secs = pd.to_numeric(stamp[missing], errors="coerce")
            ts = pd.to_datetime(secs, unit="s", utc=True, errors="coerce").dt.tz_convert(_NEWS_TZ)
            ok = ts.notna()
            published.loc[ts.index[ok]] = ts[ok].dt.strftime("%Y-%m-%d").to_numpy()
        date_raw = date_raw.where(date_raw != "", stamp)
    return date_raw, published, _strings(raw["title"]), None, None


#: name prefix -> (required columns, parser). Order matters only for documentation.
LAYOUTS: dict[str, tuple[list[str], Callable[[pd.DataFrame], tuple]]] = {
    "reuters": (["Time", "Headlines"], _reuters_or_guardian("%b %d %Y")),
    "guardian": (["Time", "Headlines"], _reuters_or_guardian("%d-%b-%y")),
    "cnbc": (["Headlines", "Time", "Description"], _cnbc),
    "wsj": (["Date", "Headline"], _wsj),
    "analyst_ratings": (["title", "date", "stock"], _analyst_ratings),
    "reddit": (["published", "title"], _reddit),
}


def source_of_file(name: str) -> str | None:
    """The publisher key of a snapshot file name (``reuters_headlines_2018_2020.csv`` -> ``reuters``)."""
    low = name.lower()
    for prefix in sorted(LAYOUTS, key=len, reverse=True):
        if low.startswith(prefix):
            return prefix
    return None


def clean_title(text: Any) -> str:
    """Decode HTML entities (also WSJ's ``&eacute`` without ``;``) and collapse whitespace."""
    return _WS.sub(" ", html.unescape(str(text))).strip()


def parse_news_file(raw: pd.DataFrame, source: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one publisher's raw table (all cells as strings) into :data:`NEWS_COLUMNS` rows.

    ``source`` is a key of :data:`LAYOUTS`. Rows without a date, with an unparseable date or
    with an empty title are dropped and added to ``counts`` (reasons in the module docstring);
    duplicates are *not* removed here (see :func:`finish_news`).

    Raises ``KeyError`` for an unknown ``source``; column checks are the caller's job.
    """
    counts = counts if counts is not None else Counter()
    _, parser = LAYOUTS[source]
    date_raw, published, title, text, ticker = parser(raw)
    title = title.map(clean_title)
    n = len(raw)
    df = pd.DataFrame(
        {
            "published_at": published.to_numpy(dtype=object),
            "title": title.to_numpy(dtype=object),
            "text": (text.map(clean_title) if text is not None else pd.Series([""] * n, index=raw.index)).to_numpy(dtype=object),
            "source": [source] * n,
            "ticker": (ticker if ticker is not None else pd.Series([None] * n, index=raw.index)).to_numpy(dtype=object),
        }
    )
    no_date = (date_raw == "").to_numpy()
    bad_date = df["published_at"].isna().to_numpy() & ~no_date
    empty_title = (df["title"] == "").to_numpy() & ~no_date & ~bad_date
    counts[SKIP_MISSING_DATE] += int(no_date.sum())
    counts[SKIP_BAD_DATE] += int(bad_date.sum())
    counts[SKIP_EMPTY_TITLE] += int(empty_title.sum())
    return df.loc[~(no_date | bad_date | empty_title)].reset_index(drop=True)


def finish_news(df: pd.DataFrame, counts: Counter | None = None) -> pd.DataFrame:
    """Drop repeats of (source, published_at, title) (counted as ``duplicate``) and sort."""
    counts = counts if counts is not None else Counter()
    dup = df.duplicated(["source", "published_at", "title"], keep="first")
    counts[SKIP_DUPLICATE] += int(dup.sum())
    out = df.loc[~dup].sort_values(["published_at", "source", "title"], kind="mergesort").reset_index(drop=True)
    for col in NEWS_COLUMNS:
        out[col] = out[col].astype(object)
    return out[NEWS_COLUMNS]


def news_doc_id(source: str, published_at: str, title: str) -> str:
    """A stable document id for a headline: ``news:<source>:<12 hex of sha1(day|title)>``."""
    digest = hashlib.sha1(f"{published_at}|{title}".encode("utf-8")).hexdigest()[:12]
    return f"news:{source}:{digest}"


class NewsReader(SourceReader):
    """Dated headlines from ``<snapshot_dir>/news/*.csv`` (snapshot only; see module docstring).

    Parameters
    ----------
    sources:
        Publisher keys to read (subset of :data:`LAYOUTS`); ``None`` reads every recognised file.
    session:
        Accepted for the common reader interface; unused (there is no live archive).
    snapshot_dir:
        Directory holding ``news/*.csv``; ``None`` falls back to ``$ANACHRON_SNAPSHOT_DIR``.

    After :meth:`read`: :attr:`manifest` (one record per file, with its kept rows, skip counts
    and date range) and :attr:`skipped_by_reason`.

    Raises :class:`SourceError` from :meth:`read` without a snapshot directory (live mode),
    when no file matches, when a file lacks a required column (naming file and column), or
    when ``sources`` names an unknown publisher.
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        sources: Iterable[str] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.sources = None if sources is None else [str(s) for s in sources]
        if self.sources is not None:
            unknown = sorted(set(self.sources) - set(LAYOUTS))
            if unknown:
                raise SourceError(f"news: unknown source(s) {', '.join(unknown)}; known: {', '.join(LAYOUTS)}.")
        self.skipped_by_reason: dict[str, int] = {}

    def _read_live(self, session: Any) -> pd.DataFrame:
        raise SourceError(
            "news: there is no free live archive of dated headlines, so this source reads snapshots only. "
            + self._hint()
            + " For retrieval over live news use the hosted search backend (anachron.retrieval.LiveSearch)."
        )

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        """Load, parse and de-duplicate the headline files; see the module docstring."""
        counts: Counter = Counter()
        frames = []
        for path in find_snapshot_files(snap, SNAPSHOT_PATTERN):
            source = source_of_file(path.name)
            if source is None:
                counts[SKIP_UNKNOWN_FILE] += 1
                log.warning("news: skipping %s (name matches none of %s)", path, ", ".join(LAYOUTS))
                continue
            if self.sources is not None and source not in self.sources:
                continue
            df, file_counts = self._read_file(path, source)
            counts.update(file_counts)
            frames.append(df)
        if not frames:
            raise SourceError(
                f"news: no headline file for {', '.join(self.sources or LAYOUTS)} under {str(snap / 'news')!r}. "
                + self._hint()
            )
        dup_counts: Counter = Counter()
        out = finish_news(pd.concat(frames, ignore_index=True), dup_counts)
        counts.update(dup_counts)
        self.skipped_by_reason = {k: int(v) for k, v in sorted(counts.items()) if v}
        return out

    def _read_file(self, path: Path, source: str) -> tuple[pd.DataFrame, dict[str, int]]:
        """One publisher's file: its rows, recorded with its skip counts; returns (rows, skip counts)."""
        required, _ = LAYOUTS[source]
        raw = read_csv_checked(path, required, name=str(path), dtype="str", keep_default_na=False)
        file_counts: Counter = Counter()
        df = parse_news_file(raw, source, file_counts)
        skipped = {k: int(v) for k, v in sorted(file_counts.items()) if v}
        self._record_file(
            path,
            len(df),
            publisher=source,
            source_rows=int(len(raw)),
            first_day=None if df.empty else str(df["published_at"].min()),
            last_day=None if df.empty else str(df["published_at"].max()),
            skipped_by_reason=skipped,
        )
        return df, skipped

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "rows": int(len(table)),
            "rows_by_source": {str(k): int(v) for k, v in table["source"].value_counts().sort_index().items()},
            "fetched_at": utc_now(),
        }


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    sources: Iterable[str] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``fetch_news`` entry point: every headline of the snapshot, and a manifest.

    Returns ``(headlines, manifest)``: :data:`NEWS_COLUMNS` rows (module docstring) and
    ``{"sources": [per-file records], "skipped_by_reason": {...}, "rows": n,
    "rows_by_source": {...}, "fetched_at": ...}``.

    Raises:
        SourceError: in live mode (no snapshot directory) and for missing/malformed files,
            see :class:`NewsReader`.
    """
    return NewsReader(sources, session=session, snapshot_dir=snapshot_dir).fetch()
