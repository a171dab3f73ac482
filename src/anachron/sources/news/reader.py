"""The ``news`` reader: dated headlines from a snapshot's publisher files (:mod:`anachron.sources.news`)."""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import utc_now
from anachron.sources.base import SourceError, SourceReader, find_snapshot_files, read_csv_checked
from anachron.sources.news.headlines import SKIP_UNKNOWN_FILE, finish_news, parse_news_file
from anachron.sources.news.publishers import LAYOUTS, source_of_file

log = logging.getLogger(__name__)

#: Source name (provenance records).
SOURCE = "news"
#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "news/*.csv"


class NewsReader(SourceReader):
    """Dated headlines from ``<snapshot_dir>/news/*.csv`` (snapshot only; see
    :mod:`anachron.sources.news`).

    Parameters
    ----------
    sources:
        Publisher keys to read (subset of :data:`~anachron.sources.news.publishers.LAYOUTS`);
        ``None`` reads every recognised file.
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
        """Load, parse and de-duplicate the headline files; see :mod:`anachron.sources.news`."""
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

    Returns ``(headlines, manifest)``: :data:`~anachron.sources.news.headlines.NEWS_COLUMNS`
    rows (:mod:`anachron.sources.news`) and
    ``{"sources": [per-file records], "skipped_by_reason": {...}, "rows": n,
    "rows_by_source": {...}, "fetched_at": ...}``.

    Raises:
        SourceError: in live mode (no snapshot directory) and for missing/malformed files,
            see :class:`NewsReader`.
    """
    return NewsReader(sources, session=session, snapshot_dir=snapshot_dir).fetch()
