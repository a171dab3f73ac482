"""The ``news`` headline table: titles cleaned, undated or empty rows dropped and counted,
repeats removed, and the document id of a headline."""

from __future__ import annotations

import hashlib
import html
import re
from collections import Counter
from typing import Any

import pandas as pd

from anachron.sources.news.publishers import LAYOUTS

#: Output columns, in order.
NEWS_COLUMNS = ["published_at", "title", "text", "source", "ticker"]

#: Skip reasons (manifest ``skipped_by_reason``; see :mod:`anachron.sources.news`).
SKIP_MISSING_DATE = "missing_date"
SKIP_BAD_DATE = "unparseable_date"
SKIP_EMPTY_TITLE = "empty_title"
SKIP_DUPLICATE = "duplicate"
SKIP_UNKNOWN_FILE = "unknown_file"

_WS = re.compile(r"\s+")


def clean_title(text: Any) -> str:
    """Decode HTML entities (also WSJ's ``&eacute`` without ``;``) and collapse whitespace."""
    return _WS.sub(" ", html.unescape(str(text))).strip()


def parse_news_file(raw: pd.DataFrame, source: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one publisher's raw table (all cells as strings) into :data:`NEWS_COLUMNS` rows.

    ``source`` is a key of :data:`~anachron.sources.news.publishers.LAYOUTS`. Rows without a
    date, with an unparseable date or with an empty title are dropped and added to ``counts``
    (reasons in :mod:`anachron.sources.news`); duplicates are *not* removed here (see
    :func:`finish_news`).

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
